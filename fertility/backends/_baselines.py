"""Baselines with no vocabulary: one token per byte, per character, per grapheme cluster.

They bound what any tokenizer does: bytes/token of the `bytes` baseline is exactly 1.
"""

from __future__ import annotations

import numpy as np

from fertility.text.units import char_to_byte_offsets, graphemes, segmenter_info

from . import Encoded, TokenizerBase, Tokens
from .spans import concatenate


class _Baseline(TokenizerBase):
    name = ""
    unit = ""

    def info(self) -> dict[str, str]:
        return {"backend": "baseline", "unit": self.unit}

    def pre_tokenizer(self) -> None:
        return None

    def encode(self, texts: list[str]) -> list[Encoded]:
        raise NotImplementedError

    def encode_many(self, texts: list[str]) -> Tokens:
        return concatenate(self.encode(texts), [len(t.encode("utf-8")) for t in texts])


class Bytes(_Baseline):
    name = unit = "bytes"

    def encode(self, texts: list[str]) -> list[Encoded]:
        out = []
        for text in texts:
            starts = np.arange(len(text.encode("utf-8")), dtype=np.int64)
            out.append(Encoded(starts, starts + 1))
        return out

    def encode_many(self, texts: list[str]) -> Tokens:
        sizes = [len(text.encode("utf-8")) for text in texts]
        starts = np.arange(sum(sizes), dtype=np.int64)
        return Tokens(np.array(sizes, dtype=np.int64).reshape(-1), starts, starts + 1)


class Chars(_Baseline):
    name = unit = "chars"

    def encode(self, texts: list[str]) -> list[Encoded]:
        out = []
        for text in texts:
            offsets = char_to_byte_offsets(text)
            out.append(Encoded(offsets[:-1], offsets[1:]))
        return out

    def encode_many(self, texts: list[str]) -> Tokens:
        starts = np.arange(sum(map(len, texts)), dtype=np.int64)
        return Tokens(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)), starts, starts + 1,
                      in_chars=True)


class Graphemes(_Baseline):
    name = unit = "graphemes"

    def encode(self, texts: list[str]) -> list[Encoded]:
        out = []
        for text in texts:
            lengths = np.fromiter((len(g.encode("utf-8")) for g in graphemes(text)), dtype=np.int64)
            ends = np.cumsum(lengths, dtype=np.int64)
            out.append(Encoded(ends - lengths, ends))
        return out

    def info(self) -> dict[str, str]:
        return {**super().info(), "segmenter": segmenter_info()["segmenter"]}
