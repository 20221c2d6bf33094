"""Numbers given by a user (options, config values): parsed strictly, checked against the range
where they mean something, before any of them reaches native code.

Python's `int()` and `float()` accept more than a user means: `int("１")` is 1 (a fullwidth
digit), `float("nan")` and `float("1e999")` (infinity) pass every comparison a range check makes
with `<`, and a vocabulary size of 2**32 reaches the Rust trainer, which reserves memory for that
many entries up front and aborts the process (signal 6) instead of raising. So every number is
ASCII, finite and inside the range of its kind, checked here, with one message per kind.
"""

from __future__ import annotations

import math
import re

from fertility.errors import UsageError

# The Rust BPE trainer reserves room for `vocab_size` entries when it starts: 2**28 aborted the
# process (memory allocation failed); 2**24 (64 times the largest published vocabularies, which
# are 2**18) trains in well under 200 MB. Token ids must also fit the u32 the runtimes use.
MAX_VOCAB_SIZE = 1 << 24
MAX_JOBS = 256  # worker processes: each is forked at start; more than this only costs memory
MAX_COUNT = (1 << 31) - 1  # any other count handed to native code fits its i32/u32/usize
MAX_SEED = (1 << 64) - 1
MAX_SHARDS = 1_000_000  # `merge` lists the missing shards of N; SLURM arrays stop far below
MAX_SAMPLE_BYTES = 1 << 50  # a petabyte per language: beyond it a sample is no sample
# Training repeats each document `weight` times: 10**12 copies asked for terabytes of references.
MAX_WEIGHT = 10_000.0
# Temperature sampling raises shares to 1/T: below 0.01 every share underflows to 0 (a division by
# zero); above 1000 the shares are equal to many digits, as --balance equal makes them.
MIN_TEMPERATURE, MAX_TEMPERATURE = 0.01, 1000.0

_INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)
_REAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)


def whole(value: object, *, option: str, low: int, high: int) -> int:
    """An integer in [low, high], from a Python int or from text of ASCII digits."""
    if isinstance(value, bool):  # True is an int to Python, not to a user
        raise UsageError(f"{option} {value!r}: expected a whole number from {low:,} to {high:,}")
    if isinstance(value, str):
        text = value.strip()
        if not _INTEGER.fullmatch(text) or len(text) > 40:
            raise UsageError(f"{option} {value!r}: expected a whole number from {low:,} to {high:,} "
                             "(ASCII digits)")
        value = int(text)
    if not isinstance(value, int):
        raise UsageError(f"{option} {value!r}: expected a whole number from {low:,} to {high:,}")
    if not low <= value <= high:
        raise UsageError(f"{option} {value:,}: out of range (from {low:,} to {high:,})")
    return value


def real(value: object, *, option: str, low: float = -math.inf, high: float = math.inf,
         low_open: bool = False, high_open: bool = False) -> float:
    """A finite number in the range (inclusive unless `*_open`), from a Python number or ASCII
    text; NaN and infinities are refused whatever the range, since NaN passes every comparison
    a check could make."""
    wanted = f"a finite number{describe_range(low, high, low_open, high_open)}"
    if isinstance(value, str):
        text = value.strip()
        if not _REAL.fullmatch(text):
            raise UsageError(f"{option} {value!r}: expected {wanted}, in ASCII digits (e.g. 0.05)")
        value = float(text)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UsageError(f"{option} {value!r}: expected {wanted}")
    try:
        number = float(value)
    except OverflowError:  # an integer beyond any float
        raise UsageError(f"{option} {value}: expected {wanted}") from None
    if not math.isfinite(number):
        raise UsageError(f"{option} {value!r}: expected {wanted}")
    if number < low or number > high or (low_open and number == low) or (high_open and number == high):
        raise UsageError(f"{option} {value!r}: out of range (expected {wanted})")
    return number


def describe_range(low: float, high: float, low_open: bool, high_open: bool) -> str:
    if math.isinf(low) and math.isinf(high):
        return ""
    if math.isinf(high):
        return f" {'above' if low_open else 'of at least'} {low:g}"
    if math.isinf(low):
        return f" {'below' if high_open else 'of at most'} {high:g}"
    return f" in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"


__all__ = ["MAX_COUNT", "MAX_JOBS", "MAX_SAMPLE_BYTES", "MAX_SEED", "MAX_SHARDS", "MAX_TEMPERATURE", "MAX_VOCAB_SIZE",
           "MAX_WEIGHT", "MIN_TEMPERATURE", "describe_range", "real", "whole"]
