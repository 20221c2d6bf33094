"""SentencePiece backend: `.model` files, whatever their name (`tokenizer.model.v3`).

BOS/EOS are never added (we call `encode` without them); offsets come from the proto output,
which reports each piece's byte span in the original text.
"""

from __future__ import annotations

from functools import cached_property
from itertools import chain
from pathlib import Path

import numpy as np
import sentencepiece

from fertility.errors import TokenizerError
from fertility.hashing import sha256_file
from fertility.limits import MAX_TOKENIZER_FILE_BYTES, check_file_size

from . import Encoded, TokenizerBase, Tokens
from ._common import display_name, native_errors
from .spans import byte_piece_spans, concatenate
from .vocabularies import SentencePieceVocabulary


class SPMTokenizer(TokenizerBase):
    def __init__(self, path: Path, *, model_proto: bytes | None = None, name: str | None = None,
                 source: str | None = None, sha256: str | None = None):
        """A .model file, or (`model_proto`) the bytes of one held in memory: then `path` only
        names it in errors, and `source`, `sha256` say what it was for the signature."""
        if model_proto is None:
            check_file_size(path, MAX_TOKENIZER_FILE_BYTES, "SentencePiece model", TokenizerError)
        processor = sentencepiece.SentencePieceProcessor()
        try:
            if model_proto is None:
                processor.Load(model_file=str(path))
            else:
                processor.Load(model_proto=model_proto)
        except (OSError, RuntimeError) as err:
            first = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise TokenizerError(f"{path}: not a valid SentencePiece model ({first})") from None
        self._processor = processor
        size = processor.get_piece_size()
        self._unknown = np.fromiter((processor.IsUnknown(i) for i in range(size)), dtype=bool, count=size)
        self._byte = np.fromiter((processor.IsByte(i) for i in range(size)), dtype=bool, count=size)
        self.path = path
        self.name = name or display_name(path)
        self._source, self._sha256 = source, sha256

    @property
    def processor(self) -> sentencepiece.SentencePieceProcessor:
        return self._processor

    def encode(self, texts: list[str]) -> list[Encoded]:
        """Byte spans from the proto output; byte-fallback pieces get one byte each."""
        out = []
        with native_errors(self.path):
            protos = self._processor.encode(texts, return_type="proto")
        for proto in protos:
            pieces = proto.pieces
            n = len(pieces)
            starts = np.fromiter((p.begin for p in pieces), dtype=np.int64, count=n)
            ends = np.fromiter((p.end for p in pieces), dtype=np.int64, count=n)
            ids = np.fromiter((p.id for p in pieces), dtype=np.int64, count=n)
            starts, ends = byte_piece_spans(starts, ends, self._byte[ids])
            out.append(Encoded(starts, ends, self._unknown[ids], self._byte[ids], ids))
        return out

    @cached_property
    def _piece_bytes(self) -> tuple[np.ndarray, bool] | None:
        """Per id, the bytes of the original text a piece stands for, and whether a dummy
        `▁` is prepended; None when the normalizer may rewrite text (then offsets are needed)."""
        from sentencepiece import sentencepiece_model_pb2

        model = sentencepiece_model_pb2.ModelProto()  # type: ignore[attr-defined]
        model.ParseFromString(self._processor.serialized_model_proto())
        spec = model.normalizer_spec
        if spec.name != "identity" or spec.remove_extra_whitespaces or spec.precompiled_charsmap:
            return None
        size = self._processor.get_piece_size()
        lengths = np.array([1 if self._byte[i] else
                            len(self._processor.IdToPiece(i).replace("\u2581", " ").encode("utf-8"))
                            for i in range(size)], dtype=np.int64)
        return lengths, bool(spec.add_dummy_prefix)

    def encode_many(self, texts: list[str]) -> Tokens:
        """From ids and a per-id byte length table where the normalizer keeps the text as it is
        (checked: every text's lengths must add up to its bytes), else from the proto offsets."""
        if self._piece_bytes is not None:
            with native_errors(self.path):
                per_text = self._processor.encode(texts)
            counts = np.fromiter(map(len, per_text), dtype=np.int64, count=len(per_text))
            ids = np.fromiter(chain.from_iterable(per_text), dtype=np.int64, count=int(counts.sum()))
            tokens = self.tokens_from_ids(texts, counts, ids)
            if tokens is not None:
                return tokens
        encoded = self.encode(texts)
        return concatenate(encoded, [len(t.encode("utf-8")) for t in texts])

    def tokens_from_ids(self, texts: list[str], counts: np.ndarray, ids: np.ndarray) -> Tokens | None:
        """Spans of the given ids from the per-id byte length table, whoever computed the ids
        (this model's `encode_many`, or a fast path checked against it); None where the table
        cannot place them (a normalizer that rewrites text, an unknown token, lengths that do
        not add up to every text's bytes): then only the proto offsets can."""
        table = self._piece_bytes
        if table is None:
            return None
        lengths = table[0][ids]
        if table[1]:  # the dummy prefix `▁` of each text's first piece is not in the text
            lengths[(np.cumsum(counts) - counts)[counts > 0]] -= 1
        sizes = np.fromiter((len(t.encode("utf-8")) for t in texts), dtype=np.int64, count=len(texts))
        bounds = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum(lengths, out=bounds[1:])
        edges = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum(counts, out=edges[1:])
        unknown = self._unknown[ids]
        if not unknown.any() and (lengths >= 0).all() and np.array_equal(np.diff(bounds[edges]), sizes):
            return Tokens(counts, bounds[:-1], bounds[1:], unknown, self._byte[ids], ids=ids)
        return None

    def count_tokens(self, texts: list[str]) -> list[int]:
        with native_errors(self.path):
            return [len(ids) for ids in self._processor.encode(texts)]

    def vocabulary(self) -> SentencePieceVocabulary:
        return SentencePieceVocabulary(self.processor)

    def pre_tokenizer(self) -> None:
        """SentencePiece has no pre-tokenizer: pieces may span any characters but spaces' rules."""
        return

    def info(self) -> dict[str, str]:
        return {
            "backend": "spm",
            "source": self._source or str(self.path),
            "sha256": self._sha256 or sha256_file(str(self.path)),
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
