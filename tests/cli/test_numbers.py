"""Numbers from users (numbers.py, options.py): ASCII, finite, in range, before native code.

The vocabulary size 2**32 once reached the Rust BPE trainer, which reserves memory for that many
entries and aborts the whole process (signal 6, no message); `int("１")` and `float("nan")`
are Python's, not a user's. These tests hold every command to the shared parsers and attack
them with text nobody listed.
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import click
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fertility.cli import cli
from fertility.errors import UsageError
from fertility.io.numbers import MAX_JOBS, MAX_VOCAB_SIZE, real, whole
from fertility.io.sampling import parse_size
from fertility.results.shards import parse_shard

ENG = "The river market opens at dawn.\nBoats arrive.\n"
BEN = "নদীর বাজার ভোরে খোলে।\nনৌকা আসে।\n"


def test_no_command_takes_a_number_with_clicks_own_types() -> None:
    """One parser per kind of number: click's INT/FLOAT/IntRange/FloatRange take `１`, `nan`
    and `inf`, so none of them may remain on any option of any command."""
    loose = (click.types.IntParamType, click.types.FloatParamType)
    found = []
    for name, command in cli.commands.items():
        for param in command.params:
            if isinstance(param.type, loose):
                found.append(f"{name} {param.name}")
    assert found == []


@given(st.text(max_size=12))
def test_whole_gives_an_ascii_integer_in_range_or_one_usage_error(text: str) -> None:
    try:
        value = whole(text, option="--n", low=1, high=1000)
    except UsageError as err:
        assert str(err).startswith("--n ")
        return
    assert 1 <= value <= 1000
    assert re.fullmatch(r"\s*\+?0*[0-9]+\s*", text, re.ASCII)


@given(st.characters(categories=["Nd"]).filter(lambda c: not c.isascii()))
def test_digits_of_other_scripts_are_refused(digit: str) -> None:
    """int() reads Bengali ৩ or fullwidth ３ as 3; a user typing them made a slip."""
    assert int(digit) == unicodedata.digit(digit)
    with pytest.raises(UsageError):
        whole(digit, option="--jobs", low=1, high=MAX_JOBS)
    with pytest.raises(UsageError):
        real(digit, option="--parity-alpha")
    with pytest.raises(UsageError):
        parse_shard(f"{digit}/9")


@given(st.one_of(st.floats(), st.integers(), st.text(max_size=10)))
def test_real_never_lets_nan_or_infinity_through(value: object) -> None:
    try:
        number = real(value, option="--x", low=0.0, high=1.0)
    except UsageError:
        return
    assert math.isfinite(number) and 0.0 <= number <= 1.0


@pytest.mark.parametrize("text", ["nan", "NaN", "inf", "-inf", "infinity", "1e999", "1_000", "0x10", "1,5", ""])
def test_what_float_accepts_but_a_threshold_is_not(text: str) -> None:
    with pytest.raises(UsageError):
        real(text, option="--max-regression")


@given(st.floats(min_value=0, max_value=0.999, allow_nan=False), st.sampled_from(["", "b", "B"]))
def test_a_size_below_one_byte_is_refused(size: float, unit: str) -> None:
    with pytest.raises(UsageError, match="at least one byte"):
        parse_size(f"{size:.3f}{unit}")


@pytest.mark.parametrize("text", ["1/²", "¹/2", "１/2", "1/٢", "0/3", "4/3", "1/1000001", "1/2/3", "-1/2", ""])
def test_shards_outside_ascii_or_range(text: str) -> None:
    with pytest.raises(UsageError, match="--shard"):
        parse_shard(text)


def test_library_calls_check_the_same_ranges(tmp_path: Path) -> None:
    """The library refuses what the command line refuses, before any native call."""
    import fertility
    from fertility.train.retrain import retrain

    (tmp_path / "eng_Latn.txt").write_text(ENG, encoding="utf-8")
    with pytest.raises(UsageError, match="--vocab-size 4,294,967,296: out of range"):
        retrain([tmp_path], output=tmp_path / "tok", vocab_size=2**32)
    with pytest.raises(UsageError, match="--jobs 1,000,000: out of range"):
        fertility.audit(["bytes"], [tmp_path], jobs=10**6)
    with pytest.raises(UsageError, match="min_frequency -1: out of range"):
        retrain([tmp_path], output=tmp_path / "tok", vocab_size=1000, min_frequency=-1)
    assert not (tmp_path / "tok").exists()


@pytest.mark.parametrize("args", [
    ["retrain", "corpus", "--vocab-size", str(2**32), "-o", "tok", "-q"],
    ["retrain", "corpus", "--vocab-size", str(2**40 + 1), "-o", "tok", "-q"],
    ["retrain", "corpus", "--vocab-size", "1000", "--trainer", "parity", "--max-token-clusters", str(2**64), "-o", "tok"],
], ids=["vocab-2^32", "vocab-2^40", "parity-cap-2^64"])
def test_no_native_abort_in_a_real_process(tmp_path: Path, args: list[str]) -> None:
    """A subprocess, since an abort inside Rust would take the test runner down with it."""
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "eng_Latn.txt").write_text(ENG, encoding="utf-8")
    (tmp_path / "corpus" / "ben_Beng.txt").write_text(BEN, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "fertility", *args], check=False, cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert done.stderr.startswith("fertility: error: --") and "out of range" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "tok").exists()


def test_the_largest_vocabulary_allowed_trains_within_a_small_memory_ceiling(tmp_path: Path) -> None:
    """MAX_VOCAB_SIZE is safe, not only refused above: the trainer's up-front reservation for
    2**24 entries stays far below 600 MB peak RSS (2**28 aborted)."""
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "eng_Latn.txt").write_text(ENG, encoding="utf-8")
    script = ("import resource, subprocess, sys\n"
              "done = subprocess.run([sys.executable, '-m', 'fertility', 'retrain', 'corpus', '--vocab-size', "
              f"'{MAX_VOCAB_SIZE}', '-o', 'tok', '-q', '-f', 'csv'], capture_output=True)\n"
              "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    done = subprocess.run([sys.executable, "-c", script], check=False, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    code, peak_kib = map(int, done.stdout.split())
    assert code == 0, done.stderr
    assert peak_kib < 600 * 1024
    assert (tmp_path / "tok" / "tokenizer.json").is_file()
