"""Named pre-tokenizer split patterns, as published with the encodings that use them.

A `.tiktoken` ranks file does not carry its split pattern, so we know the patterns of the
well-known files by SHA-256 and accept `--pattern NAME|REGEX` for the rest.
"""

from __future__ import annotations

import regex

from fertility.errors import UsageError

# GPT-2 / r50k / p50k, in tiktoken's faster but equivalent form of
# 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
GPT2 = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
CL100K = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++"""
          r"""[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""")
O200K = "|".join([  # noqa: FLY002 - one alternative a line, as tiktoken writes it
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
])

PATTERNS: dict[str, str] = {
    "gpt2": GPT2,
    "r50k": GPT2,
    "p50k": GPT2,
    "cl100k": CL100K,
    "o200k": O200K,
}


def resolve_pattern(name_or_regex: str) -> tuple[str, str]:
    """(name, regex) for a known name or a literal regex; a regex that does not compile is an error."""
    if name_or_regex in PATTERNS:
        return name_or_regex, PATTERNS[name_or_regex]
    try:
        regex.compile(name_or_regex)
    except regex.error as err:
        raise UsageError(f"--pattern {name_or_regex!r}: neither a known pattern "
                         f"({', '.join(PATTERNS)}) nor a valid regex ({err})") from None
    return "custom", name_or_regex
