"""The fast path: token ids from gigatoken (Rust), checked against the library they stand in for.

gigatoken encodes byte-level BPE (tiktoken ranks, Hugging Face byte-level tokenizer.json) and
SentencePiece BPE with byte fallback several times faster than the libraries fertility wraps,
but it returns token ids only, and it has its own loaders. So the library stays the arbiter:

- a tokenizer gets a fast path only where gigatoken is built from the very vocabulary the
  library uses and with the split the library applies (`_build`); everything else is refused
  with a reason, and the signature says which;
- spans and token kinds come from the library backend's own tables (`tokens_from_ids`), or,
  for Hugging Face byte-level BPE, from the token byte lengths snapped to characters as
  `tokenizers` reports offsets;
- every batch is checked (`FastPath.encode_checked`): each text's tokens must cover exactly its
  bytes, and a fixed sample of texts is encoded by the library too and compared token by token
  (ids, spans, kinds). On any difference the whole batch takes the library's tokens and the
  check says what differed; the engine counts it and the audit warns once.

`benchmarks/fastpath_matrix.py` compares the two on every FLORES devtest line of every
tokenizer fertility can load; tests/test_fastpath.py runs a part of it.
"""

from __future__ import annotations

import base64
import ctypes
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from . import Encoded, FastCheck, PreTokenizer, Tokenizer, Tokens

# The split patterns (as fertility's backends hold them) whose gigatoken scheme splits text the
# same way; each pair is tested on random text with a vocabulary whose merges cross every place
# the patterns could disagree (tests/test_fastpath.py), and on FLORES (the matrix).
_TEKKEN = (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
           r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
           r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")


def _schemes() -> dict[str, str]:
    from ._tiktoken import QWEN
    from .patterns import CL100K, GPT2, O200K
    return {GPT2: "gpt2", CL100K: "gpt4", O200K: "o200k", QWEN: "qwen2", _TEKKEN: "nemotron"}


# The self-check: per batch, up to SAMPLE_TEXTS texts at evenly spaced positions (the first and
# the last included), as long as they fit in SAMPLE_SHARE of its bytes (at least SAMPLE_MIN_BYTES).
SAMPLE_TEXTS = 16
SAMPLE_SHARE = 0.02
SAMPLE_MIN_BYTES = 8192
# Largest padded id matrix gigatoken fills at once (cells of 4 bytes): memory stays flat
# whatever mix of short and long texts a batch holds.
_CELLS = 1 << 22
# What gigatoken's pre-token caches may take per process (see _Ids).
CACHE_BYTES = 32 << 20
REBUILD_TEXT_BYTES = 64 << 20  # characters, where the heap cannot be seen


_NOT_NATIVE = (KeyboardInterrupt, SystemExit, GeneratorExit)


class Unsupported(Exception):
    """This tokenizer has no exact fast path; the message says why."""


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


def check_description() -> str:
    return (f"every batch: each text's tokens must cover exactly its bytes, and up to {SAMPLE_TEXTS} texts "
            f"at evenly spaced positions (at most {SAMPLE_SHARE:.0%} of its bytes, at least "
            f"{SAMPLE_MIN_BYTES} bytes) are encoded by the library too and compared token by token "
            "(ids, spans, kinds); on any difference the batch takes the library's tokens")


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


class _Ids:
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
        from gigatoken.gigatoken_rs import PadTruncate

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

    def __call__(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """One padded matrix per group of texts (no awkward arrays, no Python int per token);
        a group is cut before its matrix could pass _CELLS (a text of n characters has at most
        4n + 1 tokens: one byte or more each, and a SentencePiece dummy prefix)."""
        bound = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)) * 4 + 2
        counts: list[np.ndarray] = []
        ids: list[np.ndarray] = []
        start, widest = 0, 0
        for i, width in enumerate(bound.tolist()):
            if i > start and (i - start + 1) * max(widest, width) > _CELLS:
                self._group(texts[start:i], counts, ids)
                start, widest = i, 0
            widest = max(widest, width)
        if start < len(texts):
            self._group(texts[start:], counts, ids)
        if not self._bounded:
            self._bound_cache(texts)
        if not counts:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        return np.concatenate(counts), np.concatenate(ids)

    def _group(self, texts: list[str], counts: list[np.ndarray], ids: list[np.ndarray]) -> None:
        matrix, lengths = self.backend.encode_batch_padded(texts, self._options, parallel=False)
        lengths = np.asarray(lengths, dtype=np.int64)
        counts.append(lengths)
        ids.append(matrix[np.arange(matrix.shape[1]) < lengths[:, None]].astype(np.int64))

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


def _without_special_tokens(data: dict) -> tuple[str, list[str]]:
    """tokenizer.json text for gigatoken without the added tokens, and the contents of the
    non-special ones. The library never recognises special tokens in text (tiktoken's
    encode_ordinary, `encode_special_tokens`, SentencePiece control pieces) but gigatoken
    would cut them out; the non-special ones both cut out, so a batch holding one goes to the
    library (their matching rules are subtle), which `_guard` sees."""
    kept = [str(a.get("content", "")) for a in data.get("added_tokens") or [] if not a.get("special")]
    data = {**data, "added_tokens": [], "post_processor": None, "truncation": None, "padding": None}
    return json.dumps(data, ensure_ascii=False), [k for k in kept if k]


def _guard(contents: list[str]):
    """A test for batches holding any of `contents` (None when there are none); a cheap
    two-character prefilter on the joined text first."""
    if not contents:
        return None
    heads = sorted({c[:2] for c in contents})

    def holds(texts: list[str]) -> bool:
        joined = "\0".join(texts)
        return any(h in joined for h in heads) and any(c in joined for c in contents)
    return holds


def _build_tiktoken(inner: Any) -> tuple[_Ids, Any]:
    import gigatoken

    scheme = _schemes().get(inner.pattern)
    if scheme is None:
        raise Unsupported(f"split pattern {inner.pattern_name} is none of gigatoken's schemes")
    ranks = getattr(inner.encoding, "_mergeable_ranks", None)
    if not isinstance(ranks, dict):
        raise Unsupported("tiktoken does not expose the encoding's ranks")
    source = Path(inner.source)
    if inner.backend == "tiktoken" and source.is_file():
        def from_file():  # the very file the library read (its hash is in the signature)
            return gigatoken.Tokenizer.from_tiktoken(source, pretokenizer=scheme, special_tokens={}).backend
        try:
            return _Ids(from_file, f"{source.name} with the {scheme} split"), None
        except (ValueError, RuntimeError):  # e.g. Whisper's padded base64: write the ranks out plainly
            pass

    def from_ranks():
        handle, name = tempfile.mkstemp(suffix=".tiktoken")
        try:
            with os.fdopen(handle, "w", encoding="ascii") as out:
                out.writelines(f"{base64.b64encode(token).decode()} {rank}\n"
                               for token, rank in sorted(ranks.items(), key=lambda item: item[1]))
            return gigatoken.Tokenizer.from_tiktoken(name, pretokenizer=scheme, special_tokens={}).backend
        finally:
            Path(name).unlink(missing_ok=True)
    return _Ids(from_ranks, f"the library's {len(ranks)} ranks with the {scheme} split"), None


def _build_hf(inner: Any) -> tuple[_Ids, Any]:
    import gigatoken

    data = _tokenizer_json(inner)
    model = data.get("model") or {}
    pre = json.dumps(data.get("pre_tokenizer"))
    if model.get("type") != "BPE" or model.get("byte_fallback"):
        raise Unsupported(f"{model.get('type')} model{' with byte fallback' if model.get('byte_fallback') else ''}: "
                          "the fast path takes byte-level BPE tokenizer.json files")
    if data.get("normalizer") is not None or '"ByteLevel"' not in pre or '"add_prefix_space": true' in pre \
            or model.get("continuing_subword_prefix") or model.get("end_of_word_suffix"):
        raise Unsupported("not a plain byte-level BPE (a normalizer, a prefix space or word affixes), "
                          "so token offsets cannot be derived from token bytes")
    text, kept = _without_special_tokens(data)
    try:
        ids = _Ids(lambda: gigatoken.Tokenizer.from_json(text).backend, "tokenizer.json without its added tokens")
    except (ValueError, RuntimeError) as err:
        raise Unsupported(f"gigatoken refuses it ({str(err).splitlines()[0]})") from None
    from ._hf import _byte_level_alphabet

    vocab = inner.tokenizer.get_vocab(with_added_tokens=False)
    strange = set("".join(vocab)) - set(_byte_level_alphabet())
    if strange:
        raise Unsupported(f"vocabulary entries hold {''.join(sorted(strange))[:10]!r}: not byte-level text")
    lengths = np.zeros(max(vocab.values(), default=-1) + 1, dtype=np.int64)
    lengths[np.fromiter(vocab.values(), dtype=np.int64, count=len(vocab))] = \
        np.fromiter(map(len, vocab), dtype=np.int64, count=len(vocab))  # one alphabet character a byte
    return ids, (lengths, _guard(kept))


def _tokenizer_json(inner: Any) -> dict:
    """The tokenizer.json the library loaded, read from its file (a large vocabulary takes a
    second to serialize again), or serialized when it was built in memory (vocab.json + merges)."""
    path = Path(inner.path)
    if path.name != "vocab.json":
        try:
            data = json.loads(path.read_bytes())
        except (OSError, ValueError):
            data = None
        if isinstance(data, dict) and isinstance(data.get("model"), dict) and "type" in data["model"]:
            return data
    return json.loads(inner.tokenizer.to_str())


def _build_spm(inner: Any) -> tuple[_Ids, Any]:
    import gigatoken

    if inner._piece_bytes is None:
        raise Unsupported("the model's normalizer rewrites text, so spans need the library's offsets")
    try:
        from gigatoken._load.sentencepiece import sentencepiece_to_tokenizer_json

        data = json.loads(sentencepiece_to_tokenizer_json(Path(inner.path).read_bytes()))
    except (ImportError, ValueError) as err:
        raise Unsupported(f"gigatoken refuses it ({str(err).splitlines()[0] if str(err) else type(err).__name__})") from None
    text, kept = _without_special_tokens(data)
    return _Ids(lambda: gigatoken.Tokenizer.from_json(text).backend,
                "the .model converted by gigatoken, without its control pieces"), (None, _guard(kept))


def _build(inner: Any) -> tuple[_Ids, Any]:
    """gigatoken's encoder for `inner` and what the spans need, or Unsupported."""
    from ._hf import HFTokenizer
    from ._spm import SPMTokenizer
    from ._tiktoken import TiktokenTokenizer

    if isinstance(inner, TiktokenTokenizer):
        return _build_tiktoken(inner)
    if type(inner) is HFTokenizer:
        return _build_hf(inner)
    if isinstance(inner, SPMTokenizer):
        return _build_spm(inner)
    backend = inner.info().get("backend", type(inner).__name__) if hasattr(inner, "info") else type(inner).__name__
    raise Unsupported(f"no fast path for the {backend} backend")


def _cumulative(sizes: np.ndarray) -> np.ndarray:
    out = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=out[1:])
    return out


def byte_sizes(texts: list[str]) -> np.ndarray:
    return np.fromiter((len(t.encode("utf-8", errors="surrogatepass")) for t in texts), dtype=np.int64,
                       count=len(texts))


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
    char_base = _cumulative(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)))
    bounds = _cumulative(lengths[ids])
    edges = _cumulative(counts)
    if not np.array_equal(bounds[edges], char_starts[char_base]):
        return None
    return Tokens(counts, char_of_byte[bounds[:-1]], char_of_byte[bounds[1:] - 1] + 1, unknown[ids], byte[ids],
                  in_chars=True, ids=ids, piece_bytes=piece_bytes[ids])


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
    return _cumulative(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)) if tokens.in_chars else sizes)


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
    fast_edges, lib_edges = _cumulative(fast.counts), _cumulative(library.counts)
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


class FastPath:
    """A library tokenizer whose `encode_many` takes its ids from gigatoken where that is exact.

    Everything else (encode, pre-tokenizer, vocabulary, info) is the library's. Built in the
    process that loads it; pickled, it is rebuilt from the library tokenizer on the other side.
    """

    def __init__(self, inner: Tokenizer, *, off: str | None = None):
        self.inner = inner
        self.name = inner.name
        self.off = off
        self._ids: _Ids | None = None
        self._extra: Any = None
        if off is None:
            try:
                from ._common import native_errors

                with native_errors(getattr(inner, "name", "tokenizer")):
                    self._ids, self._extra = _build(inner)
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
        counts, ids = self._ids(texts)
        return self._tokens(texts, byte_sizes(texts), counts, ids, self._extra[0] if self._extra else None)

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
            counts, ids = self._ids(texts)
        except _NOT_NATIVE:
            raise
        except BaseException:  # noqa: BLE001 - e.g. a lone surrogate gigatoken cannot take, or a panic
            return self._library(texts), FastCheck(False)
        sizes = byte_sizes(texts)
        tokens = self._tokens(texts, sizes, counts, ids, lengths)
        if tokens is None:  # the library's tables cannot place these ids: compare ids with the library's
            library = self._library(texts)
            same = library.ids is not None and np.array_equal(library.counts, counts) and \
                np.array_equal(library.ids, ids)
            if same:
                return library, FastCheck(False)
            return library, FastCheck(False, *_first_difference(counts, ids, library))
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
        covered = _cumulative(tokens.ends - tokens.starts)[_cumulative(counts)]
        return tokens if np.array_equal(np.diff(covered), sizes) else None


def _first_difference(counts: np.ndarray, ids: np.ndarray, library: Tokens) -> tuple[str, int | None]:
    """What differs first between fast ids and the library's, and in which text."""
    mine, theirs = _cumulative(counts), _cumulative(library.counts)
    for i in range(min(len(counts), len(library.counts))):
        a, b, c, d = mine[i], mine[i + 1], theirs[i], theirs[i + 1]
        if b - a != d - c:
            return f"{b - a} tokens, the library {d - c}", i
        if library.ids is None or not np.array_equal(ids[a:b], library.ids[c:d]):
            return "token ids differ", i
    return "the batches differ in length", None


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return f"{type(err).__name__}: {text.splitlines()[0]}" if text else type(err).__name__


def _rebuilt(inner: Tokenizer, off: str | None) -> FastPath:
    return FastPath(inner, off=off)


def with_fast_path(tokenizer: Tokenizer, *, off: str | None = None) -> FastPath:
    """The tokenizer behind a fast path, or behind one that is `off` (and says why)."""
    return FastPath(tokenizer, off=off)
