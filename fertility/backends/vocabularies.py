"""What each library's vocabulary holds: every id with the bytes it stands for and its kind.

A backend's `vocabulary()` returns one of these (baselines: None), so that nothing outside a
backend has to know whether it wraps tiktoken, SentencePiece or `tokenizers`. Listing every
entry's bytes takes a second or more for large vocabularies; the audit needs only the ordinary
ids and their number, so each library answers those directly where it can (tested to agree
with the listing).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

NORMAL, SPECIAL, BYTE, UNUSED, UNKNOWN = "normal", "special", "byte", "unused", "unknown"
# The ordinary vocabulary, for every backend: the ids a text can produce when special tokens are
# neither added nor parsed, as fertility counts. Ordinary and byte pieces and the unknown token
# are in it; special and control tokens (BOS/EOS, chat markers, reserved slots, [CLS], [SEP],
# [PAD], [MASK]) and unused ids are not. Rényi efficiency's V and the ids never produced count it.
ORDINARY_KINDS = (NORMAL, BYTE, UNKNOWN)

VocabEntry = tuple[int, "bytes | None", str]  # (id, bytes or None, kind), sorted by id


class Vocabulary:
    """A listing of (id, bytes, kind); `ordinary_ids`, `size` and `unreachable` from it unless a
    library knows them faster."""

    def entries(self) -> list[VocabEntry]:
        raise NotImplementedError

    def ordinary_ids(self) -> Any:
        """The ids of the ordinary vocabulary (ORDINARY_KINDS), sorted, as a numpy array."""
        import numpy as np

        return np.asarray([index for index, _, what in self.entries() if what in ORDINARY_KINDS], dtype=np.int64)

    def size(self) -> int:
        return len(self.entries())

    def unreachable(self, decodable: list[tuple[int, str]], examples: int) -> tuple[int | None, tuple[str, ...]]:
        """Entries whose own text encodes to something else: (how many, examples), or (None, ())
        where the model cannot tell (other models' prefixes and normalizers blur the test)."""
        return None, ()


class ListedVocabulary(Vocabulary):
    """A backend's own listing (GGUF reads its token types), made once when first asked."""

    def __init__(self, listing: Callable[[], list[VocabEntry]]):
        self._listing = listing
        self._listed: tuple[VocabEntry, ...] | None = None

    def entries(self) -> list[VocabEntry]:
        if self._listed is None:
            self._listed = tuple(self._listing())
        return list(self._listed)


class TiktokenVocabulary(Vocabulary):
    """tiktoken (and Tekken) ranks: no specials are built in; a gap in the ranks is unused."""

    def __init__(self, encoding):
        self.encoding = encoding

    def entries(self) -> list[VocabEntry]:
        """Read from the encoding's own tables (rank -> bytes, then its special tokens), as
        `decode_single_token_bytes` reads them, without a call per id."""
        encoding = self.encoding
        by_rank = {rank: data for data, rank in encoding._mergeable_ranks.items()}
        for name, rank in encoding._special_tokens.items():
            by_rank.setdefault(rank, name.encode("utf-8"))
        return [(index, data, NORMAL) if (data := by_rank.get(index)) is not None else (index, None, UNUSED)
                for index in range(encoding.n_vocab)]

    def ordinary_ids(self) -> Any:
        import numpy as np

        return np.sort(np.fromiter(self.encoding._mergeable_ranks.values(), dtype=np.int64))

    def size(self) -> int:
        return self.encoding.n_vocab

    def unreachable(self, decodable: list[tuple[int, str]], examples: int) -> tuple[int | None, tuple[str, ...]]:
        """A byte-level BPE with a split regex never builds an entry whose text encodes
        otherwise (Land & Bartolo 2024 use the same test)."""
        missed = [(index, text) for index, text in decodable if self.encoding.encode_ordinary(text) != [index]]
        return len(missed), tuple(repr(text) for _, text in missed[:examples])


class SentencePieceVocabulary(Vocabulary):
    def __init__(self, processor):
        self.processor = processor

    def entries(self) -> list[VocabEntry]:
        processor = self.processor
        out: list[VocabEntry] = []
        for index in range(processor.get_piece_size()):
            if processor.IsUnknown(index):
                out.append((index, None, UNKNOWN))
            elif processor.IsControl(index):
                out.append((index, None, SPECIAL))
            elif processor.IsUnused(index):
                out.append((index, None, UNUSED))
            elif processor.IsByte(index):  # <0xE0>
                out.append((index, bytes([int(processor.IdToPiece(index)[3:5], 16)]), BYTE))
            else:
                out.append((index, processor.IdToPiece(index).replace("\u2581", " ").encode("utf-8"), NORMAL))
        return out

    def size(self) -> int:
        return self.processor.get_piece_size()


class HFVocabulary(Vocabulary):
    """A `tokenizers.Tokenizer`'s vocabulary, added tokens included; `byte_level`: whether its
    entries spell bytes in GPT-2's alphabet (the backend read that from the config on load)."""

    def __init__(self, tokenizer, *, byte_level: bool, ids: Any = None):
        """`ids`: every id of the vocabulary with its added tokens, sorted, where the loader has
        already listed them (the library lists 128k entries in about 0.2 s)."""
        self.tokenizer, self.byte_level, self._ids = tokenizer, byte_level, ids

    def entries(self) -> list[VocabEntry]:
        """Read from the live tokenizer's parts, never its whole serialization (1.8 s for
        Llama-3, most of it the merges, which say nothing about an entry's bytes)."""
        tokenizer = self.tokenizer
        model = tokenizer.model
        special = {index for index, token in tokenizer.get_added_tokens_decoder().items() if token.special}
        unknown = _hf_unknown_id(tokenizer)
        spelling = byte_level_spelling() if self.byte_level else None
        byte_fallback = bool(getattr(model, "byte_fallback", False))
        prefix = getattr(model, "continuing_subword_prefix", None) or ""
        out: list[VocabEntry] = []
        for token, index in sorted(tokenizer.get_vocab(with_added_tokens=True).items(), key=lambda kv: kv[1]):
            if index == unknown:
                out.append((index, None, UNKNOWN))
            elif index in special:
                out.append((index, None, SPECIAL))
            elif byte_fallback and len(token) == 6 and token.startswith("<0x") and token.endswith(">"):
                out.append((index, bytes([int(token[3:5], 16)]), BYTE))
            elif spelling is not None and (raw := spelling.bytes_of(token)) is not None:
                out.append((index, raw, NORMAL))
            else:
                text = token[len(prefix):] if prefix and token.startswith(prefix) and token != prefix else token
                out.append((index, text.replace("\u2581", " ").encode("utf-8"), NORMAL))
        return out

    def ordinary_ids(self) -> Any:
        """Every id but the special added tokens, the unknown token kept (as `entries` says),
        found without listing every entry's bytes (a second or more for Llama-3)."""
        import numpy as np

        tokenizer = self.tokenizer
        ids = self._ids if self._ids is not None else \
            np.sort(np.fromiter(tokenizer.get_vocab(with_added_tokens=True).values(), dtype=np.int64))
        special = {index for index, token in tokenizer.get_added_tokens_decoder().items() if token.special}
        special.discard(_hf_unknown_id(tokenizer))
        return ids[~np.isin(ids, np.fromiter(special, dtype=np.int64, count=len(special)))] if special else ids

    def size(self) -> int:
        return len(self.tokenizer.get_vocab(with_added_tokens=True))


def _hf_unknown_id(tokenizer, config: dict | None = None) -> int | None:
    """The unknown token's id: the model's `unk_token` (BPE, WordPiece, WordLevel) or `unk_id`
    (Unigram, read from the serialized model only then)."""
    unk = getattr(tokenizer.model, "unk_token", None)
    if isinstance(unk, str) and unk:
        return tokenizer.token_to_id(unk)
    if type(tokenizer.model).__name__ != "Unigram":
        return None
    if config is None:  # the model's own serialization: the whole tokenizer's fails on a custom normalizer
        import json
        config = {"model": json.loads(tokenizer.model.__getstate__())}
    unk_id = (config.get("model") or {}).get("unk_id")
    return unk_id if isinstance(unk_id, int) else None


@dataclass(frozen=True)
class ByteLevelSpelling:
    """GPT-2's byte-level spelling (one alphabet character per byte), read with one
    `str.translate` per token: the letters, and the table that maps each to its byte's code."""

    letters: frozenset[str]
    table: dict[int, str]

    def bytes_of(self, token: str) -> bytes | None:
        """The bytes the token spells; None when it is not spelled in the alphabet."""
        return token.translate(self.table).encode("latin-1") if self.letters.issuperset(token) else None


@cache
def byte_level_spelling() -> ByteLevelSpelling:
    alphabet = byte_level_alphabet()
    return ByteLevelSpelling(frozenset(alphabet), str.maketrans({c: chr(b) for c, b in alphabet.items()}))


def byte_level_alphabet() -> dict[str, int]:
    """GPT-2's printable stand-ins for the 256 bytes (as in `tokenizers`' ByteLevel): how a
    byte-level vocabulary spells the bytes its entries stand for."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
                 *range(ord("®"), ord("ÿ") + 1)]
    chars, extra = {}, 0
    for byte in range(256):
        if byte in printable:
            chars[chr(byte)] = byte
        else:
            chars[chr(256 + extra)] = byte
            extra += 1
    return chars
