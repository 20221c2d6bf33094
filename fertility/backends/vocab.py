"""Vocabulary allocation by script: how many entries each Unicode script holds.

Every id is read back as the bytes it stands for. Entries that are not whole UTF-8 text are
`undecodable` (byte-level fragments, byte-fallback pieces); special and control tokens are
kept apart. A decodable entry belongs to the one script of its characters other than Common and
Inherited ones (`\\p{Script=...}`, via the `regex` module): letters, and a script's own marks and
digits (a Bengali vowel sign alone is Beng); none such is `Zyyy` (spaces, punctuation, ASCII
digits); two scripts is `mixed`. Where the model can tell (tiktoken's BPE), an entry is `unreachable`
when encoding its own text does not give it back (Land & Bartolo 2024 use the same test).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import regex

from fertility.text.units import SCRIPT_NAMES

from . import Tokenizer
from .vocabularies import BYTE, NORMAL, SPECIAL, UNKNOWN, UNUSED

COMMON = "Zyyy"
MIXED = "mixed"
OTHER = "other"
_SCRIPT = regex.compile("|".join(f"(?P<{code}>[\\p{{Script={name}}}]+)" for code, name in SCRIPT_NAMES.items())
                        + r"|(?P<Zyyy>[\p{Script=Common}\p{Script=Inherited}]+)|(?P<other>.)", regex.DOTALL)

@dataclass(frozen=True)
class VocabAllocation:
    size: int
    by_script: dict[str, int]  # decodable normal entries per script code (Zyyy, mixed, other too)
    n_special: int = 0  # special, control and added special tokens, and the unknown token
    n_byte: int = 0  # single-byte fallback pieces
    n_undecodable: int = 0  # entries that are not whole UTF-8 text (byte fragments included)
    n_unused: int = 0
    n_unreachable: int | None = None  # None: the backend cannot tell
    unreachable_examples: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        return {"size": self.size, "by_script": dict(self.by_script), "n_special": self.n_special,
                "n_byte": self.n_byte, "n_undecodable": self.n_undecodable, "n_unused": self.n_unused,
                "n_unreachable": self.n_unreachable, "unreachable_examples": list(self.unreachable_examples)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> VocabAllocation:
        return cls(size=int(data["size"]), by_script={str(k): int(v) for k, v in data["by_script"].items()},
                   n_special=int(data.get("n_special", 0)), n_byte=int(data.get("n_byte", 0)),
                   n_undecodable=int(data.get("n_undecodable", 0)), n_unused=int(data.get("n_unused", 0)),
                   n_unreachable=None if data.get("n_unreachable") is None else int(data["n_unreachable"]),
                   unreachable_examples=tuple(str(e) for e in data.get("unreachable_examples", [])))


def script_of(text: str) -> str:
    """The one script of the characters in `text` other than Common and Inherited ones (letters,
    a script's marks and digits): a code like Beng, Zyyy (none), or mixed."""
    found = {match.lastgroup for match in _SCRIPT.finditer(text)} - {COMMON}
    if not found:
        return COMMON
    return found.pop() if len(found) == 1 else MIXED


# characters classified at once: the per-character arrays stay tens of megabytes, however long
# a vocabulary (or one entry of a hostile one) is
_BATCH_CHARS = 1 << 20


def scripts_of(texts: list[str]) -> list[str]:
    """`script_of` for many texts at once: each distinct character is classified once, then
    every text's scripts are the least and greatest script number among its letters.

    Texts are taken in batches of about _BATCH_CHARS characters, a longer text in pieces whose
    bounds are combined, so that memory does not grow with the vocabulary's total length (a
    .tiktoken line of a 60 MB token ran out of memory here)."""
    import numpy as np

    if not texts:
        return []
    names = [COMMON, *SCRIPT_NAMES, OTHER]
    least = np.full(len(texts), len(names), dtype=np.int64)
    most = np.full(len(texts), -1, dtype=np.int64)
    pieces: list[str] = []
    owners: list[int] = []
    size = 0
    for index, text in enumerate(texts):
        for start in range(0, max(len(text), 1), _BATCH_CHARS):
            piece = text[start:start + _BATCH_CHARS]
            pieces.append(piece)
            owners.append(index)
            size += len(piece)
            if size >= _BATCH_CHARS:
                _narrow(pieces, owners, names, least, most)
                pieces, owners, size = [], [], 0
    if pieces:
        _narrow(pieces, owners, names, least, most)
    return [COMMON if b < 0 else names[a] if a == b else MIXED for a, b in zip(least.tolist(), most.tolist())]


def _narrow(pieces: list[str], owners: list[int], names: list[str], least: Any, most: Any) -> None:
    """Lower `least` and raise `most` of each owner by the script numbers of its piece's letters."""
    import numpy as np

    from fertility.text.units import code_points

    codes = code_points("".join(pieces))
    if not len(codes):
        return
    distinct, which = np.unique(codes, return_inverse=True)
    number = {name: i for i, name in enumerate(names)}
    matches = [_SCRIPT.match(chr(c)) for c in distinct.tolist()]  # the last group matches any character
    of_char = np.array([number[str(m.lastgroup) if m else OTHER] for m in matches], dtype=np.int64)[which]
    sizes = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
    starts = np.cumsum(sizes) - sizes
    letters = of_char != 0
    low = np.where(letters, of_char, len(names)).astype(np.int64)
    high = np.where(letters, of_char, -1).astype(np.int64)
    ends_ok = sizes > 0
    owner = np.asarray(owners, dtype=np.int64)[ends_ok]
    np.minimum.at(least, owner, np.minimum.reduceat(low, starts[ends_ok]))
    np.maximum.at(most, owner, np.maximum.reduceat(high, starts[ends_ok]))


def allocation(tokenizer: Tokenizer, *, examples: int = 8) -> VocabAllocation | None:
    """The vocabulary by script, or None for a tokenizer without a vocabulary."""
    vocabulary = tokenizer.vocabulary()
    if vocabulary is None:
        return None
    listed = vocabulary.entries()
    scripts: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    undecodable = 0
    decodable: list[tuple[int, str]] = []
    for index, data, kind in listed:
        kinds[kind] += 1
        if kind in (SPECIAL, UNUSED) or data is None:
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            undecodable += 1
            continue
        if kind == NORMAL:
            decodable.append((index, text))
    scripts.update(scripts_of([text for _, text in decodable]))
    unreachable, shown = vocabulary.unreachable(decodable, examples)
    return VocabAllocation(size=len(listed), by_script=dict(scripts.most_common()),
                           n_special=kinds[SPECIAL] + kinds[UNKNOWN],
                           n_byte=kinds[BYTE], n_undecodable=undecodable, n_unused=kinds[UNUSED],
                           n_unreachable=unreachable, unreachable_examples=shown)


def allocations(tokenizers: dict[str, Tokenizer]) -> dict[str, VocabAllocation]:
    """name -> allocation, for the tokenizers that have a vocabulary."""
    out = {}
    for name, tokenizer in tokenizers.items():
        found = allocation(tokenizer)
        if found is not None:
            out[name] = found
    return out
