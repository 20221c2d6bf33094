"""Memory and time are bounded by the input for every reader and loader: the real command, in
its own process, over each hostile input of tests/hostile.py (a line of NUL with no newline
through every compression, a pipe and a FIFO; oversized records, cells, tokenizer files and
saved audits; GGUF headers declaring more than their file holds; a profile cache holding FIFOs
and huge files ...). Each run must stay under PEAK_RSS_MB of resident memory and TIMEOUT
seconds, and end in a correct result or a one-line error (exit 2, no traceback).

The peak is the command's own ru_maxrss, read through a launcher (a process started from
this one would inherit this one's peak); a watchdog kills a run that goes past the timeout or
past KILL_ABOVE_MB, so a regression fails the test instead of exhausting the machine.
Before these limits, the same inputs took from 640 MB to over 2.5 GB, or hung.
"""

from __future__ import annotations

import json

import pytest
from hostile import CASES, Hostile, run

PEAK_RSS_MB = 600
TIMEOUT = 60.0
KILL_ABOVE_MB = 1500.0


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_a_hostile_input_stays_under_the_memory_ceiling(case: Hostile, tmp_path) -> None:
    if case.id.startswith("parquet") or case.id.startswith("arrow"):
        pytest.importorskip("pyarrow")
    measured = run(case, tmp_path / "case", timeout=TIMEOUT, kill_above_mb=KILL_ABOVE_MB)
    assert not measured.killed, (measured.killed, measured.stderr[-2000:])
    assert measured.peak_rss_mb <= PEAK_RSS_MB, f"{case.reader}: peak RSS {measured.peak_rss_mb:.0f} MB"
    assert "Traceback" not in measured.stderr, measured.stderr[-2000:]
    if case.error:
        lines = measured.stderr.strip().splitlines()
        assert measured.exit_code == 2 and len(lines) == 1, measured.stderr
        assert lines[0].startswith("fertility: error: ") and case.error in lines[0], lines[0]
    else:
        assert measured.exit_code == 0, measured.stderr
        assert case.check is None or case.check(json.loads(measured.stdout), measured.stderr), measured.stdout[:2000]


def test_every_reader_and_loader_has_a_hostile_case() -> None:
    """One case at least per corpus format, compression, stream, tokenizer file and saved file."""
    readers = " ".join(case.reader for case in CASES)
    for what in ("plain text", ".gz", ".zst", ".xz", ".bz2", "standard input", "FIFO", "URL", "device",
                 "--per-file", "JSON lines", ".jsonl.gz", "Parquet", "Arrow", "GGUF", "SentencePiece GGUF",
                 "tokenizer.json", ".tiktoken", "SentencePiece .model", "Tekken", "saved audit", "merge",
                 "profile cache", "show --file"):
        assert what in readers, what
