"""count() and the ratios derived from Counts: each metric against an independent computation
on a tiny input, the ALL row as an exact micro-average, and hypothesis invariants per backend.
"""

from __future__ import annotations

import math
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from real_files import mistral_file
from reference import (
    SPM_FILE,
    cl100k_token_spans,
    raw_cl100k,
    raw_spm,
    split_words_reference,
    spm_token_spans,
    words_in_bytes,
)

import fertility
from fertility.audit import audit
from fertility.engine.count import count
from fertility.io.corpus import Document
from fertility.metrics.counts import ALL, Counts
from fertility.results.model import AuditResult


@cache
def load(spec: str):
    if spec == "spm":
        return fertility.load_tokenizer(str(mistral_file(SPM_FILE)))
    return fertility.load_tokenizer(spec)


def docs(lang: str, *texts: str) -> list[Document]:
    return [Document(lang, text, f"{lang}.txt", number) for number, text in enumerate(texts, 1)]


def one(tokenizer, text: str, lang: str = "xxx") -> Counts:
    return count(tokenizer, docs(lang, text))[lang]


# --- each metric on a hand-checkable text ---------------------------------------------------

# "ক্ষমা 🇧🇩 e\u0301", counted by hand:
#   ক্ষমা  = ক U+0995, ্ U+09CD, ষ U+09B7, ম U+09AE, া U+09BE: 5 chars x 3 bytes = 15 bytes;
#           graphemes: ক্ষ (consonant+virama+consonant joins, Unicode 15.1 rule GB9c) and
#           মা (vowel sign is a spacing mark, GB9a): 2
#   space  = 1 char, 1 byte, 1 grapheme (twice)
#   🇧🇩     = two regional indicators U+1F1E7 U+1F1E9: 2 chars x 4 bytes = 8 bytes; 1 grapheme
#   e\u0301 = e + combining acute: 2 chars, 1 + 2 = 3 bytes; 1 grapheme
#   total: chars 5+1+2+1+2 = 11, bytes 15+1+8+1+3 = 28, graphemes 2+1+1+1+1 = 6, words 3
HAND = "ক্ষমা 🇧🇩 e\u0301"


def test_units_by_hand():
    counts = one(load("bytes"), HAND)
    assert counts.n_docs == 1
    assert counts.n_bytes == 28
    assert counts.n_chars == 11
    assert counts.n_graphemes == 6
    assert counts.n_words == 3


def test_baselines_count_their_unit_by_hand():
    assert one(load("bytes"), HAND).n_tokens == 28
    assert one(load("chars"), HAND).n_tokens == 11
    assert one(load("graphemes"), HAND).n_tokens == 6


def test_family_emoji_is_one_grapheme():
    # 👩 ZWJ 👩 ZWJ 👧: 5 chars, 3 x 4 + 2 x 3 = 18 bytes, one cluster (GB11)
    counts = one(load("graphemes"), "👩\u200d👩\u200d👧")
    assert (counts.n_chars, counts.n_bytes, counts.n_graphemes, counts.n_tokens) == (5, 18, 1, 1)


@pytest.mark.parametrize("text, words", [
    ("", 0),
    ("   ", 0),
    ("one", 1),
    ("  two  words ", 2),
    ("tab\tnew\nline\r\nend", 4),
    ("no\u00a0break\u3000ideographic", 3),  # NBSP and U+3000 are whitespace
    ("我们都是好朋友", 1),  # unspaced script: one whitespace "word"
    ("a,b;c. d", 2),  # punctuation does not separate
])
def test_n_words_by_hand(text, words):
    assert one(load("chars"), text).n_words == words


def test_split_words_of_baselines_by_hand():
    text = "a bb ccc é e\u0301 ক্ষ"
    # bytes: words of >= 2 bytes: bb ccc é(2 bytes) e\u0301(3) ক্ষ(9) -> 5
    assert one(load("bytes"), text).n_split_words == 5
    # chars: words of >= 2 chars: bb ccc e\u0301 ক্ষ -> 4
    assert one(load("chars"), text).n_split_words == 4
    # graphemes: words of >= 2 clusters: bb ccc -> 2 (e\u0301 and ক্ষ are one cluster each)
    assert one(load("graphemes"), text).n_split_words == 2


CL100K_TEXTS = [
    "The antidisestablishmentarianism of tokenizers is unbelievable.",
    "আমি বাংলায় গান গাই।",
    "Party 🎉👩‍👩‍👧 time 🇧🇩! <|endoftext|> is text",
    "  leading and trailing spaces  ",
    "我们都是好朋友 今天 天气很好",
]


@pytest.mark.parametrize("text", CL100K_TEXTS)
def test_cl100k_tokens_and_split_words_independently(text):
    counts = one(load("tiktoken:cl100k_base"), text)
    spans = cl100k_token_spans(text)
    assert counts.n_tokens == len(raw_cl100k().encode_ordinary(text)) == len(spans)
    assert counts.n_words == len(words_in_bytes(text))
    assert counts.n_split_words == split_words_reference(text, spans)


def test_cl100k_split_words_are_meaningful():
    """The reference is not trivially 0 or n_words on these texts."""
    english = one(load("tiktoken:cl100k_base"), CL100K_TEXTS[0])
    bengali = one(load("tiktoken:cl100k_base"), CL100K_TEXTS[1])
    assert 0 < english.n_split_words < english.n_words
    assert bengali.n_split_words == bengali.n_words == 4


# --- ratios ---------------------------------------------------------------------------------

def result_of(counts: dict[str, Counts], scripts: dict[str, str], name: str = "tok") -> AuditResult:
    return AuditResult(signature={}, tokenizers=(name,), scripts=scripts,
                       counts={(name, lang): c for lang, c in counts.items()})


def row(frame, lang):
    [index] = frame.index[frame["lang"] == lang].tolist()
    return frame.loc[index]


def test_ratios_of_one_language_by_hand():
    counts = Counts(n_docs=1, n_bytes=28, n_chars=11, n_graphemes=6, n_words=3, n_tokens=7,
                    n_split_words=2)
    frame = result_of({"ben_Beng": counts}, {"ben_Beng": "Beng"}).to_frame()
    assert frame["lang"].tolist() == ["ben_Beng", ALL]
    for lang in ("ben_Beng", ALL):
        r = row(frame, lang)
        assert r["chars_per_token"] == pytest.approx(11 / 7)
        assert r["bytes_per_token"] == pytest.approx(4.0)
        assert r["graphemes_per_token"] == pytest.approx(6 / 7)
        assert r["tokens_per_word"] == pytest.approx(7 / 3)
        assert r["split_word_share"] == pytest.approx(2 / 3)
        assert r["n_tokens"] == 7 and r["n_bytes"] == 28


def test_ratios_from_count_on_a_real_tokenizer():
    text = CL100K_TEXTS[0]
    counts = count(load("tiktoken:cl100k_base"), docs("eng_Latn", text))
    r = row(result_of(counts, {"eng_Latn": "Latn"}).to_frame(), "eng_Latn")
    n_tokens = len(raw_cl100k().encode_ordinary(text))
    words = len(text.split())
    assert r["chars_per_token"] == pytest.approx(len(text) / n_tokens)
    assert r["bytes_per_token"] == pytest.approx(len(text.encode()) / n_tokens)
    assert r["graphemes_per_token"] == pytest.approx(len(text) / n_tokens)  # ASCII only
    assert r["tokens_per_word"] == pytest.approx(n_tokens / words)
    assert r["split_word_share"] == pytest.approx(
        split_words_reference(text, cl100k_token_spans(text)) / words)


def test_all_row_is_a_micro_average_and_word_ratios_skip_unspaced_scripts():
    counts = {
        "eng_Latn": Counts(n_docs=2, n_bytes=100, n_chars=100, n_graphemes=100, n_words=20,
                           n_tokens=25, n_split_words=5),
        "ben_Beng": Counts(n_docs=3, n_bytes=140, n_chars=50, n_graphemes=40, n_words=10,
                           n_tokens=50, n_split_words=8),
        "zho_Hans": Counts(n_docs=1, n_bytes=90, n_chars=30, n_graphemes=30, n_words=2,
                           n_tokens=20, n_split_words=1),
    }
    scripts = {"eng_Latn": "Latn", "ben_Beng": "Beng", "zho_Hans": "Hans"}
    frame = result_of(counts, scripts).to_frame()
    assert frame["lang"].tolist() == ["ben_Beng", "eng_Latn", "zho_Hans", ALL]
    zho = row(frame, "zho_Hans")
    assert math.isnan(zho["tokens_per_word"]) and math.isnan(zho["split_word_share"])
    assert zho["chars_per_token"] == pytest.approx(30 / 20)
    every = row(frame, ALL)
    assert every["n_docs"] == 6 and every["n_tokens"] == 95 and every["n_words"] == 32
    assert every["chars_per_token"] == pytest.approx(180 / 95)
    assert every["bytes_per_token"] == pytest.approx(330 / 95)
    assert every["graphemes_per_token"] == pytest.approx(170 / 95)
    # word ratios over eng and ben only: (25 + 50) / (20 + 10), (5 + 8) / (20 + 10)
    assert every["tokens_per_word"] == pytest.approx(75 / 30)
    assert every["split_word_share"] == pytest.approx(13 / 30)
    # and not the mean of the per-language ratios
    mean_cpt = (100 / 25 + 50 / 50 + 30 / 20) / 3
    assert every["chars_per_token"] != pytest.approx(mean_cpt)
    assert every["tokens_per_word"] != pytest.approx((25 / 20 + 50 / 10) / 2)


def test_zero_denominators_give_nan_not_zero():
    counts = {
        "eng_Latn": Counts(n_docs=1, n_bytes=5, n_chars=5, n_graphemes=5, n_words=0, n_tokens=0),
        "tha_Thai": Counts(),
    }
    frame = result_of(counts, {"eng_Latn": "Latn", "tha_Thai": "Thai"}).to_frame()
    for lang in ("eng_Latn", "tha_Thai", ALL):
        r = row(frame, lang)
        for column in ("chars_per_token", "bytes_per_token", "graphemes_per_token",
                       "tokens_per_word", "split_word_share"):
            assert math.isnan(r[column]), (lang, column)


def test_all_row_with_only_unspaced_languages_has_nan_word_ratios():
    counts = {"zho_Hans": Counts(n_docs=1, n_bytes=9, n_chars=3, n_graphemes=3, n_words=1,
                                 n_tokens=2, n_split_words=1)}
    every = row(result_of(counts, {"zho_Hans": "Hans"}).to_frame(), ALL)
    assert math.isnan(every["tokens_per_word"]) and math.isnan(every["split_word_share"])
    assert every["chars_per_token"] == pytest.approx(1.5)


def test_audit_on_a_tiny_corpus_folder(tmp_path):
    (tmp_path / "eng_Latn.txt").write_text("a bb c\n\nddd\n", encoding="utf-8")
    (tmp_path / "zho_Hans.txt").write_text("我们好\n", encoding="utf-8")
    frame = audit(["bytes"], [tmp_path]).to_frame()
    eng, zho, every = row(frame, "eng_Latn"), row(frame, "zho_Hans"), row(frame, ALL)
    # eng: docs "a bb c" and "ddd": 6 + 3 bytes and chars, 4 words, 2 of them >= 2 bytes
    assert (eng["n_docs"], eng["n_bytes"], eng["n_chars"], eng["n_words"], eng["n_tokens"],
            eng["n_split_words"]) == (2, 9, 9, 4, 9, 2)
    assert eng["tokens_per_word"] == pytest.approx(9 / 4)
    assert eng["split_word_share"] == pytest.approx(2 / 4)
    # zho: 3 Han characters of 3 bytes each; no word ratios in an unspaced script
    assert (zho["n_bytes"], zho["n_chars"], zho["n_graphemes"], zho["n_tokens"]) == (9, 3, 3, 9)
    assert zho["chars_per_token"] == pytest.approx(3 / 9)
    assert math.isnan(zho["tokens_per_word"])
    # ALL: bytes/token of the bytes baseline is exactly 1; chars 12 over 18 tokens;
    # tokens per word from eng only
    assert every["bytes_per_token"] == 1.0
    assert every["chars_per_token"] == pytest.approx(12 / 18)
    assert every["tokens_per_word"] == pytest.approx(9 / 4)
    assert every["split_word_share"] == pytest.approx(2 / 4)


# --- count() mechanics ----------------------------------------------------------------------

def test_languages_come_in_first_seen_order_and_sum_per_language():
    documents = [*docs("zzz", "x"), *docs("aaa", "yy"), *docs("zzz", "zzz")]
    counts = count(load("bytes"), documents)
    assert list(counts) == ["zzz", "aaa"]
    assert counts["zzz"].n_docs == 2 and counts["zzz"].n_bytes == 4 and counts["zzz"].n_tokens == 4
    assert counts["aaa"].n_docs == 1 and counts["aaa"].n_tokens == 2


@pytest.mark.parametrize("spec", ["bytes", "tiktoken:cl100k_base"])
def test_batches_and_progress(spec):
    texts = [f"document {i} আমি {'x' * (i % 7)}" for i in range(1030)]
    documents = [Document("eng" if i % 3 else "ben", t, "f", i) for i, t in enumerate(texts)]
    advanced = []
    together = count(load(spec), documents, advance=advanced.append)
    # progress counts bytes (issue 8, item 9), chunk by chunk
    assert sum(advanced) == sum(len(t.encode()) for t in texts) and len(advanced) >= 1
    if spec == "bytes":
        expected = {lang: sum(len(d.text.encode()) for d in documents if d.lang == lang)
                    for lang in ("ben", "eng")}
    else:
        expected = {lang: sum(len(raw_cl100k().encode_ordinary(d.text)) for d in documents
                              if d.lang == lang) for lang in ("ben", "eng")}
    assert {lang: c.n_tokens for lang, c in together.items()} == expected


# --- hypothesis invariants ------------------------------------------------------------------

ALPHABET = [
    *"abzXYZ019.,'!?-<|>_", " ", "\t", "\n", "\r", "\u00a0", "\u3000",
    *"অআকখগষমলয়ািীুংঃ্।", *"क्षि", *"我们的好中文，。", *"あいカ", *"한국어", *"مرحبا", *"สวัสดี",
    *"🎉😀👩👧", "\u200d", "\u200c", "\U0001F3FD", "\ufe0f", "\U0001F1E7", "\U0001F1E9",
    "\u0301", "\u0308", "\u20dd", "𝔘", "𐍈", "\x00",
]
texts = st.text(alphabet=st.sampled_from(ALPHABET), max_size=40)
documents_strategy = st.lists(st.tuples(st.sampled_from(["eng", "ben", "zho"]), texts),
                              min_size=1, max_size=8)
BACKENDS = ["bytes", "chars", "graphemes", "tiktoken:cl100k_base", "spm"]
HYPOTHESIS = settings(max_examples=50, deadline=None,
                      suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.mark.parametrize("spec", BACKENDS)
@HYPOTHESIS
@given(text=texts)
def test_unit_counts_are_ordered_and_exact(spec, text):
    counts = one(load(spec), text)
    assert counts.n_bytes == len(text.encode("utf-8"))
    assert counts.n_chars == len(text)
    assert counts.n_graphemes <= counts.n_chars <= counts.n_bytes
    assert counts.n_words == len(text.split())
    assert 0 <= counts.n_split_words <= counts.n_words
    if spec == "bytes":
        assert counts.n_tokens == counts.n_bytes
    elif spec == "chars":
        assert counts.n_tokens == counts.n_chars
    elif spec == "graphemes":
        assert counts.n_tokens == counts.n_graphemes
    elif spec == "tiktoken:cl100k_base":
        assert counts.n_tokens == len(raw_cl100k().encode_ordinary(text))
    else:
        assert counts.n_tokens == len(raw_spm().encode(text))


@pytest.mark.parametrize("spec", BACKENDS)
@HYPOTHESIS
@given(pairs=documents_strategy)
def test_counting_apart_and_summing_equals_counting_together(spec, pairs):
    tokenizer = load(spec)
    documents = [Document(lang, text, "f", i) for i, (lang, text) in enumerate(pairs, 1)]
    together = count(tokenizer, documents)
    apart: dict[str, Counts] = {}
    for doc in documents:
        single = count(tokenizer, [doc])[doc.lang]
        apart[doc.lang] = apart.get(doc.lang, Counts()) + single
    assert together == apart
    assert sum(c.n_docs for c in together.values()) == len(documents)


@pytest.mark.parametrize("spec", ["tiktoken:cl100k_base", "spm"])
@HYPOTHESIS
@given(text=texts)
def test_split_words_match_a_plain_loop(spec, text):
    spans = cl100k_token_spans(text) if spec.startswith("tiktoken") else spm_token_spans(text)
    counts = one(load(spec), text)
    assert counts.n_tokens == len(spans)
    assert counts.n_split_words == split_words_reference(text, spans)


@HYPOTHESIS
@given(text=texts)
def test_bytes_baseline_split_words_are_multibyte_words(text):
    counts = one(load("bytes"), text)
    assert counts.n_split_words == sum(1 for word in text.split() if len(word.encode()) >= 2)
