"""The audit engine: chunk results merge exactly, workers change nothing, the profile cache is
trusted only when intact, long documents stay in bounded memory, SentencePiece byte pieces are
counted right (issue 8, item 8a), and progress moves in bytes."""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from real_files import mistral_file, shared
from reference import spm_token_spans, tokenizer

import fertility
from fertility.backends.spans import concatenate
from fertility.engine.chunks import Chunk, chunked
from fertility.engine.count import count, cut_boundaries
from fertility.engine.measure import measure_chunk
from fertility.engine.profiles import ProfileCache
from fertility.engine.result import ChunkResult
from fertility.errors import CorpusError
from fertility.io.corpus import CorpusStream, Document, read_corpus
from fertility.report import tables as render
from fertility.text.pieces import pieces
from fertility.text.units import profile

SPM_V3 = "mistral_instruct_tokenizer_240323.model.v3"
SPM_V7 = "mistral_instruct_tokenizer_241114.model.v7"


BACKENDS = ["bytes", "chars", "graphemes", "tiktoken:cl100k_base", "spm", "hf", "tekken", "gguf-llama-bpe",
            "gguf-bert-bge"]


@cache
def flores_documents(per_language: int = 12) -> list[Document]:
    """A few real lines of several scripts, some with byte-fallback and unknown tokens."""
    folder = shared("flores200", "devtest")
    out = []
    for lang in ("ben_Beng", "eng_Latn", "amh_Ethi", "zho_Hans", "hin_Deva"):
        lines = (folder / f"{lang}.txt").read_text(encoding="utf-8").splitlines()[:per_language]
        out += [Document(lang, line, lang, n) for n, line in enumerate(lines, 1)]
    return out


def one_chunk(documents: list[Document]) -> Chunk:
    return next(chunked(documents, chunk_bytes=1 << 40))


def split(chunk: Chunk, cuts: list[int]) -> list[Chunk]:
    edges = [0, *sorted(set(cuts)), len(chunk.texts)]
    return [Chunk(i, chunk.texts[a:b], chunk.langs[a:b], chunk.first_piece[a:b], chunk.sampled[a:b],
                  chunk.doc_index[a:b]) for i, (a, b) in enumerate(pairwise(edges)) if b > a]


# --- merge of any split == the whole ----------------------------------------------------------

@pytest.mark.parametrize("spec", BACKENDS)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_merging_any_split_gives_the_whole(spec, data):
    tok = tokenizer(spec)
    # the same badly cut word many times over: example pools must still keep five distinct words
    repeated = [Document("ben_Beng", "বিশ্ববিদ্যালয়ের " * 8 + "x", "r", n) for n in range(6)]
    documents = repeated[:3] + flores_documents() + repeated[3:]
    whole_chunk = one_chunk(documents)
    whole = measure_chunk(whole_chunk, [tok], evidence=True)
    cuts = data.draw(st.lists(st.integers(1, len(documents) - 1), max_size=6))
    parts = [measure_chunk(part, [tok], evidence=True) for part in split(whole_chunk, cuts)]
    order = data.draw(st.permutations(range(len(parts))))
    merged = ChunkResult()
    for index in order:
        merged = merged.merge(parts[index])
    assert merged == whole
    assert whole.counts  # something was measured
    # the issue-11 counts are among those that merge exactly, and were measured
    assert sum(c.n_single_token_words for c in whole.counts.values()) > 0
    if spec not in ("bytes", "chars", "graphemes"):
        assert sum(c.n_continuation_tokens for c in whole.counts.values()) > 0
        assert all(stats.ids for stats in whole.tokens.values())  # id counts merged exactly too
    assert sum(sum(stats.lengths) for stats in whole.tokens.values()) == sum(c.n_tokens for c in whole.counts.values())
    assert sum(c.n_docs for c in whole.counts.values()) == len(documents)


@pytest.mark.parametrize("spec", BACKENDS)
def test_chunk_counts_equal_text_by_text_counts(spec):
    """The vectorized chunk equals measuring every text on its own (per-text arrays)."""
    tok = tokenizer(spec)
    documents = flores_documents(4)
    together = count(tok, documents)
    apart: dict = {}
    for doc in documents:
        single = count(tok, [doc])[doc.lang]
        apart[doc.lang] = apart[doc.lang] + single if doc.lang in apart else single
        encoded = tok.encode([doc.text])[0]
        assert single.n_cut_boundaries == int(cut_boundaries(profile(doc.text), encoded).sum())
        assert single.n_tokens == len(encoded.starts)
    assert together == apart


# --- workers ------------------------------------------------------------------------------------

@pytest.mark.parametrize("spec", ["tiktoken:cl100k_base", "hf", "spm", "bytes", "graphemes"])
def test_jobs_give_byte_identical_json(spec, tmp_path):
    tok = tokenizer(spec)
    corpus = shared("flores200", "devtest")
    files = [corpus / f"{lang}.txt" for lang in ("ben_Beng", "eng_Latn", "amh_Ethi")]
    outputs = []
    for jobs in (1, 2):
        result = fertility.audit([tok], files, jobs=jobs, cache=False, chunk_bytes=60_000)
        outputs.append(render.to_json(result))
    assert outputs[0] == outputs[1]
    assert json.loads(outputs[0])  # a real audit came out
    rows = json.loads(outputs[0])["rows"]  # with the issue-11 word metrics, equal under --jobs
    assert all(row["n_continuation_tokens"] is not None for row in rows)
    assert any(row["single_token_word_share"] for row in rows)
    assert all(sum(row["token_lengths"]) == row["n_tokens"] for row in rows)
    if spec not in ("bytes", "graphemes"):
        assert all(row["renyi_efficiency"] is not None for row in rows)


def test_jobs_on_the_command_line(tmp_path):
    corpus = shared("flores200", "devtest")
    files = [str(corpus / f"{lang}.txt") for lang in ("ben_Beng", "eng_Latn")]
    outputs = []
    for jobs in ("1", "2"):
        done = subprocess.run([sys.executable, "-m", "fertility", "audit", *files, "--jobs", jobs,
                               "--no-cache", "-f", "json"], capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]


# --- the unit-profile cache ---------------------------------------------------------------------

def test_second_run_hits_the_cache_and_a_corrupt_entry_is_rewritten(tmp_path):
    corpus = shared("flores200", "devtest")
    files = [corpus / f"{lang}.txt" for lang in ("ben_Beng", "eng_Latn", "zho_Hans")]
    tok = tokenizer("tiktoken:cl100k_base")

    def run(jobs: int = 1):
        cache = ProfileCache(tmp_path / "cache")
        result = fertility.audit([tok], files, cache=cache, jobs=jobs, chunk_bytes=100_000)
        return render.to_json(result), cache.stats

    first, stats = run()
    assert stats.hits == 0 and stats.misses > 0 and stats.rejected == 0
    entries = sorted((tmp_path / "cache").rglob("*.npy"))
    assert len(entries) == stats.misses
    second, stats = run()
    assert (stats.hits, stats.misses) == (len(entries), 0) and second == first
    entries[0].write_bytes(entries[0].read_bytes()[:-3] + b"\x00\x01\x02")  # corrupt the payload
    entries[1].write_bytes(b"")
    third, stats = run(jobs=2)
    assert stats.rejected == 2 and stats.hits == len(entries) - 2 and third == first
    fourth, stats = run()
    assert stats.hits == len(entries) and stats.rejected == 0 and fourth == first  # rewritten
    assert not list((tmp_path / "cache").rglob(".tmp-*"))


def test_cache_folder_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("FERTILITY_CACHE_DIR", str(tmp_path / "here"))
    fertility.audit(["bytes"], [shared("flores200", "devtest", "eng_Latn.txt")], diagnose=False)
    assert list((tmp_path / "here").rglob("*.npy"))
    monkeypatch.setenv("FERTILITY_CACHE_DIR", str(tmp_path / "a-file"))
    (tmp_path / "a-file").write_text("mine")
    result = fertility.audit(["bytes"], [shared("flores200", "devtest", "eng_Latn.txt")], diagnose=False)
    assert (tmp_path / "a-file").read_text() == "mine" and result.counts  # unusable cache: skipped


# --- the streaming reader and pieces ------------------------------------------------------------

def test_streamed_corpus_equals_the_read_corpus():
    paths = [shared("flores200", "devtest"), shared("mono", "ben")]
    for doc_mode in ("line", "file"):
        read = read_corpus(paths, doc_mode=doc_mode)
        stream = CorpusStream(paths, doc_mode=doc_mode)
        assert tuple(stream.documents()) == read.documents
        summary = stream.corpus()
        assert (summary.sha256, summary.scripts, summary.files) == (read.sha256, read.scripts, read.files)
        assert stream.n_documents == len(read.documents)


@settings(max_examples=60, deadline=None)
@given(words=st.lists(st.sampled_from(["আমি", "ভাত", "খাই", "a", "\u0600x", "e\u0301", "👩\u200d👧", "\t", "  "]),
                      max_size=80), limit=st.integers(4, 40))
def test_pieces_rebuild_the_text_and_cut_only_between_clusters(words, limit):
    """Pieces fit the limit; a cut is before a space or tab when the piece holds one, else at a
    cluster boundary, and inside a cluster only when that cluster alone is over the limit."""
    text = " ".join(words)
    cut = pieces(text, max_bytes=limit)
    assert "".join(cut) == text
    position = 0
    clusters = [m.span() for m in regex.finditer(r"\X", text)]
    starts = {start for start, _ in clusters} | {len(text)}
    for piece in cut[:-1]:
        position += len(piece)
        if regex.search(r"[ \t]", piece[1:]):
            assert text[position] in " \t" and position in starts
        elif position not in starts:
            start, end = next(span for span in clusters if span[0] < position < span[1])
            assert len(text[start:end].encode()) > limit
    for piece in cut:
        assert len(piece.encode()) <= limit


def long_line(tmp_path: Path, megabytes: int) -> Path:
    lines = shared("flores200", "devtest", "ben_Beng.txt").read_text(encoding="utf-8").splitlines()
    text = " ".join(lines)
    repeat = megabytes * (1 << 20) // len(text.encode()) + 1
    path = tmp_path / str(megabytes) / "ben_Beng.txt"
    path.parent.mkdir()
    path.write_text(" ".join([text] * repeat) + "\n", encoding="utf-8")
    return path


def peak_rss_mb(corpus: Path, *extra: str) -> tuple[float, dict]:
    code = ("import resource, sys\nfrom fertility.cli import main\nsys.argv = ['fertility', *sys.argv[1:]]\n"
            "try:\n    main()\nexcept SystemExit as done:\n    assert not done.code, done.code\n"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code, "audit", str(corpus), "-t", "tiktoken:cl100k_base",
                           "--jobs", "1", "--no-cache", "-f", "json", *extra],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return float(done.stderr.strip().splitlines()[-1]), json.loads(done.stdout)


def test_a_long_single_line_stays_in_bounded_memory(tmp_path):
    """Issue 8, item 10: a 20 MB line is measured in pieces; memory grows by about the line
    itself (read and decoded once), not by the per-character arrays of the whole line."""
    small, _ = peak_rss_mb(long_line(tmp_path, 2))
    large, large_out = peak_rss_mb(long_line(tmp_path, 20))
    assert large - small < 200, (small, large)  # 18 MB more text: the line, as bytes and as str
    assert '"n_docs": 1,' in json.dumps(large_out) and '"n_bytes": 0' not in json.dumps(large_out)


# --- SentencePiece byte fallback (issue 8, item 8a) ---------------------------------------------


def recount(text: str, spans: list[tuple[int, int]]) -> tuple[int, int]:
    """(cut boundaries, split words) by plain loops over clusters and words."""
    data_at = [0]
    for ch in text:
        data_at.append(data_at[-1] + len(ch.encode()))
    cluster_starts = {data_at[m.start()] for m in regex.finditer(r"\X", text)} | {data_at[-1]}
    cuts = sum(1 for (_, end), _next in pairwise(spans) if end not in cluster_starts)
    split_words = 0
    for m in regex.finditer(r"\S+", text):
        ws, we = data_at[m.start()], data_at[m.end()]
        if sum(1 for s, e in spans if s < we and e > ws) >= 2:
            split_words += 1
    return cuts, split_words


def test_byte_fallback_cuts_and_split_words_by_hand():
    tok = fertility.load_tokenizer(str(mistral_file(SPM_V3)))
    both = count(tok, [Document("ben", "ওও", "x", 1)])["ben"]
    assert both.n_cut_boundaries == 4  # two cuts inside each 3-byte letter, none between them
    three = count(tok, [Document("ben", "ও ও ও", "x", 1)])["ben"]
    assert three.n_split_words == 3  # each one-letter word is three byte pieces


@pytest.mark.parametrize("name", [SPM_V3, SPM_V7])
def test_byte_fallback_counts_match_an_independent_recount(name):
    tok = fertility.load_tokenizer(str(mistral_file(name)))
    lines = shared("flores200", "devtest", "amh_Ethi.txt").read_text(encoding="utf-8").splitlines()[:150]
    counted = count(tok, [Document("amh", line, "x", n) for n, line in enumerate(lines)])["amh"]
    cuts = words = 0
    for line in lines:
        c, w = recount(line, spm_token_spans(line, name))
        cuts, words = cuts + c, words + w
    assert (counted.n_cut_boundaries, counted.n_split_words) == (cuts, words)


@pytest.mark.parametrize("name", [SPM_V3, SPM_V7])
def test_spm_ids_path_equals_the_offsets_path(name):
    tok = fertility.load_tokenizer(str(mistral_file(name)))
    folder = shared("flores200", "devtest")
    for path in sorted(folder.glob("*.txt")):
        texts = path.read_text(encoding="utf-8").splitlines()[:60] + [" a  b ", "\t", "x\u3000y"]
        fast = tok.encode_many(texts)
        slow = concatenate(tok.encode(texts), [len(t.encode()) for t in texts])
        for a, b in zip(fast, slow):
            assert (a is None and b is None) or np.array_equal(a, b), path.name


# --- progress -----------------------------------------------------------------------------------

def test_progress_counts_bytes_and_moves_on_a_one_document_corpus(tmp_path):
    path = long_line(tmp_path, 3)
    calls = []

    def progress(label, total):
        calls.append((label, total))
        return calls.append

    fertility.audit(["bytes"], [path], progress=progress, cache=False, chunk_bytes=1 << 19)
    (label, total), advances = calls[0], calls[1:]
    assert total == path.stat().st_size and "bytes" in label
    assert len(advances) >= 3  # a single document moves the bar piece by piece
    assert sum(advances) == len(path.read_text(encoding="utf-8").strip().encode())


def test_the_signature_names_the_sample_and_the_pieces():
    result = fertility.audit(["bytes"], [shared("flores200", "devtest", "eng_Latn.txt")], cache=False)
    assert "first 1048576 bytes of each language" in result.signature.extra["findings_sample"]
    assert "a token (or a word) across a cut counts as two" in result.signature.extra["long_documents"]
    assert list(result.signature.to_dict())[-1] == "fertility"
    plain = fertility.audit(["bytes"], [shared("flores200", "devtest", "eng_Latn.txt")], diagnose=False, cache=False)
    assert "findings_sample" not in plain.signature.extra




# --- grapheme boundaries without the segmenter where none is in doubt ---------------------------

CLUSTER_ALPHABET = [*"ab .,1\t\r\n", *"কষমািী্ং", "\u09cd", "\u0600", "\u0301", "\u200d", "\u200c",
                    *"👩👧🎉", "\U0001F3FD", "\U0001F1E7", "\U0001F1E9", *"한글", "\u1100", "\u1161",
                    "\u11a8", "\x00", "\ufe0f", "©", "\u0e33", "ไ",
                    # independent vowel, spacing and non-spacing vowel signs, nukta (Bengali); a
                    # Devanagari conjunct; Hangul LV and LVT; NEL, line separator, soft hyphen
                    # (controls); a BMP pictograph after ZWJ (GB11); Malayalam dot reph (Prepend)
                    "\u0985", "\u09bf", "\u09be", "\u09bc", "\u09af", *"कष", "\u094d", "\uac00", "\uac01",
                    "\x85", "\u2028", "\xad", "\u263a", "\u0d4e", "\u0d15"]


@settings(max_examples=600, deadline=None)
@given(texts=st.lists(st.text(alphabet=st.sampled_from(CLUSTER_ALPHABET), max_size=12), max_size=6))
def test_cluster_shortcut_agrees_with_the_segmenter(texts):
    """The pair-rule boundaries (clusters.py) and the shortcut for plain text equal `\\X`'s."""
    from fertility.text.units import _segmented_continuations, cluster_continuations

    assert cluster_continuations(texts).tolist() == _segmented_continuations(texts).tolist()


@pytest.mark.parametrize("split", ["dev", "devtest"])
def test_pair_rule_boundaries_equal_the_segmenter_on_every_flores_language(split):
    from fertility.text import clusters
    from fertility.text.units import _segmented_continuations, cluster_continuations, code_points

    files = sorted(shared("flores200", split).glob("*.txt"))
    assert len(files) >= 23
    for path in files:
        lines = path.read_text(encoding="utf-8").splitlines()
        assert cluster_continuations(lines).tolist() == _segmented_continuations(lines).tolist(), path.name
    bengali = shared("flores200", split, "ben_Beng.txt").read_text(encoding="utf-8")
    assert not clusters.needs_segmenter(code_points(bengali)).any()  # the rules did the work


def test_spawned_workers_load_tokenizers_by_spec(monkeypatch):
    """Where fork is unavailable, workers are spawned and load each tokenizer from its spec."""
    from fertility.engine import local as workers

    files = [shared("flores200", "devtest", f"{lang}.txt") for lang in ("ben_Beng", "eng_Latn")]
    serial = fertility.audit(["tiktoken:cl100k_base"], files, jobs=1, cache=False, chunk_bytes=100_000)
    monkeypatch.setattr(workers, "START_METHOD", "spawn")
    spawned = fertility.audit(["tiktoken:cl100k_base"], files, jobs=2, cache=False, chunk_bytes=100_000)
    assert spawned.counts == serial.counts and spawned.findings == serial.findings


def test_a_bad_line_late_in_the_corpus_stops_the_workers_with_one_clear_line(tmp_path):
    lines = shared("flores200", "devtest", "eng_Latn.txt").read_bytes()
    (tmp_path / "eng_Latn.txt").write_bytes(lines * 3 + b"fine\nbad \xff byte\n")
    done = subprocess.run([sys.executable, "-m", "fertility", "audit", str(tmp_path), "-t", "bytes",
                           "--jobs", "2", "--no-cache"], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("fertility: error: ") and done.stderr.count("\n") == 1, done.stderr
    line = 3 * lines.count(b"\n") + 2
    assert f"eng_Latn.txt:{line}:5: not valid UTF-8" in done.stderr


def test_the_bar_on_a_terminal_shows_bytes_speed_and_time_left(monkeypatch, tmp_path):
    import io

    from click.testing import CliRunner
    from rich.console import Console

    from fertility import cli
    from fertility.cli import common

    screen = io.StringIO()
    monkeypatch.setattr(common, "stderr_console", lambda: Console(file=screen, force_terminal=True, width=150))
    path = long_line(tmp_path, 3)
    result = CliRunner().invoke(cli.cli, ["audit", str(path), "-t", "bytes", "--no-findings", "--no-cache",
                                          "-f", "csv", "--jobs", "1"])
    assert result.exit_code == 0, result.output
    shown = screen.getvalue()
    assert "auditing with bytes" in shown and "MiB" in shown and "/s" in shown, shown[-500:]


@pytest.mark.parametrize("block", [5, 64, 1 << 18])
def test_batches_hold_the_documents_whatever_the_block_size(tmp_path, monkeypatch, block):
    """The audit reads text files a block at a time; its documents, hash and scripts are those
    of the line-by-line reader, across CRLF, a BOM, blank and space-only lines, a last line
    without newline, and blocks cut anywhere."""
    monkeypatch.setattr(CorpusStream, "BLOCK_BYTES", block)
    (tmp_path / "ben_Beng.txt").write_bytes("\ufeffআমি ভাত খাই।\r\n\r\n   \n\tবাংলা\r\nশেষ".encode())
    (tmp_path / "eng_Latn.txt").write_bytes(b"one\n\n two \r\n" + b"x y z\n" * 40 + b"\r\nlast\r")
    paths = [tmp_path / "ben_Beng.txt", tmp_path / "eng_Latn.txt", shared("flores200", "devtest", "hin_Deva.txt")]
    lines = CorpusStream(paths)
    documents = list(lines.documents())
    blocks = CorpusStream(paths)
    batches = list(blocks.batches())
    assert [(b.lang, t) for b in batches for t in b.texts] == [(d.lang, d.text) for d in documents]
    english = [d.text for d in documents if d.lang == "eng_Latn"]
    assert [d.text for d in documents[:3]] == ["আমি ভাত খাই।", "\tবাংলা", "শেষ"]
    assert english[:2] == ["one", " two "] and english[-1] == "last" and len(english) == 43
    first, second = lines.corpus(), blocks.corpus()
    assert (first.sha256, first.scripts, first.files) == (second.sha256, second.scripts, second.files)
    assert lines.n_documents == blocks.n_documents == len(documents)


@pytest.mark.parametrize("block", [3, 1 << 18])
def test_a_bad_byte_is_named_by_line_and_column_whatever_the_block_size(tmp_path, monkeypatch, block):
    monkeypatch.setattr(CorpusStream, "BLOCK_BYTES", block)
    (tmp_path / "eng_Latn.txt").write_bytes(b"good\n\nfine line\nab\xffc\n")
    with pytest.raises(CorpusError, match=r"eng_Latn\.txt:4:3: not valid UTF-8 \(byte ff"):
        list(CorpusStream([tmp_path / "eng_Latn.txt"]).batches())


def test_chunks_of_batches_hold_about_the_chunk_size_in_bytes(monkeypatch):
    """Chunk size is counted in UTF-8 bytes (Bengali has about 2.7 per character), so memory per
    worker stays bounded whatever the script."""
    from fertility.engine.chunks import CHUNK_BYTES

    assert CHUNK_BYTES >= CorpusStream.BLOCK_BYTES
    monkeypatch.setattr(CorpusStream, "BLOCK_BYTES", 1 << 12)
    stream = CorpusStream([shared("flores200", "dev", "ben_Beng.txt"), shared("flores200", "dev", "eng_Latn.txt")])
    sizes = [chunk.n_bytes for chunk in chunked(stream.batches(), chunk_bytes=1 << 15)]
    assert len(sizes) > 8 and max(sizes) <= (1 << 15) + (1 << 12) + 1000  # a block ends at a line end
    assert min(sizes[:-1]) >= (1 << 15) - 1000  # less only by the newlines and blank lines read


def test_freed_memory_is_kept_for_reuse_where_glibc_allows(tmp_path):
    """The thresholds are set in the command's process and its workers (never in a library
    caller's); the counts do not change with them."""
    from fertility.engine.malloc import keep_freed_memory

    glibc = sys.platform.startswith("linux") and "glibc" in " ".join(__import__("platform").libc_ver())
    assert keep_freed_memory() is glibc
    corpus = shared("flores200", "devtest", "ben_Beng.txt")
    done = subprocess.run([sys.executable, "-m", "fertility", "audit", str(corpus), "-t", "bytes", "-q", "-f", "json",
                           "--jobs", "2", "--no-cache"], check=True, capture_output=True, text=True, timeout=300)
    row = json.loads(done.stdout)["rows"][0]
    assert row["n_bytes"] == row["n_tokens"] == len(corpus.read_bytes().replace(b"\n", b""))


def test_continuation_tokens_of_tiled_tokens_are_counted_by_word(monkeypatch):
    """Where a backend's tokens tile the text (tiktoken), continuation tokens are counted per
    word (all but the token covering the word's first byte); otherwise per token start. Both
    give the same counts on real text of every script the samples hold."""
    from fertility.backends import _tiktoken
    from fertility.io.samples import samples_dir

    by_word = fertility.audit(["tiktoken:cl100k_base"], [samples_dir()], cache=False, jobs=1, diagnose=False)
    original = _tiktoken.TiktokenTokenizer.tokens_from_ids

    def untiled(self, counts, ids):
        return original(self, counts, ids)._replace(tiled=False)
    monkeypatch.setattr(_tiktoken.TiktokenTokenizer, "tokens_from_ids", untiled)
    by_start = fertility.audit(["tiktoken:cl100k_base"], [samples_dir()], cache=False, jobs=1, diagnose=False)
    assert by_word.counts == by_start.counts
    assert sum(c.n_continuation_tokens for c in by_word.counts.values()) > 1000


def test_absorbing_chunk_results_equals_merging_them_and_leaves_them_as_they_were():
    """The executors add each chunk's result into their running total in place (`absorb`);
    the total must equal the fold with `merge` (new results each time), every field (token id
    tallies, offenders, example pools, per-document rows), and the chunk results must not
    change: a counter shared by reference would be changed by the next chunk. That merging
    any split gives the whole is test_merging_any_split_gives_the_whole."""
    import copy
    import dataclasses

    documents = flores_documents(40)
    chunk = next(chunked(documents, chunk_bytes=1 << 40, sample_bytes=1 << 20))
    tokenizers = [tokenizer("tiktoken:cl100k_base"), tokenizer("spm")]
    from fertility.engine.documents import PerDocument

    results = [measure_chunk(part, tokenizers, evidence=True, per_document=PerDocument(words=True))
               for part in split(chunk, [37, 80, 81, 150])]
    before = copy.deepcopy(results)
    folded = ChunkResult()
    for result in results:
        folded = folded.merge(result)
    total = ChunkResult()
    for result in results:
        total = total.absorb(result)

    def equal(x, y) -> bool:  # arrays, and tuples, lists and dataclasses holding them
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            return np.array_equal(x, y)
        if dataclasses.is_dataclass(x) and dataclasses.is_dataclass(y):
            return type(x) is type(y) and all(equal(getattr(x, f.name), getattr(y, f.name))
                                              for f in dataclasses.fields(x))
        if isinstance(x, (tuple, list)) and isinstance(y, (tuple, list)):
            return len(x) == len(y) and all(equal(a, b) for a, b in zip(x, y))
        return x == y

    def same(a: ChunkResult, b: ChunkResult) -> bool:
        rows_equal = equal(*[r.documents.finish(2) if r.documents is not None else None for r in (a, b)])
        plain = [copy.copy(r) for r in (a, b)]
        for r in plain:
            r.documents = None
        return rows_equal and plain[0] == plain[1] and plain[0].fast_path == plain[1].fast_path
    assert same(total, folded)
    assert all(same(r, b) for r, b in zip(results, before))
    assert any(total.offenders.values()) and all(stats.ids for stats in total.tokens.values())
    assert total.documents is not None


@pytest.mark.parametrize("spec", ["tiktoken:cl100k_base", "spm", "hf"])
def test_offenders_of_a_chunk_are_the_flagged_characters_of_each_text(spec):
    """The engine counts offenders for a whole chunk at once (a byte -> character table, counts
    by code point); the per-text reference (`flagged_chars`: a set of characters per token
    range) must agree, language by language, on real lines of five scripts in one chunk."""
    from collections import Counter

    from fertility.engine.count import flagged_chars

    documents = flores_documents(12)
    chunk = one_chunk(documents)
    result = measure_chunk(chunk, [tokenizer(spec)], evidence=True)
    expected: dict[str, Counter] = {}
    for text, lang in zip(chunk.texts, chunk.langs):
        found = flagged_chars(text, profile(text), tokenizer(spec).encode([text])[0])
        if found:
            expected.setdefault(lang, Counter()).update(found)
    got = {lang: counter for (_, lang), counter in result.offenders.items() if counter}
    assert got == expected
    assert sum(map(len, got.values())) > 10
