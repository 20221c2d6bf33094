"""The fast path's check of every batch: which texts the library encodes too, and what differs
between the fast tokens and the library's, token by token.

Kept apart from FastPath (`_gigatoken.py`) so that the exactness matrix
(`benchmarks/fastpath_matrix.py`) compares with the very functions the audit uses.
"""

from __future__ import annotations

import numpy as np

from . import Tokens

# The self-check: per batch, up to SAMPLE_TEXTS texts at evenly spaced positions (the first and
# the last included), as long as they fit in SAMPLE_SHARE of its bytes (at least SAMPLE_MIN_BYTES).
SAMPLE_TEXTS = 16
SAMPLE_SHARE = 0.02
SAMPLE_MIN_BYTES = 8192


def check_description() -> str:
    return (f"every batch: each text's tokens must cover exactly its bytes, and up to {SAMPLE_TEXTS} texts "
            f"at evenly spaced positions (at most {SAMPLE_SHARE:.0%} of its bytes, at least "
            f"{SAMPLE_MIN_BYTES} bytes) are encoded by the library too and compared token by token "
            "(ids, spans, kinds); on any difference the batch takes the library's tokens")


def cumulative(sizes: np.ndarray) -> np.ndarray:
    out = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=out[1:])
    return out


def byte_sizes(texts: list[str]) -> np.ndarray:
    return np.fromiter((len(t.encode("utf-8", errors="surrogatepass")) for t in texts), dtype=np.int64,
                       count=len(texts))


def sample_positions(sizes: np.ndarray) -> list[int]:
    """The texts of a batch the library encodes too: evenly spaced, within the byte budget."""
    n = len(sizes)
    if n == 0:
        return []
    k = min(n, SAMPLE_TEXTS)
    positions = sorted({(j * (n - 1)) // (k - 1) for j in range(k)} if k > 1 else {0})
    budget = max(SAMPLE_MIN_BYTES, int(SAMPLE_SHARE * int(sizes.sum())))
    chosen, used = [], 0
    for i in positions:
        if used + int(sizes[i]) <= budget:
            chosen.append(i)
            used += int(sizes[i])
    return chosen


def _spans_base(tokens: Tokens, texts: list[str], sizes: np.ndarray) -> np.ndarray:
    return cumulative(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)) if tokens.in_chars else sizes)


_NO_SUCH_TOKENS = ("unknown", "byte_fallback")  # None there means: no token of that kind


def _per_token(values: np.ndarray | None, field: str, a: int, b: int) -> np.ndarray | None:
    if values is None and field in _NO_SUCH_TOKENS:
        return np.zeros(b - a, dtype=bool)
    return None if values is None else values[a:b]


def difference(fast: Tokens, texts: list[str], sizes: np.ndarray, library: Tokens,
               positions: list[int]) -> tuple[int, str] | None:
    """(text index, what differs) between the fast tokens of `texts` and the library's tokens
    of the texts at `positions`, or None when they agree token by token. Every field of Tokens
    is compared, so one the library starts to fill and the fast path does not is a difference."""
    per_token = [f for f in Tokens._fields if f not in ("counts", "starts", "ends")
                 and (isinstance(getattr(fast, f), np.ndarray) or isinstance(getattr(library, f), np.ndarray))]
    settings = [f for f in Tokens._fields if f not in ("counts", "starts", "ends") and f not in per_token]
    for field in settings:
        if getattr(fast, field) != getattr(library, field):
            return (positions[0] if positions else 0), f"the tokens differ in {field}"
    fast_edges, lib_edges = cumulative(fast.counts), cumulative(library.counts)
    fast_base = _spans_base(fast, texts, sizes)
    lib_base = _spans_base(library, [texts[i] for i in positions], sizes[positions])
    for j, i in enumerate(positions):
        a, b = int(fast_edges[i]), int(fast_edges[i + 1])
        c, d = int(lib_edges[j]), int(lib_edges[j + 1])
        if b - a != d - c:
            return i, f"{b - a} tokens, the library {d - c}"
        for field in per_token:
            mine = _per_token(getattr(fast, field), field, a, b)
            theirs = _per_token(getattr(library, field), field, c, d)
            if mine is None or theirs is None or not np.array_equal(mine, theirs):
                return i, f"token {field} differ"
        if not (np.array_equal(fast.starts[a:b] - fast_base[i], library.starts[c:d] - lib_base[j])
                and np.array_equal(fast.ends[a:b] - fast_base[i], library.ends[c:d] - lib_base[j])):
            return i, "token spans differ"
    return None


def first_difference(counts: np.ndarray, ids: np.ndarray, library: Tokens) -> tuple[str, int | None]:
    """What differs first between fast ids and the library's, and in which text."""
    mine, theirs = cumulative(counts), cumulative(library.counts)
    for i in range(min(len(counts), len(library.counts))):
        a, b, c, d = mine[i], mine[i + 1], theirs[i], theirs[i + 1]
        if b - a != d - c:
            return f"{b - a} tokens, the library {d - c}", i
        if library.ids is None or not np.array_equal(ids[a:b], library.ids[c:d]):
            return "token ids differ", i
    return "the batches differ in length", None
