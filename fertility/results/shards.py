"""Shards and merge: `audit --shard K/N` measures the K-th of N deterministic slices of the
corpus and writes a partial audit JSON; `merge` sums the parts exactly (counts are additive
integers), after refusing parts from different tokenizers or settings, or overlapping parts.

The slice is by document: document i (0-based, in reading order across all files) belongs to
shard i mod N + 1. Every part reads the whole corpus (reading is cheap beside tokenizing) so
that every part carries the same corpus hash, languages and scripts, which `merge` checks.
Findings need evidence a partial JSON does not carry: parts are audited without findings and
a merged audit has none (run a plain audit, or one with --sample-docs, for findings).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import TypeVar

from fertility.errors import InputError, UsageError
from fertility.io.numbers import MAX_SHARDS
from fertility.io.parallel import not_parallel
from fertility.metrics.counts import Counts

from .model import AuditResult
from .signature import fast_path_chunks, read_fast_path_chunks

T = TypeVar("T")
SLICING = "documents i with i mod N = K-1, in reading order"


_SHARD = re.compile(r"\s*([0-9]+)\s*/\s*([0-9]+)\s*", re.ASCII)


def parse_shard(text: str) -> tuple[int, int]:
    """`3/8` -> (3, 8), 1 <= K <= N <= MAX_SHARDS, in ASCII digits (`int` would also take `１`
    and fail on `²`, which `str.isdigit` lets through)."""
    match = _SHARD.fullmatch(text)
    if not match or len(text) > 40 or not 1 <= int(match[1]) <= int(match[2]):
        raise UsageError(f"--shard {text!r}: expected K/N with 1 <= K <= N in ASCII digits, e.g. 1/4")
    k, n = int(match[1]), int(match[2])
    if n > MAX_SHARDS:
        raise UsageError(f"--shard {text!r}: at most {MAX_SHARDS:,} shards")
    return k, n


def select(documents: Iterable[T], shard: tuple[int, int]) -> Iterator[T]:
    k, n = shard
    for index, doc in enumerate(documents):
        if index % n == k - 1:
            yield doc


def check_shard(shard: tuple[int, int]) -> tuple[int, int]:
    """The library's own check of what parse_shard gives the command line."""
    k, n = shard
    if not 1 <= k <= n <= MAX_SHARDS:
        raise UsageError(f"shard {k}/{n}: expected K/N with 1 <= K <= N <= {MAX_SHARDS:,}")
    return shard


def shard_settings(shard: tuple[int, int] | None) -> dict[str, str]:
    return {"shard": f"{shard[0]}/{shard[1]}", "shard_slicing": SLICING} if shard else {}


@dataclasses.dataclass(frozen=True)
class Missing:
    """The first missing shard numbers (at most LISTED) and how many are missing in all: a
    part may claim a billion shards, which are counted, never listed."""

    first: tuple[int, ...]
    n_missing: int

    LISTED = 20

    def __bool__(self) -> bool:
        return self.n_missing > 0

    def __str__(self) -> str:
        shown = ", ".join(map(str, self.first))
        return shown if self.n_missing <= len(self.first) else f"{shown} and {self.n_missing - len(self.first):,} more"

    def shards(self) -> str:
        """`shard 2` for one, `shards 2, 3` for more: 'shards 3 of 3 are missing' read as all three."""
        return f"shard{'' if self.n_missing == 1 else 's'} {self}"


def _missing(seen: dict[int, str], total: int) -> Missing:
    """Missing shards in O(parts), whatever the number of shards a part claims."""
    first: list[int] = []
    k = 1
    while len(first) < Missing.LISTED and k <= total:
        if k not in seen:
            first.append(k)
        k += 1
    return Missing(tuple(first), total - len(seen))


def _without_shard(result: AuditResult) -> dict:
    data = result.signature.to_dict()
    for key in ("shard", "shard_slicing"):
        data.pop(key, None)
    # how many chunks a fast path counted is each part's own tally, not a setting
    data["tokenizers"] = {name: {key: value for key, value in info.items() if key != "fast_path_chunks"}
                          for name, info in data.get("tokenizers", {}).items()}
    return data


def _summed_fast_path_chunks(parts: Sequence[AuditResult]) -> dict[str, dict]:
    """The first part's tokenizer entries, with each fast path's chunk tally summed over the parts."""
    tokenizers = {name: dict(info) for name, info in parts[0].signature.tokenizers.items()}
    for name, info in tokenizers.items():
        tallies = [read_fast_path_chunks(part.signature.tokenizers.get(name, {}).get("fast_path_chunks"))
                   for part in parts]
        if "fast_path_chunks" in info and all(tally is not None for tally in tallies):
            info["fast_path_chunks"] = fast_path_chunks(*(sum(column) for column in zip(*tallies)))
    return tokenizers


def merge(parts: Sequence[AuditResult], names: Sequence[str], *,
          partial: bool = False) -> tuple[AuditResult, Missing]:
    """The whole audit from its parts, and the shards missing (an error unless `partial`)."""
    if not parts:
        raise UsageError("merge needs at least one part")
    seen: dict[int, str] = {}
    total = None
    for part, name in zip(parts, names):
        shard = part.signature.extra.get("shard")
        if not isinstance(shard, str) or "/" not in shard:
            raise InputError(f"{name}: not a shard part (write parts with `fertility audit --shard K/N -f json`)")
        try:
            k, n = parse_shard(shard)
        except UsageError:
            raise InputError(f"{name}: not a shard part: its signature's shard {shard!r} is not K/N with "
                             f"1 <= K <= N <= {MAX_SHARDS:,}") from None
        total = total or n
        if n != total:
            raise InputError(f"{name}: shard {shard}, but {names[0]} is one of {total} shards")
        if k in seen:
            raise InputError(f"{name}: shard {k}/{n} again (also {seen[k]}); each shard may be merged once")
        seen[k] = name
        if _without_shard(part) != _without_shard(parts[0]):
            one, this = _without_shard(parts[0]), _without_shard(part)
            differ = [key for key in {*one, *this} if one.get(key) != this.get(key)]
            raise InputError(f"{name}: made with other tokenizers or settings than {names[0]} "
                             f"(they differ in {', '.join(sorted(differ))})")
    assert total is not None
    missing = _missing(seen, total)
    if missing and not partial:
        raise InputError(f"{missing.shards()} of {total} {'is' if missing.n_missing == 1 else 'are'} missing "
                         f"(merge {'it' if missing.n_missing == 1 else 'them'} too, or pass --partial for a merge of {len(seen)} of {total})")
    counts: dict[tuple[str, str], Counts] = {}
    for part in parts:
        for key, value in part.counts.items():
            counts[key] = counts[key] + value if key in counts else value
    token_stats: dict[tuple[str, str], dict] = {}  # token lengths add up; Rényi needs the id counts
    for key in parts[0].token_stats:
        lengths = [part.token_stats.get(key, {}).get("token_lengths") for part in parts]
        if all(lengths):
            token_stats[key] = {"token_lengths": [sum(column) for column in zip(*lengths)],
                                "renyi_efficiency": None}
    first = parts[0]
    extra = {k: v for k, v in first.signature.extra.items() if k not in ("shard", "shard_slicing")}
    extra["merged_shards"] = (f"{len(seen)} of {total}" + (f" (missing {missing})"
                                                           if missing else ""))
    if missing and extra.get("parallel", {}).get("parallel"):  # every N-th document: not the same lines
        extra["parallel"] = not_parallel(f"merged without {missing.shards()}, so the "
                                         "languages keep different lines of the corpus").to_dict()
    extra["findings"] = "not available after a merge (parts carry counts only)"
    extra["token_statistics"] = ("token lengths summed; Rényi efficiency and tokens never produced "
                                 "not available after a merge (parts carry no id counts)")
    signature = dataclasses.replace(first.signature, extra=extra, tokenizers=_summed_fast_path_chunks(parts))
    scripts: dict[str, str] = {}
    for part in parts:
        scripts.update(part.scripts)
    return AuditResult(signature=signature, tokenizers=first.tokenizers, scripts=dict(sorted(scripts.items())),
                       counts=counts, diagnosed=False, reference=first.reference, token_stats=token_stats), missing


__all__ = ["merge", "parse_shard", "select", "shard_settings"]
