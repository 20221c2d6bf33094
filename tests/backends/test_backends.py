"""Backends on real tokenizer files: loading by content and by scheme, counts equal to the raw
libraries', no padding/truncation/special tokens, byte spans, the hub cache, and bad inputs.

Every expected count comes from calling the tokenizer's own library directly (tiktoken,
tokenizers, sentencepiece, mistral-common) or from a hand count on a tiny text.
"""

from __future__ import annotations

import base64
import random
import shutil
from functools import cache
from pathlib import Path

import pytest
import sentencepiece
import tiktoken
import tokenizers
from real_files import mistral_file, real_file
from reference import raw_cl100k

import fertility
from fertility.errors import TokenizerError

# The split pattern Whisper's own tokenizer uses with gpt2.tiktoken and multilingual.tiktoken
# (openai-whisper, whisper/tokenizer.py), copied from there rather than from our patterns module.
WHISPER_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

ENGLISH = "The quick brown fox jumps over the lazy dog."
BENGALI = "আমি বাংলায় গান গাই।"
CHINESE = "我们都是好朋友，今天天气很好。"
EMOJI = "Party 🎉👩‍👩‍👧 time 🇧🇩!"
SENTENCES = [ENGLISH, BENGALI, CHINESE, EMOJI]
# Extended grapheme clusters counted by hand:
#   ENGLISH: 44 ASCII characters, one cluster each.
#   BENGALI: আ|মি ' ' বাং|লা|য় ' ' গা|ন ' ' গা|ই|।  -> 2+1+3+1+2+1+3 = 13
#            (া ি ং are spacing marks, ় a nukta: each stays with its base letter)
#   CHINESE: 15 Han characters and punctuation, one cluster each.
#   EMOJI:   P a r t y ' ' 🎉 👩‍👩‍👧 ' ' t i m e ' ' 🇧🇩 !  -> 16 (ZWJ family and flag are one each)
HAND_GRAPHEMES = {ENGLISH: 44, BENGALI: 13, CHINESE: 15, EMOJI: 16}


# --- raw references -----------------------------------------------------------------------

def parse_tiktoken_file(path: Path) -> dict[bytes, int]:
    """A .tiktoken file read by hand: `base64-token rank` per line."""
    ranks = {}
    for line in path.read_bytes().splitlines():
        if line.strip():
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


@cache
def raw_tiktoken_file(path: Path) -> tiktoken.Encoding:
    return tiktoken.Encoding(name=f"raw-{path.name}", pat_str=WHISPER_PATTERN,
                             mergeable_ranks=parse_tiktoken_file(path), special_tokens={})




def raw_hf(path: Path) -> tokenizers.Tokenizer:
    tokenizer = tokenizers.Tokenizer.from_file(str(path))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    tokenizer.encode_special_tokens = True
    return tokenizer


@cache
def raw_spm(path: Path) -> sentencepiece.SentencePieceProcessor:
    return sentencepiece.SentencePieceProcessor(model_file=str(path))


@cache
def raw_tekken(path: Path):
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer
    return Tekkenizer.from_file(str(path))


def ref_gpt2(text):
    return len(raw_tiktoken_file(real_file("gpt2.tiktoken")).encode_ordinary(text))


def ref_multilingual(text):
    return len(raw_tiktoken_file(real_file("multilingual.tiktoken")).encode_ordinary(text))


def ref_cl100k(text):
    return len(raw_cl100k().encode_ordinary(text))


def ref_minilm(text):
    return len(raw_hf(real_file("minilm/tokenizer.json")).encode(text, add_special_tokens=False).ids)


def ref_spm(text):
    return len(raw_spm(mistral_file("mistral_instruct_tokenizer_240323.model.v3")).encode(text))


def ref_tekken(text):
    return len(raw_tekken(mistral_file("tekken_240911.json")).encode(text, bos=False, eos=False))


def ref_bytes(text):
    return len(text.encode("utf-8"))


def ref_chars(text):
    return len(text)


def ref_graphemes(text):
    return HAND_GRAPHEMES[text]


# --- specs --------------------------------------------------------------------------------

def spm_path():
    return mistral_file("mistral_instruct_tokenizer_240323.model.v3")


def tekken_path():
    return mistral_file("tekken_240911.json")


def minilm_path():
    return real_file("minilm/tokenizer.json")


def spm_dir(tmp_path):
    folder = tmp_path / "spm_folder"
    folder.mkdir()
    shutil.copy(spm_path(), folder / "tokenizer.model.v3")
    return folder


# id -> (make spec from tmp_path, backend expected in info(), reference counter)
SPECS = {
    "hf-file-sniffed": (lambda tmp: str(minilm_path()), "hf", ref_minilm),
    "hf-dir-sniffed": (lambda tmp: str(minilm_path().parent), "hf", ref_minilm),
    "spm-model.v3-sniffed": (lambda tmp: str(spm_path()), "spm", ref_spm),
    "spm-dir-sniffed": (lambda tmp: str(spm_dir(tmp)), "spm", ref_spm),
    "gpt2.tiktoken-sniffed": (lambda tmp: str(real_file("gpt2.tiktoken")), "tiktoken", ref_gpt2),
    "multilingual.tiktoken-sniffed": (lambda tmp: str(real_file("multilingual.tiktoken")), "tiktoken",
                                      ref_multilingual),
    "tekken-sniffed": (lambda tmp: str(tekken_path()), "tekken", ref_tekken),
    "hf:file": (lambda tmp: f"hf:{minilm_path()}", "hf", ref_minilm),
    "hf:dir": (lambda tmp: f"hf:{minilm_path().parent}", "hf", ref_minilm),
    "spm:file": (lambda tmp: f"spm:{spm_path()}", "spm", ref_spm),
    "tiktoken:file": (lambda tmp: f"tiktoken:{real_file('gpt2.tiktoken')}", "tiktoken", ref_gpt2),
    "tekken:file": (lambda tmp: f"tekken:{tekken_path()}", "tekken", ref_tekken),
    "tiktoken:cl100k_base": (lambda tmp: "tiktoken:cl100k_base", "tiktoken", ref_cl100k),
    "bytes": (lambda tmp: "bytes", "baseline", ref_bytes),
    "chars": (lambda tmp: "chars", "baseline", ref_chars),
    "graphemes": (lambda tmp: "graphemes", "baseline", ref_graphemes),
}


def n_tokens(tokenizer, texts):
    return [len(starts) for starts, *_ in tokenizer.encode(texts)]


@pytest.mark.parametrize("case", list(SPECS))
def test_every_format_loads_and_counts_like_its_library(case, tmp_path):
    make_spec, backend, reference = SPECS[case]
    tokenizer = fertility.load_tokenizer(make_spec(tmp_path))
    assert isinstance(tokenizer, fertility.Tokenizer)
    assert tokenizer.info()["backend"] == backend
    expected = [reference(text) for text in SENTENCES]
    assert n_tokens(tokenizer, SENTENCES) == expected
    # one at a time gives the same as a batch
    assert [n_tokens(tokenizer, [text])[0] for text in SENTENCES] == expected


def test_known_tiktoken_files_get_their_published_pattern():
    gpt2 = fertility.load_tokenizer(str(real_file("gpt2.tiktoken")))
    whisper = fertility.load_tokenizer(str(real_file("multilingual.tiktoken")))
    cl100k = fertility.load_tokenizer("tiktoken:cl100k_base")
    assert gpt2.info()["pattern"] == "r50k_base"
    assert whisper.info()["pattern"] == "whisper_multilingual"
    assert cl100k.info()["pattern"] == "cl100k_base"


# --- padding / truncation trap ------------------------------------------------------------

def test_minilm_ships_with_padding_and_truncation_on():
    """The precondition of the trap: the raw file pads and truncates to 128."""
    shipped = tokenizers.Tokenizer.from_file(str(minilm_path()))
    assert shipped.padding is not None and shipped.padding["length"] == 128
    assert shipped.truncation is not None and shipped.truncation["max_length"] == 128
    assert len(shipped.encode("hello").ids) == 128


def test_minilm_long_text_is_not_truncated():
    text = "hello world " * 100  # "hello" and "world" are one WordPiece each: 200 tokens
    tokenizer = fertility.load_tokenizer(str(minilm_path()))
    assert n_tokens(tokenizer, [text]) == [200]
    assert ref_minilm(text) == 200


def test_minilm_short_text_is_not_padded():
    tokenizer = fertility.load_tokenizer(str(minilm_path()))
    assert n_tokens(tokenizer, ["hello", "hello world"]) == [1, 2]
    # also within a batch next to a long text (batch padding would equalise them)
    assert n_tokens(tokenizer, ["hello", "hello world " * 100]) == [1, 200]


def test_minilm_info_reports_padding_and_truncation_disabled():
    info = fertility.load_tokenizer(str(minilm_path())).info()
    assert info["padding"] == "disabled"
    assert info["truncation"] == "disabled"


# --- special tokens -----------------------------------------------------------------------

@pytest.mark.parametrize("spec, reference", [
    (lambda: "tiktoken:cl100k_base", ref_cl100k),
    (lambda: str(real_file("gpt2.tiktoken")), ref_gpt2),
    (lambda: str(tekken_path()), ref_tekken),
], ids=["cl100k", "gpt2", "tekken"])
def test_tiktoken_endoftext_in_text_is_ordinary_text(spec, reference):
    text = "before<|endoftext|>after"
    tokenizer = fertility.load_tokenizer(spec())
    [count] = n_tokens(tokenizer, [text])
    assert count == reference(text)
    assert count > 1 + 2  # "<|endoftext|>" alone is several ordinary tokens
    assert n_tokens(tokenizer, ["<|endoftext|>"])[0] > 1


def test_cl100k_endoftext_matches_encode_ordinary_not_special():
    encoding = raw_cl100k()
    text = "<|endoftext|>"
    special = encoding.encode(text, allowed_special="all")
    assert special == [encoding.eot_token]  # what a careless backend would count
    tokenizer = fertility.load_tokenizer("tiktoken:cl100k_base")
    starts, ends, *_ = tokenizer.encode([text])[0]
    assert len(starts) == len(encoding.encode_ordinary(text)) > 1
    assert int(ends[-1]) == len(text)


def test_spm_adds_no_bos_eos():
    processor = raw_spm(spm_path())
    tokenizer = fertility.load_tokenizer(str(spm_path()))
    for text in SENTENCES:
        with_bos_eos = processor.encode(text, add_bos=True, add_eos=True)
        assert with_bos_eos[0] == processor.bos_id() and with_bos_eos[-1] == processor.eos_id()
        assert n_tokens(tokenizer, [text]) == [len(with_bos_eos) - 2]
    # BOS and EOS have no text: every counted piece starts inside the text
    starts, ends, *_ = tokenizer.encode([ENGLISH])[0]
    assert int(starts[0]) == 0 and int(ends[-1]) == len(ENGLISH.encode())


def test_hf_typed_cls_is_text_not_the_special_token():
    path = minilm_path()
    text = "[CLS] hello [SEP] world"
    reference = raw_hf(path).encode(text, add_special_tokens=False)
    cls_id, sep_id = raw_hf(path).token_to_id("[CLS]"), raw_hf(path).token_to_id("[SEP]")
    assert cls_id not in reference.ids and sep_id not in reference.ids
    # what recognising them would give: "[CLS]" and "[SEP]" one token each
    recognising = tokenizers.Tokenizer.from_file(str(path))
    recognising.no_padding()
    recognising.no_truncation()
    recognised = recognising.encode(text, add_special_tokens=False).ids
    assert cls_id in recognised and sep_id in recognised
    tokenizer = fertility.load_tokenizer(str(path))
    [count] = n_tokens(tokenizer, [text])
    assert count == len(reference.ids)
    assert count > len(recognised)


def test_hf_adds_no_cls_sep():
    path = minilm_path()
    tokenizer = fertility.load_tokenizer(str(path))
    with_special = raw_hf(path).encode("hello world", add_special_tokens=True).tokens
    assert with_special == ["[CLS]", "hello", "world", "[SEP]"]
    assert n_tokens(tokenizer, ["hello world"]) == [2]
    starts, ends, *_ = tokenizer.encode(["hello world"])[0]
    assert list(zip(starts.tolist(), ends.tolist())) == [(0, 5), (6, 11)]


# --- token spans --------------------------------------------------------------------------

SPAN_TEXTS = [*SENTENCES, "", " ", "a\r\n\tb  ", "é" * 5, "🇧🇩🇧🇩", "ক্ষমা করো", "x" * 1000]


@pytest.mark.parametrize("spec", [
    lambda: "tiktoken:cl100k_base",
    lambda: str(real_file("gpt2.tiktoken")),
    lambda: str(tekken_path()),
    lambda: "bytes",
], ids=["cl100k", "gpt2", "tekken", "bytes"])
def test_spans_are_contiguous_and_cover_the_utf8_bytes(spec):
    tokenizer = fertility.load_tokenizer(spec())
    for text, (starts, ends, *_) in zip(SPAN_TEXTS, tokenizer.encode(SPAN_TEXTS)):
        size = len(text.encode("utf-8"))
        if size == 0:
            assert len(starts) == len(ends) == 0
            continue
        assert int(starts[0]) == 0
        assert int(ends[-1]) == size
        assert (starts[1:] == ends[:-1]).all()
        assert (ends > starts).all()


def test_cl100k_spans_are_the_token_bytes():
    encoding = raw_cl100k()
    tokenizer = fertility.load_tokenizer("tiktoken:cl100k_base")
    for text, (starts, ends, *_) in zip(SENTENCES, tokenizer.encode(SENTENCES)):
        data = text.encode("utf-8")
        pieces = [data[s:e] for s, e in zip(starts.tolist(), ends.tolist())]
        assert pieces == [encoding.decode_single_token_bytes(t) for t in encoding.encode_ordinary(text)]


def test_bytes_baseline_spans_by_hand():
    starts, ends, *_ = fertility.load_tokenizer("bytes").encode(["aé"])[0]
    assert starts.tolist() == [0, 1, 2] and ends.tolist() == [1, 2, 3]


# --- unknown .tiktoken file ---------------------------------------------------------------

@pytest.fixture
def unknown_tiktoken(tmp_path):
    lines = real_file("gpt2.tiktoken").read_bytes().splitlines(keepends=True)[:300]
    path = tmp_path / "subset.tiktoken"
    path.write_bytes(b"".join(lines))
    return path


def test_unknown_tiktoken_file_needs_a_pattern(unknown_tiktoken):
    with pytest.raises(TokenizerError) as err:
        fertility.load_tokenizer(str(unknown_tiktoken))
    message = str(err.value)
    assert "--pattern" in message
    assert str(unknown_tiktoken) in message
    assert "\n" not in message


def test_unknown_tiktoken_file_loads_with_pattern(unknown_tiktoken):
    tokenizer = fertility.load_tokenizer(str(unknown_tiktoken), pattern="gpt2")
    assert tokenizer.info()["pattern"] == "gpt2"
    reference = tiktoken.Encoding(name="subset", pat_str=WHISPER_PATTERN,
                                  mergeable_ranks=parse_tiktoken_file(unknown_tiktoken),
                                  special_tokens={})
    assert reference.n_vocab == 300
    expected = [len(reference.encode_ordinary(text)) for text in SENTENCES]
    assert n_tokens(tokenizer, SENTENCES) == expected
    # 256 byte tokens and 44 merges: far more tokens than with the full vocabulary
    assert expected[0] > ref_gpt2(ENGLISH)
    # the explicit scheme takes the pattern too
    explicit = fertility.load_tokenizer(f"tiktoken:{unknown_tiktoken}", pattern="gpt2")
    assert n_tokens(explicit, SENTENCES) == expected


# --- the Hugging Face hub cache -----------------------------------------------------------

REPO_ID = "sentence-transformers/all-MiniLM-L6-v2"
COMMIT = "c9745ed1d9f207416be6d2e6f8de32d1f16199bf"


def make_hub_cache(root: Path, *, symlink: bool) -> Path:
    """A cache tree as huggingface_hub lays it out; returns the snapshot's tokenizer.json."""
    repo = root / ("models--" + REPO_ID.replace("/", "--"))
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(COMMIT)
    snapshot = repo / "snapshots" / COMMIT
    snapshot.mkdir(parents=True)
    target = snapshot / "tokenizer.json"
    if symlink:  # what huggingface_hub does on POSIX: snapshot files link into blobs/
        (repo / "blobs").mkdir()
        blob = repo / "blobs" / "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
        shutil.copy(minilm_path(), blob)
        target.symlink_to(Path("..") / ".." / "blobs" / blob.name)
    else:
        shutil.copy(minilm_path(), target)
    return target


def check_layout_with_huggingface_hub(root: Path, expected: Path):
    huggingface_hub = pytest.importorskip("huggingface_hub")
    found = huggingface_hub.try_to_load_from_cache(REPO_ID, "tokenizer.json", cache_dir=root)
    assert found is not None and Path(found) == expected


def test_hf_hub_cache_is_found(tmp_path, monkeypatch):
    root = tmp_path / "hub"
    target = make_hub_cache(root, symlink=False)
    check_layout_with_huggingface_hub(root, target)
    monkeypatch.setenv("HF_HUB_CACHE", str(root))
    tokenizer = fertility.load_tokenizer(f"hf:{REPO_ID}")
    assert Path(tokenizer.info()["source"]) == target
    assert tokenizer.name == REPO_ID
    assert n_tokens(tokenizer, SENTENCES) == [ref_minilm(text) for text in SENTENCES]
    assert tokenizer.info()["padding"] == "disabled"


def test_hf_hub_cache_with_blob_symlinks_is_found(tmp_path, monkeypatch):
    root = tmp_path / "hub"
    target = make_hub_cache(root, symlink=True)
    check_layout_with_huggingface_hub(root, target)
    monkeypatch.setenv("HF_HUB_CACHE", str(root))
    tokenizer = fertility.load_tokenizer(f"hf:{REPO_ID}")
    assert n_tokens(tokenizer, SENTENCES) == [ref_minilm(text) for text in SENTENCES]


def test_hf_hub_cache_with_blob_symlinks_is_named_after_the_repo(tmp_path, monkeypatch):
    """Regression: resolving the snapshot symlink used to name the tokenizer 'blobs'."""
    root = tmp_path / "hub"
    make_hub_cache(root, symlink=True)
    monkeypatch.setenv("HF_HUB_CACHE", str(root))
    assert fertility.load_tokenizer(f"hf:{REPO_ID}").name == REPO_ID


def test_hf_hub_id_not_in_cache_names_the_id(tmp_path, monkeypatch):
    root = tmp_path / "hub"
    make_hub_cache(root, symlink=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(root))
    with pytest.raises(TokenizerError) as err:
        fertility.load_tokenizer("hf:someone/not-cached-model")
    message = str(err.value)
    assert "someone/not-cached-model" in message
    assert str(root) in message
    assert "\n" not in message


# --- bad inputs ---------------------------------------------------------------------------

def _missing(tmp):
    return tmp / "does-not-exist" / "tokenizer.json"


def _empty(tmp):
    path = tmp / "empty.json"
    path.write_bytes(b"")
    return path


def _random_binary(tmp):
    path = tmp / "random.bin"
    path.write_bytes(random.Random(0).randbytes(4096))
    return path


def _corrupt_json(tmp):
    path = tmp / "corrupt.json"
    path.write_text('{"model": {"type": "BPE", ')
    return path


def _other_json(tmp):
    path = tmp / "other.json"
    path.write_text('{"name": "not a tokenizer", "values": [1, 2, 3]}')
    return path


def _truncated_hf(tmp):
    data = minilm_path().read_bytes()
    path = tmp / "tokenizer.json"
    path.write_bytes(data[: len(data) // 2])
    return path


def _truncated_tekken(tmp):
    data = tekken_path().read_bytes()
    path = tmp / "tekken.json"
    path.write_bytes(data[: len(data) // 2])
    return path


def _corrupt_tiktoken(tmp):
    lines = real_file("gpt2.tiktoken").read_bytes().splitlines(keepends=True)
    lines[9] = b"@@not-base64@@ nine\n"
    path = tmp / "corrupt.tiktoken"
    path.write_bytes(b"".join(lines))
    return path


def _truncated_spm(tmp):
    path = tmp / "truncated.model.v3"
    path.write_bytes(spm_path().read_bytes()[:1000])
    return path


def _empty_dir(tmp):
    path = tmp / "empty_dir"
    path.mkdir()
    return path


# (id, make path, spec prefix, pattern, extra text the message must contain)
BAD_INPUTS = [
    ("missing-path", _missing, "", None, "no such file"),
    ("missing-hf", _missing, "hf:", None, "no such file"),
    ("missing-spm", _missing, "spm:", None, "no such file"),
    ("missing-tiktoken", lambda tmp: tmp / "missing.tiktoken", "tiktoken:", None, "no such file"),
    ("missing-tekken", _missing, "tekken:", None, ""),
    ("empty-file", _empty, "", None, "empty"),
    ("empty-file-hf", _empty, "hf:", None, ""),
    ("empty-file-spm", _empty, "spm:", None, ""),
    ("empty-file-tiktoken", _empty, "tiktoken:", "gpt2", "empty"),
    ("empty-file-tekken", _empty, "tekken:", None, ""),
    ("random-binary", _random_binary, "", None, "unknown tokenizer format"),
    ("random-binary-hf", _random_binary, "hf:", None, ""),
    ("random-binary-spm", _random_binary, "spm:", None, ""),
    ("random-binary-tiktoken", _random_binary, "tiktoken:", "gpt2", ""),
    ("corrupt-json", _corrupt_json, "", None, "JSON"),
    ("corrupt-json-hf", _corrupt_json, "hf:", None, ""),
    ("corrupt-json-tekken", _corrupt_json, "tekken:", None, ""),
    ("json-neither-hf-nor-tekken", _other_json, "", None, "neither"),
    ("json-neither-as-hf", _other_json, "hf:", None, ""),
    ("json-neither-as-tekken", _other_json, "tekken:", None, ""),
    ("truncated-tokenizer.json", _truncated_hf, "", None, ""),
    ("truncated-tokenizer.json-hf", _truncated_hf, "hf:", None, ""),
    ("truncated-tekken", _truncated_tekken, "", None, ""),
    ("corrupt-tiktoken-line", _corrupt_tiktoken, "", "gpt2", ":10:"),
    ("corrupt-tiktoken-line-explicit", _corrupt_tiktoken, "tiktoken:", "gpt2", ":10:"),
    ("corrupt-tiktoken-no-pattern", _corrupt_tiktoken, "", None, "--pattern"),
    ("truncated-spm", _truncated_spm, "", None, "SentencePiece"),
    ("truncated-spm-explicit", _truncated_spm, "spm:", None, "SentencePiece"),
    ("spm-as-hf", lambda tmp: spm_path(), "hf:", None, ""),
    ("hf-as-spm", lambda tmp: minilm_path(), "spm:", None, ""),
    ("hf-as-tekken", lambda tmp: minilm_path(), "tekken:", None, ""),
    ("tiktoken-as-tekken", lambda tmp: real_file("gpt2.tiktoken"), "tekken:", None, ""),
    ("empty-dir", _empty_dir, "", None, ""),
    ("empty-dir-hf", _empty_dir, "hf:", None, ""),
    ("empty-dir-spm", _empty_dir, "spm:", None, ""),
]


@pytest.mark.parametrize("make, prefix, pattern, needle",
                         [case[1:] for case in BAD_INPUTS], ids=[case[0] for case in BAD_INPUTS])
def test_bad_tokenizer_input_raises_tokenizer_error(make, prefix, pattern, needle, tmp_path):
    path = make(tmp_path)
    try:
        fertility.load_tokenizer(f"{prefix}{path}", pattern=pattern)
    except TokenizerError as err:
        message = str(err)
    except Exception as err:  # noqa: BLE001 - the point is that nothing else escapes
        pytest.fail(f"{type(err).__name__} instead of TokenizerError: {err}")
    else:
        pytest.fail("loaded a bad tokenizer input")
    assert str(path) in message
    assert needle in message
    assert "\n" not in message and "\r" not in message


@pytest.mark.parametrize("spec, needles", [
    ("foo:bar", ["foo:bar", "'foo'", "hf", "spm", "tiktoken", "tekken", "bytes", "chars", "graphemes"]),
    ("hf:", ["nothing after"]),
    ("tiktoken:no_such_encoding", ["no_such_encoding", "cl100k_base"]),
    ("not-a-spec-or-file", ["not-a-spec-or-file", "scheme:reference"]),
])
def test_bad_tokenizer_spec_raises_tokenizer_error(spec, needles):
    with pytest.raises(TokenizerError) as err:
        fertility.load_tokenizer(spec)
    message = str(err.value)
    for needle in needles:
        assert needle in message
    assert "\n" not in message
