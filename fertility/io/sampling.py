"""Sampling per language (`--sample-docs N`, `--sample-bytes SIZE`) and 95% intervals over the
sampled documents.

The sample is hash-based: each document gets a key, a hash of the seed and its index within its
language (line i of a language has the same key in every language); a language keeps the N
documents with the smallest keys (or the fewest smallest keys whose bytes reach SIZE). A parallel
corpus (parallel.py) therefore keeps the same lines in every language: with N documents this
follows from the keys; with SIZE, every language keeps as many lines as the language that
reaches SIZE with the fewest (the one with the most bytes per line), so all keep the same ones.
It streams (only the sample is held), it is the same for any --jobs, shard or chunking, and it
is yielded in reading order. Shards of a sampled audit take their slice of the same sample.

Intervals: a ratio such as chars_per_token is a ratio estimator R = sum(y) / sum(x) over the
sampled documents; its 95% interval is R +- 1.96 * SE with the linearization (delta method)
SE^2 = sum((y_i - R x_i)^2) / (n (n - 1) mean(x)^2).
"""

from __future__ import annotations

import hashlib
import heapq
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import regex

from fertility.errors import UsageError

from .numbers import MAX_SAMPLE_BYTES

Z95 = 1.959963984540054
_SIZE = regex.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([kmgt]?)(i?b?)\s*$", regex.IGNORECASE | regex.ASCII)


def parse_size(text: str, *, option: str = "--sample-bytes") -> int:
    """`500k`, `10MB`, `1GiB`, `2000` -> bytes (k = 1000, Ki = 1024), in ASCII digits; a size
    that rounds down to no byte at all (`0.1`) is refused, as a sample of nothing would be."""
    match = _SIZE.match(text)
    if not match:
        raise UsageError(f"{option} {text!r}: expected a size such as 500k, 10MB or 1GiB")
    power = " kmgt".index(match[2].lower() or " ")
    base = 1024 if match[3].lower().startswith("i") else 1000
    amount = float(match[1]) * base ** power  # 400 digits make an infinite float, which int() refuses
    if not math.isfinite(amount) or amount > MAX_SAMPLE_BYTES:
        raise UsageError(f"{option} {text[:40]!r}{'...' if len(text) > 40 else ''}: more than "
                         f"{MAX_SAMPLE_BYTES:,} bytes per language")
    size = int(amount)
    if size < 1:
        raise UsageError(f"{option} {text!r}: expected a size of at least one byte, such as 500k, 10MB or 1GiB "
                         "(this one rounds down to 0 bytes)")
    if size > MAX_SAMPLE_BYTES:
        raise UsageError(f"{option} {text!r}: more than {MAX_SAMPLE_BYTES:,} bytes per language")
    return size


@dataclass(frozen=True)
class Sample:
    docs: int | None = None
    bytes: int | None = None
    seed: int = 0

    def describe(self) -> str:
        size = f"{self.docs} documents" if self.docs is not None else f"{self.bytes} bytes"
        return (f"{size} per language, seed {self.seed}, smallest blake2b(seed, index in lang) keys "
                "(the same lines in every language of a parallel corpus), in reading order")


def _key(seed: int, index: int) -> bytes:
    return hashlib.blake2b(f"{seed}\0{index}".encode(), digest_size=16).digest()


def sample(documents: Iterable, plan: Sample, *, aligned: Callable[[], bool] | None = None) -> Iterator:
    """The sampled documents (with `.lang` and `.text`) in reading order. `aligned()`, asked once
    every document has been seen, says whether the corpus is parallel: then a byte-sized sample
    keeps the same lines in every language."""
    heaps: dict[str, list] = {}  # per language: max-heap of (negated key, position, doc, n_bytes)
    sizes: dict[str, int] = {}
    seen: dict[str, int] = {}
    for position, doc in enumerate(documents):
        index = seen.get(doc.lang, 0)
        seen[doc.lang] = index + 1
        key = _key(plan.seed, index)
        negated = bytes(255 - b for b in key)
        heap = heaps.setdefault(doc.lang, [])
        n_bytes = len(doc.text.encode("utf-8"))
        if plan.docs is not None:
            if len(heap) < plan.docs:
                heapq.heappush(heap, (negated, position, doc, n_bytes))
            elif negated > heap[0][0]:
                heapq.heapreplace(heap, (negated, position, doc, n_bytes))
            continue
        heapq.heappush(heap, (negated, position, doc, n_bytes))
        sizes[doc.lang] = sizes.get(doc.lang, 0) + n_bytes
        assert plan.bytes is not None
        while sizes[doc.lang] - heap[0][3] >= plan.bytes:  # still SIZE without the largest key
            sizes[doc.lang] -= heapq.heappop(heap)[3]
    if plan.bytes is not None and len(heaps) > 1 and aligned is not None and aligned():
        fewest = min(len(heap) for heap in heaps.values())  # the same smallest keys in every language
        heaps = {lang: heapq.nlargest(fewest, heap) for lang, heap in heaps.items()}
    kept = sorted((item[1], item[2]) for heap in heaps.values() for item in heap)
    for _, doc in kept:
        yield doc


def ratio_interval(ys: list[int], xs: list[int]) -> float | None:
    """Half-width of the 95% interval of sum(ys)/sum(xs) over documents; None below 2 documents."""
    n = len(xs)
    if n < 2 or not sum(xs):
        return None
    r = sum(ys) / sum(xs)
    mean_x = sum(xs) / n
    variance = sum((y - r * x) ** 2 for y, x in zip(ys, xs)) / (n * (n - 1) * mean_x ** 2)
    return Z95 * math.sqrt(variance)


def intervals(documents, names: list[str]) -> dict[str, dict[str, dict[str, float | None]]]:
    """tokenizer -> language -> {chars_per_token, bytes_per_token: half-width, n_documents}, from
    the audit's per-document values (engine.documents.Documents)."""
    out: dict[str, dict[str, dict[str, float | None]]] = {}
    by_lang = documents.by_language()
    for t, name in enumerate(names):
        for lang, positions in by_lang.items():
            tokens = documents.tokens[t][positions].tolist()
            out.setdefault(name, {})[lang] = {
                "chars_per_token": ratio_interval(documents.n_chars[positions].tolist(), tokens),
                "bytes_per_token": ratio_interval(documents.n_bytes[positions].tolist(), tokens),
                "n_documents": len(positions),
            }
    return out


def footer(result) -> str:
    """`ben_Beng 0.82 ± 0.01` lines under a table, for a sampled audit."""
    if not getattr(result, "intervals", None):
        return ""
    lines = ["", "95% intervals over sampled documents (chars/token, bytes/token):"]
    frame = result.to_frame()
    for name, langs in result.intervals.items():
        for lang, found in langs.items():
            row = frame[(frame.tokenizer == name) & (frame.lang == lang)].iloc[0]
            cells = []
            for ratio in ("chars_per_token", "bytes_per_token"):
                half = found[ratio]
                cells.append(f"{row[ratio]:.3f} ± {half:.3f}" if half is not None else f"{row[ratio]:.3f}")
            lines.append(f"  {name} {lang} {cells[0]}  {cells[1]}  (n={found['n_documents']})")
    return "\n".join(lines) + "\n"


__all__ = ["Sample", "footer", "intervals", "parse_size", "ratio_interval", "sample"]
