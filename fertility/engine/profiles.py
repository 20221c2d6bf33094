"""Unit profiles of a chunk of texts, computed once for every tokenizer and cached on disk.

Bytes, characters, graphemes and words depend only on the text. The costly part is the
grapheme segmentation (`\\X`); its result, the characters that continue a cluster, is cached
by the chunk's content hash, the segmenter's version and fertility's version, in
`$FERTILITY_CACHE_DIR`, else `$XDG_CACHE_HOME/fertility`, else `~/.cache/fertility`.
A cache entry carries a checksum: a corrupt one is ignored and rewritten, never trusted.
"""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fertility.text.units import cluster_continuations, code_points, segmenter_info, whitespace_mask
from fertility.version import __version__

_MAGIC = b"fertility-profile-2\n"


def cache_dir() -> Path:
    if os.environ.get("FERTILITY_CACHE_DIR"):
        return Path(os.environ["FERTILITY_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "fertility"


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    rejected: int = 0  # entries found corrupt, recomputed and rewritten

    def __add__(self, other: CacheStats) -> CacheStats:
        return CacheStats(self.hits + other.hits, self.misses + other.misses,
                          self.rejected + other.rejected)


class ProfileCache:
    """Per chunk, which characters continue a grapheme cluster (one bit each), one file per
    content hash; `folder=None` disables it. Nothing is evicted: delete the folder to reclaim
    the space (about 1/8 byte per character audited)."""

    def __init__(self, folder: Path | None):
        self.folder = folder
        self.stats = CacheStats()

    def key(self, texts: list[str]) -> str:
        digest = hashlib.sha256()
        seg = segmenter_info()
        digest.update(f"{__version__}\0{seg['segmenter']}\0{seg['segmenter_unicode']}\0".encode())
        for text in texts:
            digest.update(text.encode("utf-8", errors="surrogatepass"))
            digest.update(b"\0\1")
        return digest.hexdigest()

    def _path(self, key: str) -> Path:
        assert self.folder is not None
        return self.folder / key[:2] / f"{key}.npy"

    def get(self, key: str) -> np.ndarray | None:
        if self.folder is None:
            return None
        try:
            data = self._path(key).read_bytes()
        except OSError:
            self.stats.misses += 1
            return None
        payload = data[len(_MAGIC) + 64:]
        if data[:len(_MAGIC)] != _MAGIC or data[len(_MAGIC):len(_MAGIC) + 64] != \
                hashlib.sha256(payload).hexdigest().encode():
            self.stats.rejected += 1
            return None
        try:
            array = np.load(io.BytesIO(payload), allow_pickle=False)
        except (ValueError, OSError, EOFError):
            self.stats.rejected += 1
            return None
        self.stats.hits += 1
        return array

    def put(self, key: str, array: np.ndarray) -> None:
        """Atomic: written to a temporary file beside the entry, then renamed over it. A cache
        that cannot be written is skipped silently: it only saves time."""
        if self.folder is None:
            return
        buffer = io.BytesIO()
        np.save(buffer, array, allow_pickle=False)
        payload = buffer.getvalue()
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            try:
                with os.fdopen(handle, "wb") as out:
                    out.write(_MAGIC + hashlib.sha256(payload).hexdigest().encode() + payload)
                os.replace(temporary, path)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
        except OSError:
            return


@dataclass(frozen=True)
class ChunkProfile:
    """Unit counts per text and, in the texts' concatenation, where characters, clusters and
    words are (UTF-8 byte offsets)."""

    doc_bytes: np.ndarray
    doc_chars: np.ndarray
    doc_graphemes: np.ndarray
    doc_words: np.ndarray
    byte_base: np.ndarray  # n+1: byte offset of each text, then the total
    char_base: np.ndarray  # n+1: character offset of each text, then the total
    char_starts: np.ndarray  # byte offset of every character, then the total
    is_cluster_start: np.ndarray  # per byte offset (and the end): a cluster starts here
    char_cluster_start: np.ndarray  # per character offset (and the end): a cluster starts here
    word_starts: np.ndarray
    word_ends: np.ndarray
    word_doc: np.ndarray  # which text each word is in
    codes: np.ndarray  # code points of the concatenation


def _cumulative(sizes: np.ndarray) -> np.ndarray:
    out = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=out[1:])
    return out


def profile_texts(texts: list[str], cache: ProfileCache | None = None) -> ChunkProfile:
    joined = "".join(texts)
    codes = code_points(joined)
    widths = 1 + (codes > 0x7F).astype(np.int64) + (codes > 0x7FF) + (codes > 0xFFFF)
    char_starts = _cumulative(widths)
    doc_chars = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    char_base = _cumulative(doc_chars)
    byte_base = char_starts[char_base]
    key = cache.key(texts) if cache is not None and cache.folder is not None else None
    packed = cache.get(key) if key is not None and cache is not None else None
    if packed is not None and packed.dtype == np.uint8 and len(packed) == (len(codes) + 7) // 8:
        continues = np.unpackbits(packed, count=len(codes)).astype(bool)
    else:  # one bit per character in the cache: an eighth of a byte beside each byte of text
        continues = np.zeros(len(codes), dtype=bool)
        continues[cluster_continuations(texts, codes)] = True
        if key is not None and cache is not None:
            cache.put(key, np.packbits(continues))
    starts_char = np.ones(len(codes) + 1, dtype=bool)
    starts_char[:-1] = ~continues
    is_cluster_start = np.zeros(int(char_starts[-1]) + 1, dtype=bool)
    is_cluster_start[char_starts[starts_char]] = True
    before = _cumulative(starts_char[:-1].astype(np.int64))
    doc_graphemes = np.diff(before[char_base])
    # words: maximal runs of non-whitespace within one text
    solid = ~whitespace_mask(codes)
    previous = np.concatenate(([False], solid[:-1]))
    following = np.concatenate((solid[1:], [False]))
    inner = char_base[1:-1]
    previous[inner[inner < len(codes)]] = False
    following[inner[inner > 0] - 1] = False
    first = np.flatnonzero(solid & ~previous)
    last = np.flatnonzero(solid & ~following) + 1
    word_doc = np.searchsorted(char_base, first, side="right") - 1
    return ChunkProfile(
        doc_bytes=np.diff(byte_base), doc_chars=doc_chars, doc_graphemes=doc_graphemes,
        doc_words=np.bincount(word_doc, minlength=len(texts)).astype(np.int64),
        byte_base=byte_base, char_base=char_base, char_starts=char_starts,
        is_cluster_start=is_cluster_start, char_cluster_start=starts_char, word_starts=char_starts[first], word_ends=char_starts[last],
        word_doc=word_doc, codes=codes)
