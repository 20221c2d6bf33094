"""Our counts reproduce published figures on the real FLORES-200 (Petrov et al., 2023).

"Language Model Tokenizers Introduce Unfairness Between Languages" counted FLORES-200
dev+devtest with one document per file; their script joined a trailing empty line per file,
hence the tolerance of 5 tokens.
"""

import pytest
from real_files import real_file, shared

from fertility import audit

PUBLISHED = {  # (encoding, language) -> tokens
    ("cl100k_base", "ben_Beng"): 308_325,
    ("cl100k_base", "eng_Latn"): 52_835,
    ("r50k_base", "ben_Beng"): 507_509,
    ("r50k_base", "eng_Latn"): 52_567,
}


@pytest.fixture(scope="module")
def flores_audit(tmp_path_factory):
    flores = shared("flores200")
    # only the two languages of the check, in FLORES' own split layout
    root = tmp_path_factory.mktemp("flores")
    for split in ("dev", "devtest"):
        (root / split).mkdir()
        for lang in ("ben_Beng", "eng_Latn"):
            (root / split / f"{lang}.txt").symlink_to(flores / split / f"{lang}.txt")
    return audit(["tiktoken:cl100k_base", str(real_file("gpt2.tiktoken"))], [root], doc_mode="file")


@pytest.mark.parametrize("key", sorted(PUBLISHED))
def test_token_counts_match_petrov_2023(flores_audit, key):
    measured = flores_audit.counts[key].n_tokens
    assert abs(measured - PUBLISHED[key]) <= 5, (key, measured)


def test_bengali_premium_is_the_published_one(flores_audit):
    counts = flores_audit.counts
    premium = counts[("cl100k_base", "ben_Beng")].n_tokens / counts[("cl100k_base", "eng_Latn")].n_tokens
    assert premium == pytest.approx(PUBLISHED[("cl100k_base", "ben_Beng")] / PUBLISHED[("cl100k_base", "eng_Latn")], rel=1e-3)
    assert counts[("cl100k_base", "ben_Beng")].n_docs == 2  # one document per file, dev and devtest
