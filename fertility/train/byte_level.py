"""Byte-level token strings: the bytes they stand for, and whether only given scripts can make them.

Byte-level BPE (GPT-2, Llama-3, Qwen) writes every byte as one printable character. `extend`
keeps a new token only if its bytes hold a UTF-8 lead pair that the corpus's own scripts alone
use, which is what makes text in other scripts encode exactly as before; superwords read the
bytes to find a space inside a token.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

import regex

from fertility.text.units import SCRIPT_ALIASES, SCRIPT_NAMES


def _byte_of_char() -> dict[str, int]:
    """GPT-2's printable character -> byte table (what ByteLevel pre-tokenizers emit)."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars, extra = list(printable), 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): byte for byte, c in zip(printable, chars)}


_TO_BYTE = _byte_of_char()


def token_bytes(token: str) -> bytes | None:
    """The bytes a byte-level token stands for; None if it is not a byte-level string."""
    try:
        return bytes(_TO_BYTE[c] for c in token)
    except KeyError:
        return None


@lru_cache(maxsize=16)
def _lead_pairs(names: tuple[str, ...]) -> frozenset[bytes]:
    everything = "".join(chr(cp) for cp in range(0x80, 0x110000) if not 0xD800 <= cp <= 0xDFFF)
    ours_re = regex.compile("[" + "".join(f"\\p{{Script={n}}}" for n in names) + "]")
    ours = {m.start() for m in ours_re.finditer(everything)}
    neutral = {m.start() for m in regex.finditer(r"[\p{Script=Common}\p{Script=Inherited}\p{Cn}]", everything)}
    pairs: dict[bytes, bool] = {}
    for i, char in enumerate(everything):
        if i in ours:
            pairs.setdefault(char.encode("utf-8")[:2], True)
        elif i not in neutral:
            pairs[char.encode("utf-8")[:2]] = False
    return frozenset(p for p, only_ours in pairs.items() if only_ours)


def script_lead_pairs(scripts: Iterable[str]) -> frozenset[bytes]:
    """UTF-8 (lead byte, first continuation byte) pairs whose assigned code points all belong to
    these scripts, or to Common/Inherited (a danda, a ZWJ): a token holding one of them can
    only ever match text written in these scripts."""
    names = set()
    for code in scripts:
        for part in SCRIPT_ALIASES.get(code, (code,)):
            if part in SCRIPT_NAMES:
                names.add(SCRIPT_NAMES[part])
    return _lead_pairs(tuple(sorted(names))) if names else frozenset()


def holds_lead_pair(token: str, pairs: frozenset[bytes]) -> bool:
    """Whether the token's bytes hold one of these lead pairs."""
    data = token_bytes(token)
    return data is not None and any(data[i:i + 2] in pairs for i in range(len(data) - 1))
