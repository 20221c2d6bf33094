"""Vocabulary allocation by script: how many entries each Unicode script holds.

Every id is read back as the bytes it stands for. Entries that are not whole UTF-8 text are
`undecodable` (byte-level fragments, byte-fallback pieces); special and control tokens are
kept apart. A decodable entry belongs to the one script of its letters (`\\p{Script=...}`, via
the `regex` module); no letters is `Zyyy` (Common: digits, punctuation, spaces); letters of
two scripts is `mixed`. Where the model can tell (tiktoken's BPE), an entry is `unreachable`
when encoding its own text does not give it back (Land & Bartolo 2024 use the same test).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import regex

from fertility.text.units import SCRIPT_NAMES

COMMON = "Zyyy"
MIXED = "mixed"
OTHER = "other"
_SCRIPT = regex.compile("|".join(f"(?P<{code}>[\\p{{Script={name}}}]+)" for code, name in SCRIPT_NAMES.items())
                        + r"|(?P<Zyyy>[\p{Script=Common}\p{Script=Inherited}]+)|(?P<other>.)", regex.DOTALL)

NORMAL, SPECIAL, BYTE, UNUSED, UNKNOWN = "normal", "special", "byte", "unused", "unknown"
# The ordinary vocabulary, for every backend: the ids a text can produce when special tokens are
# neither added nor parsed, as fertility counts. Ordinary and byte pieces and the unknown token
# are in it; special and control tokens (BOS/EOS, chat markers, reserved slots, [CLS], [SEP],
# [PAD], [MASK]) and unused ids are not. Rényi efficiency's V and the ids never produced count it.
ORDINARY_KINDS = (NORMAL, BYTE, UNKNOWN)


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
    """The one script of the letters in `text`: a code like Beng, Zyyy (none), or mixed."""
    found = {match.lastgroup for match in _SCRIPT.finditer(text)} - {COMMON}
    if not found:
        return COMMON
    return found.pop() if len(found) == 1 else MIXED


def scripts_of(texts: list[str]) -> list[str]:
    """`script_of` for many texts at once: each distinct character is classified once, then
    every text's scripts are the least and greatest script number among its letters."""
    import numpy as np

    from fertility.text.units import code_points

    if not texts:
        return []
    codes = code_points("".join(texts))
    distinct, which = np.unique(codes, return_inverse=True)
    names = [COMMON, *SCRIPT_NAMES, OTHER]
    number = {name: i for i, name in enumerate(names)}
    matches = [_SCRIPT.match(chr(c)) for c in distinct.tolist()]  # the last group matches any character
    of_char = np.array([number[str(m.lastgroup) if m else OTHER] for m in matches], dtype=np.int64)[which]
    sizes = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    starts = np.cumsum(sizes) - sizes
    letters = of_char != 0
    low = np.where(letters, of_char, len(names)).astype(np.int64)
    high = np.where(letters, of_char, -1).astype(np.int64)
    ends_ok = sizes > 0
    least = np.full(len(texts), len(names), dtype=np.int64)
    most = np.full(len(texts), -1, dtype=np.int64)
    if len(codes):
        least[ends_ok] = np.minimum.reduceat(low, starts[ends_ok])
        most[ends_ok] = np.maximum.reduceat(high, starts[ends_ok])
    return [COMMON if b < 0 else names[a] if a == b else MIXED for a, b in zip(least.tolist(), most.tolist())]


def _vocabulary(tokenizer: Any) -> tuple[str, Any] | None:
    """Where a tokenizer's vocabulary is read from: (kind, object), or None (the baselines)."""
    own = getattr(tokenizer, "vocabulary", None)
    if callable(own):
        return "own", own
    from ._baselines import _Baseline
    if isinstance(tokenizer, _Baseline):
        return None
    for kind in ("encoding", "processor", "tokenizer"):  # tiktoken, SentencePiece, Hugging Face
        if hasattr(tokenizer, kind):
            return kind, getattr(tokenizer, kind)
    return None


def entries(tokenizer: Any) -> list[tuple[int, bytes | None, str]] | None:
    """(id, bytes, kind) for every id of the tokenizer's vocabulary, or None when it has none
    (the baselines). A backend may provide its own `vocabulary()` returning the same list."""
    found = _vocabulary(tokenizer)
    if found is None:
        return None
    kind, source = found
    listing = {"own": lambda v: v(), "encoding": _tiktoken_entries, "processor": _spm_entries,
               "tokenizer": _hf_entries}[kind]
    return listing(source)


def ordinary_ids(tokenizer: Any) -> Any:
    """The ids of the ordinary vocabulary (ORDINARY_KINDS), sorted, as a numpy array; None for
    a tokenizer without a vocabulary (the baselines). The ids of `entries` whose kind is
    ordinary; for a Hugging Face file the same set is found without listing every entry's
    bytes (a second or more for Llama-3), from its added tokens (tested to agree)."""
    import numpy as np

    found = _vocabulary(tokenizer)
    if found is None:
        return None
    kind, source = found
    if kind == "encoding":  # tiktoken (and Tekken): ranks only, specials never built in
        return np.sort(np.fromiter(source._mergeable_ranks.values(), dtype=np.int64))
    if kind == "tokenizer":
        return _hf_ordinary_ids(source)
    listed = entries(tokenizer) or []
    return np.asarray([index for index, _, what in listed if what in ORDINARY_KINDS], dtype=np.int64)


def _hf_ordinary_ids(tokenizer) -> Any:
    """Every id but the special added tokens, the unknown token kept (as `_hf_entries` says)."""
    import numpy as np

    ids = np.sort(np.fromiter(tokenizer.get_vocab(with_added_tokens=True).values(), dtype=np.int64))
    special = {index for index, token in tokenizer.get_added_tokens_decoder().items() if token.special}
    unknown = _hf_unknown_id(tokenizer)
    special.discard(unknown)
    return ids[~np.isin(ids, np.fromiter(special, dtype=np.int64, count=len(special)))] if special else ids


def _hf_unknown_id(tokenizer, config: dict | None = None) -> int | None:
    """The unknown token's id: the model's `unk_token` (BPE, WordPiece, WordLevel) or `unk_id`
    (Unigram, read from the serialized model only then)."""
    unk = getattr(tokenizer.model, "unk_token", None)
    if isinstance(unk, str) and unk:
        return tokenizer.token_to_id(unk)
    if type(tokenizer.model).__name__ != "Unigram":
        return None
    if config is None:
        import json
        config = json.loads(tokenizer.to_str())
    unk_id = (config.get("model") or {}).get("unk_id")
    return unk_id if isinstance(unk_id, int) else None


def size(tokenizer: Any) -> int | None:
    """`len(entries(tokenizer))` without listing them (an audit needs only the number)."""
    found = _vocabulary(tokenizer)
    if found is None:
        return None
    kind, source = found
    counting = {"own": lambda v: len(v()), "encoding": lambda e: e.n_vocab,
                "processor": lambda p: p.get_piece_size(),
                "tokenizer": lambda t: len(t.get_vocab(with_added_tokens=True))}[kind]
    return counting(source)


def _tiktoken_entries(encoding) -> list[tuple[int, bytes | None, str]]:
    out: list[tuple[int, bytes | None, str]] = []
    for index in range(encoding.n_vocab):
        try:
            out.append((index, encoding.decode_single_token_bytes(index), NORMAL))
        except KeyError:  # a gap in the ranks
            out.append((index, None, UNUSED))
    return out


def _spm_entries(processor) -> list[tuple[int, bytes | None, str]]:
    out: list[tuple[int, bytes | None, str]] = []
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


def _hf_entries(tokenizer) -> list[tuple[int, bytes | None, str]]:
    import json

    from ._hf import _byte_level_alphabet

    try:
        config = json.loads(tokenizer.to_str())
    except Exception:  # noqa: BLE001 - a custom (Python) normalizer, as GGUF WordPiece has, cannot be
        normalizer = tokenizer.normalizer  # serialized; it does not change the vocabulary: leave it out
        tokenizer.normalizer = None
        try:
            config = json.loads(tokenizer.to_str())
        finally:
            tokenizer.normalizer = normalizer
    model = config.get("model") or {}
    special = {t["id"] for t in config.get("added_tokens") or [] if t.get("special")}
    unknown = _hf_unknown_id(tokenizer, config)
    byte_level = "ByteLevel" in json.dumps(config.get("pre_tokenizer")) + json.dumps(config.get("decoder"))
    alphabet = _byte_level_alphabet() if byte_level else {}
    prefix = model.get("continuing_subword_prefix") or ""
    out: list[tuple[int, bytes | None, str]] = []
    for token, index in sorted(tokenizer.get_vocab(with_added_tokens=True).items(), key=lambda kv: kv[1]):
        if index == unknown:
            out.append((index, None, UNKNOWN))
        elif index in special:
            out.append((index, None, SPECIAL))
        elif model.get("byte_fallback") and len(token) == 6 and token.startswith("<0x") and token.endswith(">"):
            out.append((index, bytes([int(token[3:5], 16)]), BYTE))
        elif alphabet and all(c in alphabet for c in token):
            out.append((index, bytes(alphabet[c] for c in token), NORMAL))
        else:
            text = token[len(prefix):] if prefix and token.startswith(prefix) and token != prefix else token
            out.append((index, text.replace("\u2581", " ").encode("utf-8"), NORMAL))
    return out


def allocation(tokenizer: Any, *, examples: int = 8) -> VocabAllocation | None:
    """The vocabulary by script, or None for a tokenizer without a vocabulary."""
    listed = entries(tokenizer)
    if listed is None:
        return None
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
    unreachable, shown = _unreachable(tokenizer, decodable, examples)
    return VocabAllocation(size=len(listed), by_script=dict(scripts.most_common()),
                           n_special=kinds[SPECIAL] + kinds[UNKNOWN],
                           n_byte=kinds[BYTE], n_undecodable=undecodable, n_unused=kinds[UNUSED],
                           n_unreachable=unreachable, unreachable_examples=shown)


def _unreachable(tokenizer: Any, decodable: list[tuple[int, str]], examples: int) -> tuple[int | None, tuple[str, ...]]:
    """Entries whose own text encodes to something else: a byte-level BPE with a split regex
    never builds them (tiktoken only; other models' prefixes and normalizers blur the test)."""
    encoding = getattr(tokenizer, "encoding", None)
    if encoding is None:
        return None, ()
    missed = [(index, text) for index, text in decodable if encoding.encode_ordinary(text) != [index]]
    return len(missed), tuple(repr(text) for _, text in missed[:examples])


def allocations(tokenizers: dict[str, Any]) -> dict[str, VocabAllocation]:
    """name -> allocation, for the tokenizers that have a vocabulary."""
    out = {}
    for name, tokenizer in tokenizers.items():
        found = allocation(tokenizer)
        if found is not None:
            out[name] = found
    return out
