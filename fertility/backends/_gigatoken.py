"""The fast path: token ids from gigatoken (Rust), checked against the library they stand in for.

gigatoken encodes byte-level BPE (tiktoken ranks, Hugging Face byte-level tokenizer.json) and
SentencePiece BPE with byte fallback several times faster than the libraries fertility wraps,
but it returns token ids only, and it has its own loaders. So the library stays the arbiter:

- a tokenizer gets a fast path only where gigatoken is built from the very vocabulary the
  library uses and with the split the library applies (`_gigatoken_build.py`); everything else
  is refused with a reason, and the signature says which;
- spans and token kinds come from the library backend's own tables (`tokens_from_ids`), or,
  for Hugging Face byte-level BPE, from the token byte lengths snapped to characters as
  `tokenizers` reports offsets;
- every batch is checked (`FastPath.encode_checked`, with `_gigatoken_check.py`): each text's
  tokens must cover exactly its bytes, and a fixed sample of texts is encoded by the library too
  and compared token by token (ids, spans, kinds). On any difference the whole batch takes the library's tokens and the
  check says what differed; the engine counts it and the audit warns once;
- gigatoken's caches are kept bounded (`_gigatoken_ids.py`), without changing any id.

`benchmarks/fastpath_matrix.py` compares the two on every FLORES devtest line of every
tokenizer fertility can load; tests/backends/test_fastpath.py runs a part of it.
This module holds FastPath itself, which the registry wraps around a library tokenizer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from fertility.errors import NOT_NATIVE

from . import Encoded, FastCheck, PreTokenizer, Tokenizer, Tokens
from ._gigatoken_build import Unsupported, build_encoder
from ._gigatoken_check import check_description, cumulative, difference, first_difference, sample_positions
from ._gigatoken_ids import GigatokenIds


def version() -> str:
    """The gigatoken distribution that is imported and its version: the official one or the
    fork with bounded caches, which install the same module (the first on sys.path wins)."""
    from importlib import metadata

    import gigatoken

    here = Path(gigatoken.__file__).resolve()
    for name in ("gigatoken-cachefix", "gigatoken"):
        try:
            found = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        if Path(str(found.locate_file("gigatoken/__init__.py"))).resolve() == here:
            return f"{name} {found.version}"
    return "gigatoken (version unknown)"


def byte_level_tokens(texts: list[str], counts: np.ndarray, ids: np.ndarray, lengths: np.ndarray,
                      unknown: np.ndarray, byte: np.ndarray, piece_bytes: np.ndarray) -> Tokens | None:
    """Tokens of a byte-level BPE as `tokenizers` reports them: character offsets, a token that
    holds only some bytes of a character covering all of it, and, per token, the bytes a byte
    piece stands for (`piece_bytes`, the library backend's own table), from which the engine
    gives each piece its own bytes as it does for the library's tokens; None when the token
    bytes do not cover each text exactly (then these ids are not the text's)."""
    data = np.frombuffer("".join(texts).encode("utf-8", errors="surrogatepass"), dtype=np.uint8)
    lead = (data & 0xC0) != 0x80
    char_of_byte = np.cumsum(lead, dtype=np.int64) - 1
    char_starts = np.append(np.flatnonzero(lead), len(data))
    char_base = cumulative(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)))
    bounds = cumulative(lengths[ids])
    edges = cumulative(counts)
    if not np.array_equal(bounds[edges], char_starts[char_base]):
        return None
    return Tokens(counts, char_of_byte[bounds[:-1]], char_of_byte[bounds[1:] - 1] + 1, unknown[ids], byte[ids],
                  in_chars=True, ids=ids, piece_bytes=piece_bytes[ids])


class FastPath:
    """A library tokenizer whose `encode_many` takes its ids from gigatoken where that is exact.

    Everything else (encode, pre-tokenizer, vocabulary, info) is the library's. Built in the
    process that loads it; pickled, it is rebuilt from the library tokenizer on the other side.
    """

    def __init__(self, inner: Tokenizer, *, off: str | None = None):
        self.inner = inner
        self.name = inner.name
        self.off = off
        self._ids: GigatokenIds | None = None
        self._extra: Any = None
        if off is None:
            try:
                from ._common import native_errors

                with native_errors(getattr(inner, "name", "tokenizer")):
                    self._ids, self._extra = build_encoder(inner)
            except ImportError:
                self.off = "gigatoken is not installed (pip install 'fertility[fast]')"
            except Unsupported as err:
                self.off = str(err)
            except Exception as err:  # noqa: BLE001 - gigatoken refusing a file is no failure of ours
                self.off = f"gigatoken refuses it ({_first_line(err)})"

    def __getattr__(self, attribute: str):  # backend extras (encoding, processor, ...) stay reachable
        if attribute == "inner":  # not set yet (unpickling): no recursion
            raise AttributeError(attribute)
        return getattr(self.inner, attribute)

    def __reduce__(self):  # rebuilt on the other side; a path that was off stays off, with its reason
        return (_rebuilt, (self.inner, self.off))

    @property
    def active(self) -> bool:
        return self._ids is not None

    def __repr__(self) -> str:
        return f"<FastPath {self.name!r} ({'on' if self.active else 'off'}) over {self.inner!r}>"

    def encode(self, texts: list[str]) -> list[Encoded]:
        return self.inner.encode(texts)

    def pre_tokenizer(self) -> PreTokenizer | None:
        return self.inner.pre_tokenizer()

    def info(self) -> dict[str, str]:
        info = dict(self.inner.info())
        if self._ids is None:
            info["fast_path"] = f"off: {self.off}"
        else:
            info["fast_path"] = f"on: token ids from gigatoken ({self._ids.how}); spans and kinds from the library's tables"
            info["fast_path_library"] = version()
            info["fast_path_check"] = check_description()
        return info

    def _library(self, texts: list[str]) -> Tokens:
        return self.inner.encode_many(texts)

    def encode_many(self, texts: list[str]) -> Tokens:
        return self.encode_checked(texts)[0]

    def fast_tokens(self, texts: list[str]) -> Tokens | None:
        """The fast path's tokens without any check (the exactness matrix compares them with
        the library's on every line); None when the ids cannot be placed in the texts."""
        if self._ids is None:
            raise Unsupported(self.off or "off")
        counts, ids, sizes = self._ids(texts)
        return self._tokens(texts, sizes, counts, ids, self._extra[0] if self._extra else None)

    def left_to_library(self, texts: list[str]) -> bool:
        """Does this batch hold text the fast path leaves to the library (an added token)?"""
        guard = self._extra[1] if self._extra is not None else None
        return guard is not None and guard(texts)

    def encode_checked(self, texts: list[str]) -> tuple[Tokens, FastCheck | None]:
        """The batch's tokens and how the fast path fared (None: it is off)."""
        if self._ids is None:
            return self._library(texts), None
        lengths = self._extra[0] if self._extra is not None else None
        if self.left_to_library(texts):
            return self._library(texts), FastCheck(False)
        try:
            counts, ids, sizes = self._ids(texts)
        except NOT_NATIVE:
            raise
        except BaseException:  # noqa: BLE001 - e.g. a lone surrogate gigatoken cannot take, or a panic
            return self._library(texts), FastCheck(False)
        tokens = self._tokens(texts, sizes, counts, ids, lengths)
        if tokens is None:  # the library's tables cannot place these ids: compare ids with the library's
            library = self._library(texts)
            same = library.ids is not None and np.array_equal(library.counts, counts) and \
                np.array_equal(library.ids, ids)
            if same:
                return library, FastCheck(False)
            return library, FastCheck(False, *first_difference(counts, ids, library))
        positions = sample_positions(sizes)
        library = self._library([texts[i] for i in positions])
        found = difference(tokens, texts, sizes, library, positions)
        if found is not None:
            return self._library(texts), FastCheck(False, found[1], found[0])
        return tokens, FastCheck(True)

    def _tokens(self, texts: list[str], sizes: np.ndarray, counts: np.ndarray, ids: np.ndarray,
                lengths: np.ndarray | None) -> Tokens | None:
        inner = self.inner
        if lengths is not None:  # Hugging Face byte-level BPE
            if len(ids) and int(ids.max()) >= len(lengths):
                return None
            return byte_level_tokens(texts, counts, ids, lengths, inner._unknown, inner._byte,  # type: ignore[attr-defined]
                                     inner._piece_bytes)  # type: ignore[attr-defined]
        from ._spm import SPMTokenizer

        if isinstance(inner, SPMTokenizer):
            return inner.tokens_from_ids(texts, counts, ids)
        tokens = inner.tokens_from_ids(counts, ids)  # type: ignore[attr-defined]
        covered = cumulative(tokens.ends - tokens.starts)[cumulative(counts)]
        return tokens if np.array_equal(np.diff(covered), sizes) else None


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return f"{type(err).__name__}: {text.splitlines()[0]}" if text else type(err).__name__


def _rebuilt(inner: Tokenizer, off: str | None) -> FastPath:
    return FastPath(inner, off=off)


def with_fast_path(tokenizer: Tokenizer, *, off: str | None = None) -> FastPath:
    """The tokenizer behind a fast path, or behind one that is `off` (and says why)."""
    return FastPath(tokenizer, off=off)
