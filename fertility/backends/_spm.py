"""SentencePiece backend: `.model` files, whatever their name (`tokenizer.model.v3`).

BOS/EOS are never added (we call `encode` without them); offsets come from the proto output,
which reports each piece's byte span in the original text.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import sentencepiece

from ..errors import TokenizerError
from . import Encoded
from ._common import display_name, native_errors, sha256_file


class SPMTokenizer:
    def __init__(self, path: Path):
        processor = sentencepiece.SentencePieceProcessor()
        try:
            processor.Load(model_file=str(path))
        except (OSError, RuntimeError) as err:
            first = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise TokenizerError(f"{path}: not a valid SentencePiece model ({first})") from None
        self._processor = processor
        size = processor.get_piece_size()
        self._unknown = np.fromiter((processor.IsUnknown(i) for i in range(size)), dtype=bool, count=size)
        self._byte = np.fromiter((processor.IsByte(i) for i in range(size)), dtype=bool, count=size)
        self.path = path
        self.name = display_name(path)

    @property
    def processor(self) -> sentencepiece.SentencePieceProcessor:
        return self._processor

    def encode(self, texts: list[str]) -> list[Encoded]:
        """Byte-fallback pieces of one character: all but the last have zero width."""
        out = []
        with native_errors(self.path):
            protos = self._processor.encode(texts, return_type="proto")
        for proto in protos:
            pieces = proto.pieces
            n = len(pieces)
            starts = np.fromiter((p.begin for p in pieces), dtype=np.int64, count=n)
            ends = np.fromiter((p.end for p in pieces), dtype=np.int64, count=n)
            ids = np.fromiter((p.id for p in pieces), dtype=np.int64, count=n)
            out.append(Encoded(starts, ends, self._unknown[ids], self._byte[ids]))
        return out

    def pre_tokenizer(self) -> None:
        """SentencePiece has no pre-tokenizer: pieces may span any characters but spaces' rules."""
        return

    def info(self) -> dict[str, str]:
        return {
            "backend": "spm",
            "source": str(self.path),
            "sha256": sha256_file(str(self.path)),
            "vocab_size": str(self._processor.get_piece_size()),
            "special_tokens": "BOS/EOS not added",
            "library": f"sentencepiece {sentencepiece.__version__}",
        }


def load(reference: str, *, pattern: str | None = None) -> SPMTokenizer:
    """`pattern` is ignored: SentencePiece has no pre-tokenizer regex."""
    path = Path(reference)
    if path.is_dir():
        models = sorted(path.glob("*.model")) + sorted(path.glob("*.model.v*"))
        if not models:
            raise TokenizerError(f"{path}: directory holds no SentencePiece .model file")
        path = models[0]
    if not path.is_file():
        raise TokenizerError(f"{reference}: no such file")
    return SPMTokenizer(path)
