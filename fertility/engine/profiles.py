"""Unit profiles of a chunk of texts, computed once for every tokenizer and cached on disk.

Bytes, characters, graphemes and words depend only on the text. The costly part is the
grapheme segmentation; its result, the characters that continue a cluster, is cached by the
chunk's content hash, the segmenter's, fertility's and the entry format's versions, in
`$FERTILITY_CACHE_DIR`, else `$XDG_CACHE_HOME/fertility`, else `~/.cache/fertility`.

Nothing in the cache is trusted: an entry names the content hash, texts, bytes and characters
it was made for, and must match them and its checksum; then its bits must agree with the
pair rules (clusters.py, the cheap part of the segmentation, recomputed every time) wherever
those decide, which leaves only `\\X`'s own decisions inside emoji and flag sequences taken from
the cache. An entry that fails is recomputed and rewritten, with a warning. What is not a
regular file (a FIFO, a device, a socket, a folder, a link) is never opened: skipped, with a
warning.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
import warnings
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from fertility.text.units import PairJoins, code_points, segmenter_info, whitespace_mask
from fertility.version import __version__

_MAGIC = b"fertility-profile-3\n"


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    rejected: int = 0  # entries that did not match their text: recomputed and rewritten
    special: int = 0  # entries that are not regular files: skipped unopened

    def __add__(self, other: CacheStats) -> CacheStats:
        return CacheStats(self.hits + other.hits, self.misses + other.misses,
                          self.rejected + other.rejected, self.special + other.special)


@dataclass(frozen=True)
class Made:
    """What a cache entry was made for, all cheap to recompute from the chunk."""

    key: str  # the content hash (with segmenter and fertility versions)
    n_texts: int
    n_bytes: int
    n_chars: int

    def header(self) -> bytes:
        return f"{self.key} {self.n_texts} {self.n_bytes} {self.n_chars}\n".encode()

    def entry_size(self) -> int:
        return len(_MAGIC) + 64 + len(self.header()) + (self.n_chars + 7) // 8


class ProfileCache:
    """Per chunk, which characters continue a grapheme cluster (one bit each), one file per
    content hash; `folder=None` disables it. Nothing is evicted: delete the folder to reclaim
    the space (about 1/8 byte per character audited)."""

    def __init__(self, folder: Path | None):
        self.folder = folder
        self.stats = CacheStats()

    def key(self, texts: list[str]) -> str:
        digest = hashlib.sha256(_MAGIC)  # each entry format has its own keys: an older one is never met
        seg = segmenter_info()
        digest.update(f"{__version__}\0{seg['segmenter']}\0{seg['segmenter_unicode']}\0".encode())
        for text in texts:
            digest.update(text.encode("utf-8", errors="surrogatepass"))
            digest.update(b"\0\1")
        return digest.hexdigest()

    def _path(self, key: str) -> Path:
        assert self.folder is not None
        return self.folder / key[:2] / f"{key}.npy"

    def get(self, made: Made) -> np.ndarray | None:
        """The packed bits of an entry whose header, size and checksum match `made`; the
        caller still checks the bits against the text. Never opens anything but a regular file."""
        if self.folder is None:
            return None
        path = self._path(made.key)
        try:
            info = os.lstat(path)
        except OSError:
            self.stats.misses += 1
            return None
        if not stat.S_ISREG(info.st_mode):
            self.stats.special += 1
            return None
        if info.st_size != made.entry_size():  # never read a file of the wrong size (it may be huge)
            self.stats.rejected += 1
            return None
        try:  # no link followed, no wait on a FIFO swapped in since lstat
            handle = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        except OSError:
            self.stats.misses += 1
            return None
        with os.fdopen(handle, "rb") as entry:
            if not stat.S_ISREG(os.fstat(entry.fileno()).st_mode):
                self.stats.special += 1
                return None
            data = entry.read(made.entry_size() + 1)
        checked = len(_MAGIC) + 64
        body = data[checked:]
        if data[:len(_MAGIC)] != _MAGIC or data[len(_MAGIC):checked] != hashlib.sha256(body).hexdigest().encode() \
                or not body.startswith(made.header()) or len(data) != made.entry_size():
            self.stats.rejected += 1
            return None
        return np.frombuffer(body, dtype=np.uint8, offset=len(made.header()))

    def put(self, made: Made, packed: np.ndarray) -> None:
        """Atomic: written to a temporary file beside the entry, then renamed over it; what is
        not a regular file at its place (a FIFO, a link someone put there) is left alone. A
        cache that cannot be written is skipped silently: it only saves time."""
        if self.folder is None:
            return
        body = made.header() + packed.astype(np.uint8).tobytes()
        path = self._path(made.key)
        try:
            if not stat.S_ISREG(os.lstat(path).st_mode):
                return
        except OSError:
            pass  # no entry yet
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            try:
                with os.fdopen(handle, "wb") as out:
                    out.write(_MAGIC + hashlib.sha256(body).hexdigest().encode() + body)
                os.replace(temporary, path)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
        except OSError:
            return

    def warn(self) -> None:
        """One warning per kind of problem met (workers' stats included), after an audit."""
        from fertility.errors import FertilityWarning

        rejected, special = self.stats.rejected, self.stats.special
        if rejected:
            one = rejected == 1
            warnings.warn(f"profile cache {self.folder}: {rejected} {'entry' if one else 'entries'} did not match the "
                          f"text {'it was' if one else 'they were'} made for (damaged or edited); recomputed and "
                          f"rewritten, no number came from {'it' if one else 'them'}", FertilityWarning, stacklevel=2)
        if special:
            warnings.warn(f"profile cache {self.folder}: {special} {'entry is' if special == 1 else 'entries are'} "
                          "not a regular file (a FIFO, device, socket, folder or link); skipped without opening",
                          FertilityWarning, stacklevel=2)


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

    @cached_property
    def char_of_byte(self) -> np.ndarray:
        """Per byte offset (and the end): the character holding it; made on first use, once
        per chunk whatever the number of tokenizers that map offsets through it."""
        n = len(self.codes)
        return np.repeat(np.arange(n + 1, dtype=np.int64), np.append(np.diff(self.char_starts), 1))


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
    continues = _continuations(texts, codes, int(char_starts[-1]), cache)
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


def _continuations(texts: list[str], codes: np.ndarray, n_bytes: int, cache: ProfileCache | None) -> np.ndarray:
    """Per character: does it continue a cluster? From a cache entry that passes every check,
    else computed (and cached)."""
    pairs = PairJoins(texts, codes)
    use = cache is not None and cache.folder is not None
    made = Made(cache.key(texts), len(texts), n_bytes, len(codes)) if use and cache is not None else None
    if made is not None and cache is not None:
        packed = cache.get(made)
        if packed is not None:
            continues = np.unpackbits(packed, count=len(codes)).astype(bool)
            mismatch = (continues[1:] != pairs.expected()) & ~pairs.undecided()
            if len(continues) and (continues[0] or mismatch.any()):
                cache.stats.rejected += 1
            else:
                cache.stats.hits += 1
                return continues
    continues = np.zeros(len(codes), dtype=bool)  # one bit per character in the cache: an eighth of a byte
    continues[1:] = pairs.segmented(texts)
    if made is not None and cache is not None:
        cache.put(made, np.packbits(continues))
    return continues
