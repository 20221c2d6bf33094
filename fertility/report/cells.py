"""How a number is shown, in every table, page and summary: one rule for missing values (None
or NaN: "n/a"), counts, shares, signed differences and ratios, so text, markdown, CSV-free
views and HTML never disagree on what a cell says."""

from __future__ import annotations

import math
from typing import Any


def markdown_cell(text: object) -> str:
    """Text for a markdown table cell: a `|` in a name (files may be called `a|b.json`) would
    end the cell and shift every number after it one column right, so it is escaped; a line
    break (possible in a file name) would end the row, so control characters are shown escaped."""
    return "".join(f"\\x{ord(c):02x}" if ord(c) < 32 or ord(c) == 127 else c
                   for c in str(text)).replace("|", "\\|")


def missing(value: Any) -> bool:
    """No value to show: None, or a NaN (a ratio over a zero denominator)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def number(value: Any, kind: str = "ratio", *, digits: int = 2) -> str:
    """`int` 12,345; `share` 12.3%; `signed` +0.12; anything else a ratio with `digits` decimals."""
    if missing(value):
        return "n/a"
    if kind == "int":
        return f"{int(value):,}"
    if kind == "share":
        return f"{100 * value:.1f}%"
    if kind == "signed":
        return f"{value:+.{digits}f}"
    return f"{value:.{digits}f}"


def interval(low: Any, high: Any, *, digits: int = 3) -> str:
    """`low–high`, or n/a when either end is missing."""
    return "n/a" if missing(low) or missing(high) else f"{low:.{digits}f}–{high:.{digits}f}"
