"""The fast path (gigatoken's ids behind the library tokenizer): exact where it is on, off with a
reason elsewhere, checked on every batch, and bounded in memory.

The full exactness matrix (every tokenizer, every FLORES devtest line) is
benchmarks/fastpath_matrix.py; here a few hundred lines per language of the tokenizers the fast
path covers, against the library backend alone, token by token."""

from __future__ import annotations

import base64
import json
import pickle
import random
import signal
import subprocess
import sys
from functools import cache

import numpy as np
import pytest
from click.testing import CliRunner
from real_files import mistral_file, real_file, shared

import fertility
from fertility.backends import FastCheck, load_tokenizer
from fertility.cli import cli
from fertility.errors import Terminated

gigatoken = pytest.importorskip("gigatoken", reason="gigatoken not installed: the fast path is off")
from fertility.backends import _gigatoken_build, _gigatoken_check, _gigatoken_ids
from fertility.backends._gigatoken_check import byte_sizes, difference

LINES = 200  # per language


@cache
def loaded(name: str):
    if name == "cl100k":
        return load_tokenizer("tiktoken:cl100k_base")
    if name == "llama3":
        return load_tokenizer(str(real_file("llama3/tokenizer.json")))
    if name in ("r50k", "whisper", "qwen"):
        return load_tokenizer(str(real_file({"r50k": "gpt2.tiktoken", "whisper": "multilingual.tiktoken",
                                             "qwen": "qwen/qwen.tiktoken"}[name])),
                              normalize="none" if name == "qwen" else None)
    return load_tokenizer(str(mistral_file({"spm-v1": "tokenizer.model.v1",
                                            "spm-v3": "mistral_instruct_tokenizer_240323.model.v3",
                                            "spm-v7": "mistral_instruct_tokenizer_241114.model.v7",
                                            "tekken": "tekken_240911.json"}[name])))


COVERED = ["cl100k", "llama3", "spm-v7", "spm-v3", "spm-v1", "tekken", "r50k", "whisper", "qwen"]


@cache
def flores(lang_file: str) -> list[str]:
    text = (shared("flores200", "devtest") / lang_file).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip()][:LINES]


def flores_files() -> list[str]:
    return sorted(p.name for p in shared("flores200", "devtest").glob("*.txt"))


@pytest.mark.parametrize("name", COVERED)
def test_fast_tokens_equal_the_library_on_flores(name):
    """Every cell of the matrix, on the first LINES lines: count, ids, spans and kinds of every
    token equal what the library backend alone gives."""
    tokenizer = loaded(name)
    assert tokenizer.active, tokenizer.info()["fast_path"]
    for lang_file in flores_files():
        texts = flores(lang_file)
        assert not tokenizer.left_to_library(texts)
        fast = tokenizer.fast_tokens(texts)
        assert fast is not None, lang_file
        library = tokenizer.inner.encode_many(texts)
        everything = list(range(len(texts)))
        assert difference(fast, texts, byte_sizes(texts), library, everything) is None, (name, lang_file)
        assert int(fast.counts.sum()) == int(library.counts.sum())


def _synthetic_ranks() -> dict[bytes, int]:
    """All 256 bytes plus merges that cross every place where two split patterns could cut the
    same text differently (contractions, digit runs, case changes, spaces, newlines, slashes)."""
    ranks = {bytes([b]): b for b in range(256)}
    for token in ["12", "123", "1234", "do", "don", "'t", "don'", "don't", "'s", "it's", "ab", "aB", "aBc", "AB",
                  "ABc", "Abc", " a", " 1", " 12", "   ", " \n", "\n\n", "\r\n", "a//", "/\n", " /", "/a", ".\n",
                  " .", "..", "a\u0301", "\u0301a"]:
        data = token.encode()
        for end in range(2, len(data) + 1):
            ranks.setdefault(data[:end], len(ranks))
    return ranks


def test_each_pattern_splits_as_its_gigatoken_scheme(tmp_path):
    """The pattern -> scheme table: on random text over the characters where patterns differ,
    gigatoken with the scheme gives tiktoken's ids with the pattern, for every pair (and the
    test can tell them apart: cl100k's pattern under the o200k scheme differs)."""
    import tiktoken

    ranks = _synthetic_ranks()
    path = tmp_path / "synthetic.tiktoken"
    path.write_text("".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in ranks.items()), encoding="ascii")
    rng = random.Random(7)
    pool = [*"aAbBcCdoDnt's'T12345 \t\n\r/.,!é\u0301ÀǅΣσ日本Ⅻ٣", "don't", "IT'S", "  ", "\r\n", "//"]
    texts = ["".join(rng.choice(pool) for _ in range(rng.randint(1, 14))) for _ in range(3000)]
    schemes = _gigatoken_build._schemes()
    for pattern, scheme in schemes.items():
        reference = tiktoken.Encoding(name="x", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
        fast = gigatoken.Tokenizer.from_tiktoken(path, pretokenizer=scheme, special_tokens={}).backend
        wrong = [t for t in texts if list(map(int, fast.encode(t))) != reference.encode_ordinary(t)]
        assert not wrong, (scheme, wrong[:3])
    from fertility.backends.patterns import CL100K
    reference = tiktoken.Encoding(name="x", pat_str=CL100K, mergeable_ranks=ranks, special_tokens={})
    other = gigatoken.Tokenizer.from_tiktoken(path, pretokenizer="o200k", special_tokens={}).backend
    assert any(list(map(int, other.encode(t))) != reference.encode_ordinary(t) for t in texts)


# --- the check on every batch ----------------------------------------------------------------------

class _Corrupted:
    """Wraps a fast path's id source and changes one text's ids."""

    def __init__(self, ids, text: int, how: str):
        self.ids, self.text, self.how = ids, text, how

    def __call__(self, texts):
        counts, ids, sizes = self.ids(texts)
        counts, ids = counts.copy(), ids.copy()
        start = int(counts[:self.text].sum())
        if self.how == "swap":  # same bytes covered, other tokens: only the sample can see it
            ids[start], ids[start + 1] = ids[start + 1], ids[start]
        else:  # a token dropped: the text is no longer covered
            ids = np.delete(ids, start)
            counts[self.text] -= 1
        return counts, ids, sizes


def _fresh(name: str):
    return pickle.loads(pickle.dumps(loaded(name)))  # its own fast path, safe to corrupt


@pytest.mark.parametrize("name", ["cl100k", "llama3", "spm-v7"])
def test_a_difference_in_a_sampled_text_gives_the_library_tokens(name):
    tokenizer = _fresh(name)
    texts = flores("eng_Latn.txt")
    tokenizer._ids = _Corrupted(tokenizer._ids, 0, "swap")  # the first text is always sampled
    tokens, check = tokenizer.encode_checked(texts)
    assert check == FastCheck(False, "token ids differ", 0)
    library = tokenizer.inner.encode_many(texts)
    assert all(np.array_equal(a, b) for a, b in zip(tokens, library) if isinstance(a, np.ndarray))


class _Raising:
    """An id source that raises what a signal handler (or a panic) raises at the first bytecode
    after the native call returns: inside the fast path's `try`."""

    def __init__(self, ids, error: BaseException):
        self.ids, self.error = ids, error

    def __call__(self, texts):
        self.ids(texts)
        raise self.error


@pytest.mark.parametrize("error", [Terminated(signal.SIGTERM), Terminated(signal.SIGHUP), KeyboardInterrupt()],
                         ids=["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_signal_inside_the_fast_path_stops_the_command(error):
    """A SIGTERM that lands in the fast path is not taken for gigatoken failing (which falls back
    to the library and runs on): it unwinds, as anywhere else. Seen as an audit that went on
    after SIGTERM, or a worker that outlived a stopped pool."""
    tokenizer = _fresh("cl100k")
    tokenizer._ids = _Raising(tokenizer._ids, error)
    with pytest.raises(type(error)):
        tokenizer.encode_checked(flores("eng_Latn.txt")[:20])


class _Panic(BaseException):
    """As pyo3's PanicException, a BaseException that is not the user stopping anything."""


def test_a_panic_inside_the_fast_path_falls_back_to_the_library():
    tokenizer = _fresh("cl100k")
    tokenizer._ids = _Raising(tokenizer._ids, _Panic("boom"))
    texts = flores("eng_Latn.txt")[:20]
    tokens, check = tokenizer.encode_checked(texts)
    assert check == FastCheck(False)
    assert tokens.counts.tolist() == tokenizer.inner.encode_many(texts).counts.tolist()


def test_a_text_whose_bytes_are_not_covered_is_caught_outside_the_sample():
    tokenizer = _fresh("cl100k")
    texts = flores("ben_Beng.txt")
    sampled = _gigatoken_check.sample_positions(byte_sizes(texts))
    outside = next(i for i in range(len(texts)) if i not in sampled)
    tokenizer._ids = _Corrupted(tokenizer._ids, outside, "drop")
    tokens, check = tokenizer.encode_checked(texts)
    assert check.used is False and check.text == outside and "tokens, the library" in check.difference
    assert int(tokens.counts.sum()) == int(tokenizer.inner.encode_many(texts).counts.sum())


def test_the_sample_is_fixed_evenly_spread_and_bounded():
    sizes = np.full(1000, 100)
    chosen = _gigatoken_check.sample_positions(sizes)
    assert chosen[0] == 0 and chosen[-1] == 999 and len(chosen) == _gigatoken_check.SAMPLE_TEXTS
    assert chosen == _gigatoken_check.sample_positions(sizes)
    huge = np.array([10_000_000, 50, 10_000_000])
    assert _gigatoken_check.sample_positions(huge) == [1]  # a huge text is never re-encoded by the library
    assert _gigatoken_check.sample_positions(np.zeros(0, dtype=np.int64)) == []


def test_an_audit_warns_once_and_counts_with_the_library_where_the_fast_path_differs(monkeypatch, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for lang in ("eng_Latn", "ben_Beng"):
        (corpus / f"{lang}.txt").write_text("\n".join(flores(f"{lang}.txt")) + "\n", encoding="utf-8")
    original = _gigatoken_ids.GigatokenIds.__call__

    def corrupted(self, texts):
        return _Corrupted(lambda t: original(self, t), 0, "swap")(texts)
    expected = fertility.audit(["tiktoken:cl100k_base"], [corpus], cache=False, jobs=1, exact_library=True)
    monkeypatch.setattr(_gigatoken_ids.GigatokenIds, "__call__", corrupted)
    with pytest.warns(fertility.errors.FertilityWarning, match="differed from the library on 1 of 1 chunks") as seen:
        result = fertility.audit(["tiktoken:cl100k_base"], [corpus], cache=False, jobs=1)
    assert len([w for w in seen if "fast path" in str(w.message)]) == 1
    assert result.counts == expected.counts
    info = result.signature.tokenizers["cl100k_base"]
    assert info["fast_path_chunks"] == "0 of 1 (1 differed from the library and were counted by it)"


# --- the audit: same numbers, and the signature says which path counted --------------------------

@pytest.mark.parametrize("spec", ["tiktoken:cl100k_base", "llama3", "spm-v7"])
def test_an_audit_with_the_fast_path_equals_the_library_audit(tmp_path, spec):
    """Counts, findings, evidence and token statistics identical; the signature differs only
    in the fast-path keys (FASTPATH.md holds the same check on all of FLORES devtest)."""
    spec = {"llama3": str(real_file("llama3/tokenizer.json")),
            "spm-v7": str(mistral_file("mistral_instruct_tokenizer_241114.model.v7"))}.get(spec, spec)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for lang in ("eng_Latn", "ben_Beng", "zho_Hans", "amh_Ethi", "tha_Thai"):
        (corpus / f"{lang}.txt").write_text("\n".join(flores(f"{lang}.txt")) + "\n", encoding="utf-8")
    fast = fertility.audit([spec], [corpus], cache=False, jobs=2, chunk_bytes=1 << 16).to_dict()
    library = fertility.audit([spec], [corpus], cache=False, jobs=2, chunk_bytes=1 << 16, exact_library=True).to_dict()
    (name, fast_info), = fast["signature"]["tokenizers"].items()
    library_info = library["signature"]["tokenizers"][name]
    assert fast_info["fast_path"].startswith("on: ") and fast_info["fast_path_library"].startswith("gigatoken")
    assert fast_info["fast_path_chunks"].split(" of ")[0] != "0"
    assert library_info["fast_path"] == "off: --exact-library"
    assert {k: v for k, v in fast_info.items() if not k.startswith("fast_path")} == \
        {k: v for k, v in library_info.items() if not k.startswith("fast_path")}
    fast["signature"]["tokenizers"] = library["signature"]["tokenizers"] = None
    assert json.dumps(fast, sort_keys=True) == json.dumps(library, sort_keys=True)


def test_exact_library_on_the_command_line(small):
    runner = CliRunner()
    on = runner.invoke(cli, ["audit", str(small), "-f", "json", "--no-cache", "--jobs", "1"])
    off = runner.invoke(cli, ["audit", str(small), "-f", "json", "--no-cache", "--jobs", "1", "--exact-library"])
    assert on.exit_code == 0 and off.exit_code == 0, on.output + off.output
    on_data, off_data = json.loads(on.stdout), json.loads(off.stdout)
    assert on_data["signature"]["tokenizers"]["cl100k_base"]["fast_path"].startswith("on: token ids from gigatoken")
    assert off_data["signature"]["tokenizers"]["cl100k_base"]["fast_path"] == "off: --exact-library"
    assert on_data["rows"] == off_data["rows"]


def test_a_model_alias_counts_on_the_fast_path_of_the_encoding_it_names(small):
    """`-t gpt-4` is cl100k_base under the model's name: the same fast path, the same counts
    (its signature said "no fast path for the tiktoken backend", and the library counted)."""
    alias = fertility.audit(["gpt-4"], [small], cache=False, jobs=1).to_dict()
    named = fertility.audit(["tiktoken:cl100k_base"], [small], cache=False, jobs=1).to_dict()
    info = alias["signature"]["tokenizers"]["gpt-4"]
    assert info["fast_path"].startswith("on: token ids from gigatoken") and info["alias"] == "gpt-4"
    assert info["fast_path_chunks"].split(" of ")[0] != "0"
    assert [{**row, "tokenizer": None} for row in alias["rows"]] == [{**row, "tokenizer": None} for row in named["rows"]]


# --- where it is off, and why -------------------------------------------------------------------

def test_the_fast_path_is_off_with_a_reason_where_it_cannot_be_exact():
    wordpiece = load_tokenizer(str(real_file("minilm/tokenizer.json")))
    assert not wordpiece.active and "WordPiece" in wordpiece.info()["fast_path"]
    gguf = load_tokenizer(str(real_file("gguf/ggml-vocab-llama-bpe.gguf")))
    assert gguf.info()["fast_path"] == "off: no fast path for the gguf backend"
    qwen = load_tokenizer(str(real_file("qwen/qwen.tiktoken")))  # Qwen's runtime applies NFC first
    assert "normalized (NFC) before the model" in qwen.info()["fast_path"]
    library = qwen.inner.inner
    # its encode_many normalizes, then asks the library; the fast path (which would skip the
    # normalization) is never asked, so there is no check to report
    checked, check = qwen.encode_checked(["cafe\u0301"])
    assert check is None and checked.ids.tolist() == library.encode_many(["caf\u00e9"]).ids.tolist()
    assert qwen.encode_many(["cafe\u0301"]).ids.tolist() == library.encode_many(["caf\u00e9"]).ids.tolist()
    assert loaded("qwen").active  # the same file read without normalization
    assert "fast_path" not in load_tokenizer("bytes").info()


def test_text_holding_an_added_token_is_left_to_the_library():
    """Mistral v7 cuts its user-defined pieces ([REF]...) out of text; gigatoken is not asked to
    match that: the batch is counted by SentencePiece itself."""
    tokenizer = loaded("spm-v7")
    texts = ["plain text", "a [REF] b [/REF]"]
    tokens, check = tokenizer.encode_checked(texts)
    assert check == FastCheck(False)
    assert tokens.ids.tolist() == tokenizer.processor.encode(texts[0]) + tokenizer.processor.encode(texts[1])


def test_text_gigatoken_cannot_take_is_left_to_the_library():
    """A lone surrogate (API callers may pass one; corpora are strict UTF-8) makes gigatoken
    refuse the batch: the library counts it, as without the fast path."""
    tokenizer = loaded("cl100k")
    texts = ["fine", "a\udc80b"]
    tokens, check = tokenizer.encode_checked(texts)
    assert check == FastCheck(False)
    assert tokens.ids.tolist() == tokenizer.inner.encode_many(texts).ids.tolist()


def test_special_token_text_is_ordinary_text():
    """<|endoftext|> and Llama-3's <|begin_of_text|> are counted as text, as the library does."""
    for name, text in (("cl100k", "a<|endoftext|>b"), ("llama3", "<|begin_of_text|>hi<|eot_id|>")):
        tokenizer = loaded(name)
        fast = tokenizer.fast_tokens([text])
        assert fast is not None and len(fast.ids) > 3
        assert fast.ids.tolist() == tokenizer.inner.encode_many([text]).ids.tolist()


def test_a_fast_path_pickles_and_stays_on_or_off():
    on = pickle.loads(pickle.dumps(loaded("cl100k")))
    assert on.active and on.info() == loaded("cl100k").info()
    assert on.fast_tokens(["hello"]).ids.tolist() == loaded("cl100k").fast_tokens(["hello"]).ids.tolist()
    off = pickle.loads(pickle.dumps(load_tokenizer("tiktoken:cl100k_base", exact_library=True)))
    assert not off.active and off.info()["fast_path"] == "off: --exact-library"


_NO_AWKWARD = """
import sys
from fertility.backends import load_tokenizer
tokenizer = load_tokenizer("tiktoken:cl100k_base")
texts = ["a line", "", "   ", "বাংলা লেখা", "x" * 5000]
fast = tokenizer.fast_tokens(texts)
assert fast is not None
assert fast.counts.tolist() == tokenizer.inner.encode_many(texts).counts.tolist()
assert fast.ids.tolist() == tokenizer.inner.encode_many(texts).ids.tolist()
print("awkward" in sys.modules)
"""


def test_the_fast_path_hands_gigatoken_bytes_and_never_imports_awkward():
    """Given a list of str, gigatoken's encoder imports awkward (about half a second in every
    worker); the fast path hands it UTF-8 buffers instead, one per text, empty texts kept in
    their rows. In a fresh process, since the suite may have imported awkward already."""
    done = subprocess.run([sys.executable, "-c", _NO_AWKWARD], check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def _trained_spm(tmp_path, name: str, **options) -> bytes:
    import sentencepiece

    from fertility.io.samples import samples_dir

    lines = (samples_dir() / "ben_Beng.txt").read_text(encoding="utf-8").splitlines() * 3
    sentencepiece.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_prefix=str(tmp_path / name),
                                             minloglevel=3, **options)
    return (tmp_path / f"{name}.model").read_bytes()


def test_the_sentencepiece_conversion_is_gigatokens_own(tmp_path):
    """spm_tokenizer_json reads the model with protobuf instead of gigatoken's pure-Python
    parser: the tokenizer.json must be the one gigatoken's converter makes (every Mistral model
    shipped, and trained ones with user-defined and control pieces or an identity normalizer),
    and a model it refuses must be refused with the same reason."""
    from gigatoken._load.sentencepiece import sentencepiece_to_tokenizer_json

    def converted(convert, data: bytes):
        try:
            return json.loads(json.dumps(convert(data), ensure_ascii=False) if convert is _gigatoken_build.spm_tokenizer_json
                              else convert(data))
        except ValueError as err:
            return ("refused", str(err))
    models = [mistral_file(name).read_bytes() for name in (
        "tokenizer.model.v1", "mistral_instruct_tokenizer_240216.model.v2",
        "mistral_instruct_tokenizer_240323.model.v3", "mistral_instruct_tokenizer_241114.model.v7")]
    models += [
        _trained_spm(tmp_path, "pieces", vocab_size=600, model_type="bpe", byte_fallback=True,
                     user_defined_symbols=["[X]"], control_symbols=["<ctl>"]),
        _trained_spm(tmp_path, "identity", vocab_size=600, model_type="bpe", byte_fallback=True,
                     normalization_rule_name="identity", remove_extra_whitespaces=False, add_dummy_prefix=False),
        _trained_spm(tmp_path, "unigram", vocab_size=200, model_type="unigram"),
        _trained_spm(tmp_path, "no_fallback", vocab_size=200, model_type="bpe"),
    ]
    outcomes = []
    for data in models:
        ours, theirs = converted(_gigatoken_build.spm_tokenizer_json, data), converted(sentencepiece_to_tokenizer_json, data)
        assert ours == theirs
        outcomes.append(ours[0] if isinstance(ours, tuple) else len(ours["model"]["merges"]))
    assert outcomes[-2:] == ["refused", "refused"]
    assert all(isinstance(n, int) and n > 200 for n in outcomes[:-2])


# --- memory ---------------------------------------------------------------------------------------

def test_a_batch_of_one_long_and_many_short_texts_is_cut_into_bounded_matrices(monkeypatch):
    tokenizer = _fresh("cl100k")
    shapes = []
    backend = tokenizer._ids.backend

    class Recording:
        def encode_batch_padded(self, texts, options, parallel):
            matrix, lengths = backend.encode_batch_padded(texts, options, parallel=parallel)
            shapes.append(matrix.shape)
            return matrix, lengths
    monkeypatch.setattr(_gigatoken_ids, "_CELLS", 1 << 16)
    tokenizer._ids.backend = Recording()
    texts = ["short line"] * 3000 + ["word " * 20_000] + ["x"] * 10
    fast = tokenizer.fast_tokens(texts)
    assert max(rows * width for rows, width in shapes) <= max(1 << 16, 20_001 * 5)
    assert len(shapes) > 1
    assert fast.ids.tolist() == tokenizer.inner.encode_many(texts).ids.tolist()


_REBUILT = """
import random
from fertility.backends import _gigatoken_ids, load_tokenizer
_gigatoken_ids.CACHE_BYTES = 2 << 20
tokenizer = load_tokenizer("tiktoken:cl100k_base")
rng = random.Random(3)
letters = "abcdefghijklmnopqrstuvwxyzঅআইঈউএকখগঘচছজঝটঠডঢতথদধনপফবভমযরলশসহ"
batches = [[" ".join("".join(rng.choices(letters, k=rng.randint(4, 10))) for _ in range(12)) for _ in range(2000)]
           for _ in range(8)]
heap = _gigatoken_ids._heap_counter()
before = heap()
for batch in batches:
    fast = tokenizer.fast_tokens(batch)
    assert fast.ids.tolist() == tokenizer.inner.encode_many(batch).ids.tolist()
print(tokenizer._ids.rebuilds, heap() - before)
"""


def test_without_a_cache_budget_the_encoder_is_rebuilt_and_ids_do_not_change():
    """gigatoken 0.10.0 never evicts: once the heap has grown by CACHE_BYTES the encoder is
    rebuilt. Text whose every word is new fills the cache fastest. In a fresh process: the
    trigger reads the whole process's heap, which a test suite's own history would blur."""
    if hasattr(gigatoken, "set_max_cache_bytes"):
        pytest.skip("this gigatoken bounds its caches itself")
    if _gigatoken_ids._heap_counter() is None:
        pytest.skip("no glibc mallinfo2 here: the encoder is rebuilt by text size instead")
    done = subprocess.run([sys.executable, "-c", _REBUILT], check=False, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rebuilds, growth = map(int, done.stdout.split())
    assert rebuilds >= 1
    assert growth < 64 << 20


# --- without gigatoken, and across shards -------------------------------------------------------

def test_without_gigatoken_the_library_counts_and_the_signature_says_so(small, tmp_path):
    """The base install (no `fast` extra): `import gigatoken` fails, the audit runs on the
    library alone, in worker processes too, with the same rows as the fast path's."""
    blocked = ("import sys; sys.modules['gigatoken'] = None; sys.argv[0] = 'fertility'; "
               "from fertility.cli import main; main()")
    args = ["audit", str(small), "-f", "json", "--no-cache", "-q", "--jobs", "2"]
    done = subprocess.run([sys.executable, "-c", blocked, *args], check=False, capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    without = json.loads(done.stdout)
    info = without["signature"]["tokenizers"]["cl100k_base"]
    assert info["fast_path"] == "off: gigatoken is not installed (pip install 'fertility[fast]')"
    assert not {"fast_path_chunks", "fast_path_check", "fast_path_library"} & set(info)
    with_fast = CliRunner().invoke(cli, args)
    assert with_fast.exit_code == 0, with_fast.output
    assert json.loads(with_fast.stdout)["rows"] == without["rows"]


def test_shards_counted_by_the_fast_path_merge_and_sum_their_chunks(tmp_path):
    from fertility.results.shards import merge

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for lang in ("eng_Latn", "ben_Beng"):
        (corpus / f"{lang}.txt").write_text("\n".join(flores(f"{lang}.txt")) + "\n", encoding="utf-8")
    options = {"cache": False, "jobs": 1, "chunk_bytes": 1 << 15, "diagnose": False}
    parts = [fertility.audit(["tiktoken:cl100k_base"], [corpus], shard=(k, 2), **options) for k in (1, 2)]
    whole = fertility.audit(["tiktoken:cl100k_base"], [corpus], **options)
    tallies = [int(p.signature.tokenizers["cl100k_base"]["fast_path_chunks"].split(" of ")[1]) for p in parts]
    merged, missing = merge(parts, ["part1.json", "part2.json"])
    assert not missing and merged.counts == whole.counts
    assert merged.signature.tokenizers["cl100k_base"]["fast_path_chunks"] == f"{sum(tallies)} of {sum(tallies)}"
    library_part = fertility.audit(["tiktoken:cl100k_base"], [corpus], shard=(2, 2), exact_library=True, **options)
    with pytest.raises(fertility.errors.InputError, match="differ in tokenizers"):
        merge([parts[0], library_part], ["part1.json", "exact.json"])
