"""Click parameter types for every kind of number an option takes, shared by all commands.

Each type parses with `numbers.py` (ASCII digits, finite, in range), so `--jobs １`,
`--vocab-size 4294967296`, `--parity-alpha nan` or `--shard 1/²` fail as one line naming the
option (a `UsageError`, turned into `fertility: error: ...` and exit 2 at the CLI's edge, like
every other bad input), never as click's usage block, a traceback or a native abort.
"""

from __future__ import annotations

import math

import click

from fertility.io.numbers import (
    MAX_COUNT,
    MAX_JOBS,
    MAX_SEED,
    MAX_TEMPERATURE,
    MAX_VOCAB_SIZE,
    MIN_TEMPERATURE,
    real,
    whole,
)


def _option(param: click.Parameter | None) -> str:
    if param is None:
        return "value"
    if isinstance(param, click.Option) and param.opts:
        return max(param.opts, key=len)
    return param.human_readable_name


class Whole(click.ParamType):
    """A whole number in [low, high]."""

    name = "integer"

    def __init__(self, low: int, high: int):
        self.low, self.high = low, high

    def convert(self, value, param, ctx) -> int:
        return whole(value, option=_option(param), low=self.low, high=self.high)


class Real(click.ParamType):
    """A finite number in a range (closed unless `*_open`)."""

    name = "number"

    def __init__(self, low: float = -math.inf, high: float = math.inf, *, low_open: bool = False,
                 high_open: bool = False):
        self.low, self.high, self.low_open, self.high_open = low, high, low_open, high_open

    def convert(self, value, param, ctx) -> float:
        return real(value, option=_option(param), low=self.low, high=self.high,
                    low_open=self.low_open, high_open=self.high_open)


class Size(click.ParamType):
    """A size in bytes: `500k`, `10MB`, `1GiB`, `2000` (at least one byte)."""

    name = "size"

    def convert(self, value, param, ctx) -> int:
        if isinstance(value, int):
            return value
        from fertility.io.sampling import parse_size
        return parse_size(value, option=_option(param))


class Shard(click.ParamType):
    """`K/N` with 1 <= K <= N, in ASCII digits."""

    name = "K/N"

    def convert(self, value, param, ctx) -> tuple[int, int]:
        if isinstance(value, tuple):
            return value
        from fertility.results.shards import parse_shard
        return parse_shard(value)


VOCAB_SIZE = Whole(1, MAX_VOCAB_SIZE)  # retrain --vocab-size (the trainer also needs at least 300)
TOKENS_TO_ADD = Whole(1, MAX_VOCAB_SIZE)  # extend --add
JOBS = Whole(1, MAX_JOBS)  # audit --jobs (worker processes, or LocalCluster workers)
SAMPLE_DOCS = Whole(2, MAX_COUNT)  # audit --sample-docs (an interval needs two documents)
SEED = Whole(0, MAX_SEED)  # audit/retrain --seed
COUNT = Whole(0, MAX_COUNT)  # retrain --min-atom-count, --max-token-clusters (0: no cap)
SHARE = Real(0.0, 1.0, high_open=True)  # retrain --global-merges
SUPERWORD_SHARE = Real(0.0, 1.0, low_open=True, high_open=True)  # retrain --superwords
POSITIVE = Real(0.0, low_open=True)  # retrain --parity-alpha
TEMPERATURE = Real(MIN_TEMPERATURE, MAX_TEMPERATURE)  # retrain --temperature
NUMBER = Real()  # check --max-regression (its range is the gate's: gate.config.THRESHOLD_RANGES)
SIZE = Size()  # audit --sample-bytes
SHARD = Shard()  # audit --shard

__all__ = ["COUNT", "JOBS", "NUMBER", "POSITIVE", "SAMPLE_DOCS", "SEED", "SHARD", "SHARE", "SIZE",
           "TEMPERATURE", "TOKENS_TO_ADD", "VOCAB_SIZE", "Real", "Shard", "Size", "Whole"]
