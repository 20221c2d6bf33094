"""A .tiktoken rank file read and checked before tiktoken sees it: base64 tokens with ranks,
no duplicates, no gaps a native library would allocate for."""


from __future__ import annotations

import base64
import binascii
from pathlib import Path

from fertility.errors import TokenizerError

MAX_RANK = 2**31 - 1
MAX_RANK_GAP = 1 << 16
# what a line may hold: base64 (padding included, and the digits of a rank) and blanks; the
# decoder skips any other byte, so '@@@@ 300' would read as an empty token (as Whisper's '= 50256'
# is meant to) and 'QU!JD' as 'ABC'
_BASE64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="
_LINE_BYTES = _BASE64 + b" \t\r\n\v\f"


def check_ranks(source: object, ranks: dict[bytes, int]) -> None:
    """Refuse ranks tiktoken would panic or overflow on: every single byte present (byte-level
    BPE cannot encode a byte it lacks), ranks unique, in 0..MAX_RANK and nearly dense."""
    missing = [b for b in range(256) if bytes([b]) not in ranks]
    if missing:
        shown = ", ".join(f"0x{b:02x}" for b in missing[:8]) + (" ..." if len(missing) > 8 else "")
        raise TokenizerError(f"{source}: byte-level ranks lack {len(missing)} of the 256 single bytes "
                             f"({shown}); text holding them cannot be encoded")
    values = ranks.values()
    plain = set(map(type, values)) == {int} and 0 <= min(values) and max(values) <= MAX_RANK  # at C speed
    bad = None if plain else next((r for r in values if not isinstance(r, int) or isinstance(r, bool)
                                   or not 0 <= r <= MAX_RANK), None)
    if bad is not None:
        raise TokenizerError(f"{source}: rank {bad!r} out of range (ranks are integers in 0..{MAX_RANK})")
    if len(set(ranks.values())) != len(ranks):
        seen: dict[int, bytes] = {}
        for token, rank in ranks.items():
            if rank in seen:
                raise TokenizerError(f"{source}: rank {rank} is given to two tokens ({seen[rank]!r} and "
                                     f"{token!r}); ranks must be unique")
            seen[rank] = token
    largest = max(ranks.values())
    if largest >= len(ranks) + MAX_RANK_GAP:
        raise TokenizerError(f"{source}: largest rank {largest} is far beyond the {len(ranks)} tokens "
                             f"(ranks must run from 0 with gaps of under {MAX_RANK_GAP} in all)")


def parse_ranks(path: Path, data: bytes) -> dict[bytes, int]:
    """Parse a `.tiktoken` file (`base64-token rank` per line) with a line-numbered error.

    The common case is parsed in one comprehension (a third of the time); anything odd, a
    duplicate token or a malformed line, is parsed again line by line to name the line."""
    rows = [row for row in data.splitlines() if row.strip()]
    try:
        ranks = {binascii.a2b_base64(token): int(rank) for token, rank in map(bytes.split, rows)}
    except (ValueError, binascii.Error):
        ranks = {}
    if ranks and len(ranks) == len(rows) and not data.translate(None, _LINE_BYTES):
        return ranks
    return _parse_ranks_by_line(path, data)


def _parse_ranks_by_line(path: Path, data: bytes) -> dict[bytes, int]:
    """Line by line, to say which line is wrong."""
    ranks: dict[bytes, int] = {}
    first_line: dict[bytes, int] = {}
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            token_b64, rank = line.split()
            if token_b64.translate(None, _BASE64):
                raise ValueError("not base64")
            token = base64.b64decode(token_b64)  # lenient about padding like tiktoken: Whisper has "="
            ranks[token] = int(rank)
        except (ValueError, binascii.Error):
            raise TokenizerError(f"{path}:{number}: corrupt .tiktoken ranks file "
                                 "(expected 'base64-token rank')") from None
        if token in first_line:
            raise TokenizerError(f"{path}:{number}: token {token!r} is listed twice "
                                 f"(first on line {first_line[token]})")
        first_line[token] = number
    if not ranks:
        raise TokenizerError(f"{path}: empty .tiktoken ranks file")
    return ranks
