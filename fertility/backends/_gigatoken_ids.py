"""Running gigatoken: its token ids for a batch of texts, in bounded memory.

The one place that calls gigatoken's encoder, and so the one that must keep its caches from
growing without end: it sets the budget where gigatoken offers one, else it watches the
process's heap (glibc's mallinfo2) or the text read, and rebuilds the encoder. What the ids
mean, and whether they are right, is for `_gigatoken.py` and `_gigatoken_check.py`.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

# Largest padded id matrix gigatoken fills at once (cells of 4 bytes): memory stays flat
# whatever mix of short and long texts a batch holds.
_CELLS = 1 << 22
# What gigatoken's pre-token caches may take per process (see GigatokenIds).
CACHE_BYTES = 32 << 20
REBUILD_TEXT_BYTES = 64 << 20  # characters, where the heap cannot be seen


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                     "fsmblks", "uordblks", "fordblks", "keepcost")]


def _heap_counter():
    """A function giving the bytes malloc has handed out and not taken back (glibc's
    mallinfo2, over every arena), or None where there is none (macOS, musl, old glibc).
    gigatoken allocates with the system malloc, so its caches show up here, whether or not
    freed memory goes back to the system (fertility keeps it: malloc.py)."""
    import sys

    if not sys.platform.startswith("linux"):
        return None
    try:
        mallinfo2 = ctypes.CDLL("libc.so.6").mallinfo2
    except (OSError, AttributeError):
        return None
    mallinfo2.argtypes, mallinfo2.restype = [], _MallInfo2

    def in_use() -> int:
        info = mallinfo2()
        return int(info.uordblks + info.hblkhd)
    return in_use


class GigatokenIds:
    """gigatoken's ids for a batch of texts: (tokens per text, ids laid end to end).

    gigatoken keeps the tokens of every pre-token it has seen, and 0.10.0 never forgets them
    (6.6 GB after 1 GB of text whose words are all new; FASTPATH.md). Where gigatoken offers a
    budget (the `gigatoken-cachefix` fork's `set_max_cache_bytes`), it is set to CACHE_BYTES.
    Otherwise the encoder is rebuilt from `build` whenever the heap in use has grown by
    CACHE_BYTES since the first batch, or, without a way to see the heap, after every
    REBUILD_TEXT_BYTES of text. Neither changes any id: a rebuilt encoder is the same encoder
    with empty caches.
    """

    def __init__(self, build: Any, how: str):
        import gigatoken
        from gigatoken.gigatoken_rs import BytesSource, PadTruncate

        budget = getattr(gigatoken, "set_max_cache_bytes", None)  # the fork's, absent from 0.10.0
        self._bounded = budget is not None
        if budget is not None:
            budget(CACHE_BYTES)
        self._build, self.how = build, how
        self.backend = build()
        self.rebuilds = 0
        self._heap = None if self._bounded else _heap_counter()
        self._ceiling: int | None = None
        self._text_bytes = 0
        self._options = PadTruncate(0)
        self._source = BytesSource

    def __call__(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(tokens per text, ids laid end to end in text order, UTF-8 bytes per text).

        The texts go over as UTF-8 buffers, not as a list of str: given a list, gigatoken's
        encoder imports awkward to test its type, 0.35-0.55 s of CPU in every process that
        encodes (each worker). A lone surrogate cannot be encoded: UnicodeEncodeError, and the
        caller leaves the batch to the library.

        gigatoken pads each group's rows to its longest, so the texts are grouped by length
        (shortest first) rather than in reading order: on mixed lines reading order padded
        matrices to 12 cells a token. A group stops before its matrix could pass _CELLS (a text
        of n bytes has at most n + 1 tokens: one byte or more each, and a SentencePiece dummy
        prefix). The ids are the same whatever the grouping (tests/test_fastpath.py).
        """
        raw = [text.encode("utf-8") for text in texts]
        sizes = np.fromiter(map(len, raw), dtype=np.int64, count=len(raw))
        order = np.argsort(sizes, kind="stable")
        bound = sizes[order] + 2
        counts = np.zeros(len(raw), dtype=np.int64)
        parts: list[np.ndarray] = []
        start = 0
        while start < len(raw):  # grow each group while rows x its widest bound fit in _CELLS
            fits = (np.arange(1, len(raw) - start + 1, dtype=np.int64) * bound[start:]) <= _CELLS
            stop = start + max(1, int(np.searchsorted(~fits, True)))  # fits is True, then False
            rows = order[start:stop]
            lengths, ids = self._group([raw[i] for i in rows.tolist()])
            counts[rows] = lengths
            parts.append(ids)
            start = stop
        if not self._bounded:
            self._bound_cache(texts)
        if not parts:
            return counts, np.zeros(0, dtype=np.int64), sizes
        by_length = np.concatenate(parts)  # the texts' ids in `order`: put them back in text order
        placed = np.empty(len(raw), dtype=np.int64)
        in_order = counts[order]
        placed[order] = np.cumsum(in_order) - in_order
        first = np.cumsum(counts) - counts
        index = np.arange(len(by_length), dtype=np.int64) + np.repeat(placed - first, counts)
        return counts, by_length[index].astype(np.int64), sizes

    def _group(self, raw: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
        """One padded matrix: each row's length, and the rows' ids laid end to end (gathered by
        index, which costs the tokens, where a mask over the matrix would cost every cell)."""
        matrix, lengths = self.backend.encode_batch_padded(self._source(raw), self._options, parallel=False)
        lengths = np.asarray(lengths, dtype=np.int64)
        first = np.cumsum(lengths) - lengths
        index = np.arange(int(lengths.sum()), dtype=np.int64) + np.repeat(
            np.arange(len(lengths), dtype=np.int64) * matrix.shape[1] - first, lengths)
        return lengths, matrix.reshape(-1)[index]

    def _bound_cache(self, texts: list[str]) -> None:
        if self._heap is None:  # blind: a fresh encoder every REBUILD_TEXT_BYTES of text
            self._text_bytes += sum(map(len, texts))
            if self._text_bytes >= REBUILD_TEXT_BYTES:
                self._rebuild()
                self._text_bytes = 0
            return
        used = self._heap()
        if self._ceiling is None:
            self._ceiling = used + CACHE_BYTES
        elif used > self._ceiling:
            self._rebuild()
            used = self._heap()
            if used > self._ceiling - CACHE_BYTES // 2:  # the rest of the process holds more now
                self._ceiling = used + CACHE_BYTES

    def _rebuild(self) -> None:
        self.backend = None  # freed before the new one is built
        self.backend = self._build()
        self.rebuilds += 1
