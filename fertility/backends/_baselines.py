"""Baselines with no vocabulary: one token per byte, per character, per grapheme cluster.

They bound what any tokenizer does: bytes/token of the `bytes` baseline is exactly 1.
"""

from __future__ import annotations

import numpy as np

from ..text import char_to_byte_offsets, graphemes, segmenter_info


class _Baseline:
    name = ""
    unit = ""

    def info(self) -> dict[str, str]:
        return {"backend": "baseline", "unit": self.unit}


class Bytes(_Baseline):
    name = unit = "bytes"

    def token_spans(self, texts: list[str]) -> list[tuple[np.ndarray, np.ndarray]]:
        out = []
        for text in texts:
            starts = np.arange(len(text.encode("utf-8")), dtype=np.int64)
            out.append((starts, starts + 1))
        return out


class Chars(_Baseline):
    name = unit = "chars"

    def token_spans(self, texts: list[str]) -> list[tuple[np.ndarray, np.ndarray]]:
        out = []
        for text in texts:
            offsets = char_to_byte_offsets(text)
            out.append((offsets[:-1], offsets[1:]))
        return out


class Graphemes(_Baseline):
    name = unit = "graphemes"

    def token_spans(self, texts: list[str]) -> list[tuple[np.ndarray, np.ndarray]]:
        out = []
        for text in texts:
            lengths = np.fromiter((len(g.encode("utf-8")) for g in graphemes(text)), dtype=np.int64)
            ends = np.cumsum(lengths, dtype=np.int64)
            out.append((ends - lengths, ends))
        return out

    def info(self) -> dict[str, str]:
        return {**super().info(), "segmenter": segmenter_info()["segmenter"]}
