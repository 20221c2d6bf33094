"""Token spans: byte offsets from lengths, from character offsets, from byte pieces, and one
batch laid end to end. Public, because the engine finishes what a backend that reports
character offsets starts (it holds the character table)."""

from __future__ import annotations

import numpy as np

from fertility.text.units import char_to_byte_offsets

from . import Encoded, Tokens


def spans_from_lengths(lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Contiguous tokens of the given byte lengths -> (starts, ends)."""
    ends = np.cumsum(lengths, dtype=np.int64)
    return ends - lengths, ends


def char_spans_to_bytes(text: str, offsets: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """Character offsets (as Hugging Face reports them) -> UTF-8 byte offsets."""
    byte_at = char_to_byte_offsets(text)
    pairs = np.array(offsets, dtype=np.int64).reshape(-1, 2)
    return byte_at[pairs[:, 0]], byte_at[pairs[:, 1]]


def byte_piece_spans(starts: np.ndarray, ends: np.ndarray, is_byte: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """SentencePiece reports the byte pieces of one character as [b, b) ... [b, b) [b, e):
    give the k-th of them the k-th byte, [b+k, b+k+1), so that the boundaries between them
    fall inside the character and the character's word overlaps them all."""
    if not is_byte.any():
        return starts, ends
    index = np.arange(len(starts))
    zero_byte = is_byte & (starts == ends)
    begins = is_byte & ~np.concatenate(([False], zero_byte[:-1]))
    k = index - np.maximum.accumulate(np.where(begins, index, 0))
    new_starts = np.where(is_byte, starts + k, starts)
    return new_starts, np.where(is_byte, new_starts + 1, ends)


def exact_piece_spans(starts: np.ndarray, ends: np.ndarray, piece_bytes: np.ndarray | None
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Byte spans made from character offsets -> each token's own bytes.

    Hugging Face `tokenizers` reports character offsets, so a token holding only some bytes of
    a character gets the whole character: the byte-fallback pieces of one character share its
    span, and a byte-level token ending inside a character overlaps the next one, which then
    seems to start at the character's first byte (inside a word's first character, it would
    not count as a continuation; its length would be the whole character's). The "▁" a
    SentencePiece-style tokenizer puts in front of the text gets the first character's span too.

    Tokens whose spans overlap form a run. `piece_bytes` says, per token, how many bytes of the
    text it stands for where its span cannot: a byte piece its own bytes, the prefix "▁" none;
    -1 for tokens of whole characters (their span is right; their length is its width). The
    pieces of a run are consecutive bytes of the text (byte-level BPE and byte fallback both
    cut bytes in order), so:

    - when the lengths add up to the run's bytes, each token gets its bytes, in order: exact
      (the prefix "▁" becomes empty, at the start);
    - when a run of pieces only adds up to more (a space the runtime added in front, or one
      `trim_offsets` left out of the first token's span), they are laid from the run's end
      and the first one clipped to the run's start: exact for every boundary in the text;
    - otherwise the run keeps the spans the library reported: a normalizer dropped bytes, or
      made two characters of one (NFD makes ে + া of ো) and each became a token, so no byte
      of the original character belongs to one of them more than to the other.
    """
    n = len(starts)
    if n < 2 or piece_bytes is None:
        return starts, ends
    overlap = np.zeros(n, dtype=bool)
    overlap[1:] = starts[1:] < np.maximum.accumulate(ends)[:-1]
    if not overlap.any():
        return starts, ends
    first = np.flatnonzero(~overlap)  # each run's first token
    run = np.cumsum(~overlap) - 1
    pieces = piece_bytes >= 0
    lengths = np.where(pieces, piece_bytes, ends - starts)
    several = np.diff(np.append(first, n)) >= 2
    only_pieces = np.add.reduceat((~pieces).astype(np.int64), first) == 0
    total = np.add.reduceat(lengths, first)
    run_start, run_end = starts[first], np.maximum.reduceat(ends, first)
    envelope = run_end - run_start
    before = np.cumsum(lengths) - lengths  # bytes of the earlier tokens (all runs)
    offset = before - before[first][run]  # bytes of the earlier tokens of the same run
    forward = several & (total == envelope)
    backward = several & only_pieces & (total > envelope)
    new_starts = np.where(forward[run], run_start[run] + offset,
                          np.where(backward[run], run_end[run] - (total[run] - offset), starts))
    new_ends = np.where(forward[run] | backward[run], new_starts + lengths, ends)
    low = run_start[run]
    return np.maximum(new_starts, low), np.maximum(new_ends, low)


def concatenate(encoded: list[Encoded], sizes: list[int]) -> Tokens:
    """Per-text Encoded spans -> one Tokens in the texts' concatenation (`sizes` in bytes)."""
    counts = np.fromiter((len(e.starts) for e in encoded), dtype=np.int64, count=len(encoded))
    bases = np.repeat(np.cumsum(sizes, dtype=np.int64) - np.asarray(sizes, dtype=np.int64), counts)
    empty = np.zeros(0, dtype=np.int64)

    def joined(attribute: str) -> np.ndarray | None:
        parts = [getattr(e, attribute) for e in encoded]
        if all(p is None for p in parts):
            return None
        return np.concatenate([np.zeros(len(e.starts), dtype=bool) if p is None else p
                               for e, p in zip(encoded, parts)]) if parts else np.zeros(0, dtype=bool)
    starts = np.concatenate([e.starts for e in encoded]) if encoded else empty
    ends = np.concatenate([e.ends for e in encoded]) if encoded else empty
    id_parts = [e.ids for e in encoded]
    ids: np.ndarray | None = None
    if encoded and all(p is not None for p in id_parts):
        ids = np.concatenate([p for p in id_parts if p is not None])
    return Tokens(counts, starts + bases, ends + bases, joined("unknown"), joined("byte_fallback"), ids=ids)
