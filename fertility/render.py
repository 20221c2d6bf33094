"""Renderers: a rich table for terminals, and JSON, CSV, Markdown, from a DataFrame + signature."""

from __future__ import annotations

import io
import json
import math

import pandas as pd
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .results import ALL
from .signature import short_signature
from .text import UNSPACED_SCRIPTS
from .version import __version__

FORMATS = ("table", "json", "csv", "markdown")

# column -> (header, kind) for human-facing formats
_DISPLAY = {
    "tokenizer": ("tokenizer", "text"), "lang": ("lang", "text"), "script": ("script", "text"),
    "n_docs": ("docs", "int"), "n_bytes": ("bytes", "int"), "n_chars": ("chars", "int"),
    "n_graphemes": ("graphemes", "int"), "n_words": ("words", "int"), "n_tokens": ("tokens", "int"),
    "n_split_words": ("split words", "int"),
    "chars_per_token": ("chars/tok", "ratio"), "bytes_per_token": ("bytes/tok", "ratio"),
    "graphemes_per_token": ("graph/tok", "ratio"), "tokens_per_word": ("tok/word", "ratio"),
    "split_word_share": ("split %", "share"),
    "n_unknown_tokens": ("unk", "int"), "n_byte_tokens": ("byte toks", "int"),
    "n_boundaries": ("boundaries", "int"), "n_cut_boundaries": ("cuts", "int"),
    "unknown_share": ("unk %", "share"), "byte_token_share": ("byte %", "share"),
    "grapheme_cut_share": ("cut %", "share"),
}


WIDE = 170  # terminal width from which the table shows every count
# The terminal table keeps what fits in ~120 columns; json/csv/markdown carry every count.
TABLE_COLUMNS = ["tokenizer", "lang", "script", "n_docs", "n_chars", "n_tokens", "chars_per_token",
                 "bytes_per_token", "graphemes_per_token", "tokens_per_word", "split_word_share"]

WIDE_COLUMNS = ["tokenizer", "lang", "script", "n_docs", "n_bytes", "n_chars", "n_graphemes", "n_words",
                "n_tokens", "chars_per_token", "bytes_per_token", "graphemes_per_token",
                "tokens_per_word", "split_word_share"]


def _cell(value, kind: str) -> str:
    if kind == "text":
        return str(value)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if kind == "int":
        return f"{int(value):,}"
    if kind == "share":
        return f"{100 * value:.1f}%"
    return f"{value:.2f}"


def _json_value(value):
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item"):  # numpy scalar
        return _json_value(value.item())
    if isinstance(value, dict):
        return {k: _json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    return value


_SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def findings_text(findings, *, examples: int = 2) -> Text:
    """The findings section under the table: each verdict on a line; a code's fix and examples
    once, under its first (most severe) finding, so twenty languages do not repeat them."""
    out = Text()
    out.append(f"Findings ({len(findings)}, most severe first; all details with -f json)\n"
               if findings else "Findings: none\n", style="bold")
    explained: set[str] = set()
    for finding in findings:
        out.append(f"[{finding.severity}]", style=_SEVERITY_STYLE[finding.severity])
        where = f" {finding.tokenizer}" + (f" {finding.lang}" if finding.lang else "")
        out.append(f" {finding.code}{where}: ", style="bold")
        out.append(finding.message + "\n")
        if finding.code not in explained:
            explained.add(finding.code)
            out.append(f"    fix: {finding.fix}\n", style="dim")
            for example in finding.examples[:examples]:
                out.append(f"    e.g. {example}\n", style="dim")
    return out


def findings_markdown(findings, *, examples: int = 3) -> str:
    lines = ["", "## Findings", ""] if findings else []
    for f in findings:
        where = f"{f.tokenizer}" + (f" {f.lang}" if f.lang else "")
        lines.append(f"- **{f.severity}** `{f.code}` {where}: {f.message}. Fix: {f.fix}.")
        lines += [f"  - e.g. `{example}`" for example in f.examples[:examples]]
    return "\n".join(lines) + ("\n" if lines else "")


def notes(frame: pd.DataFrame, *, width: int = WIDE) -> list[str]:
    """Footnotes a reader needs to read the numbers right."""
    unspaced = sorted(set(frame["script"]) & UNSPACED_SCRIPTS)
    out = []
    if unspaced:
        out.append(f"tok/word and split words are n/a for scripts written without spaces "
                   f"({', '.join(unspaced)}); ALL rows count spaced languages only for them.")
    out.append("chars are Unicode code points of the text as read (no normalization); "
               "graphemes are extended grapheme clusters.")
    if width < WIDE:
        out.append(f"bytes, graphemes and words counts: widen the terminal to {WIDE} columns "
                   "or use -f json|csv|markdown.")
    return out


def to_json(frame: pd.DataFrame, signature: dict, *, findings=None, by: str = "lang") -> str:
    rows = [{k: _json_value(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]
    payload = {"fertility_version": __version__, "signature": signature,
               "signature_short": short_signature(signature), "by": by, "rows": rows}
    if findings is not None:
        payload["findings"] = [_json_value(f.as_dict()) for f in findings]
    return json.dumps(payload, ensure_ascii=False, indent=2) + "\n"


def to_csv(frame: pd.DataFrame) -> str:
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False, lineterminator="\n")
    return buffer.getvalue()


def to_markdown(frame: pd.DataFrame, signature: dict, *, findings=None) -> str:
    columns = list(frame.columns)
    lines = ["| " + " | ".join(_DISPLAY[c][0] for c in columns) + " |",
             "|" + "|".join("---" if _DISPLAY[c][1] == "text" else "---:" for c in columns) + "|"]
    for row in frame.itertuples(index=False):
        cells = [_cell(value, _DISPLAY[c][1]) for c, value in zip(columns, row)]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", *(f"- {note}" for note in notes(frame)), f"- signature: `{short_signature(signature)}`"]
    return "\n".join(lines) + "\n" + findings_markdown(findings or [])


def table(frame: pd.DataFrame, signature: dict, *, width: int = WIDE,
          title: str = "fertility audit") -> Table:
    result = Table(title=title, caption=short_signature(signature), caption_justify="left")
    wanted = WIDE_COLUMNS if width >= WIDE else TABLE_COLUMNS
    columns = [c for c in wanted if c in frame.columns]
    for column in columns:
        header, kind = _DISPLAY[column]
        result.add_column(header, justify="left" if kind == "text" else "right", no_wrap=True,
                          min_width=len(header))
    previous = None
    for row in frame.itertuples(index=False):
        values = dict(zip(frame.columns, row))
        if previous is not None and values["tokenizer"] != previous:
            result.add_section()
        previous = values["tokenizer"]
        style = "bold" if values["lang"] == ALL else None
        result.add_row(*(_cell(values[c], _DISPLAY[c][1]) for c in columns), style=style)
    return result


def print_table(console: Console, frame: pd.DataFrame, signature: dict, *, findings=None) -> None:
    """The terminal view: table, footnotes, then findings (when diagnosed)."""
    console.print(table(frame, signature, width=console.width))
    for note in notes(frame, width=console.width):
        console.print(note, style="dim", markup=False)
    if findings is not None:
        console.print()
        console.print(findings_text(findings))


def to_text_table(frame: pd.DataFrame, signature: dict, *, findings=None, width: int = WIDE) -> str:
    """The terminal view as plain text (for --output with the table format)."""
    console = Console(file=io.StringIO(), width=width, no_color=True, force_terminal=False)
    print_table(console, frame, signature, findings=findings)
    return console.file.getvalue()


def gate_table(checks) -> Table:
    """`fertility check`: one row per threshold and language, with its verdict."""
    result = Table(title="fertility check")
    for header in ("threshold", "lang", "limit", "measured", "verdict"):
        result.add_column(header, justify="right" if header in ("limit", "measured") else "left")
    for c in checks:
        result.add_row(c.threshold, c.lang, f"{c.limit:.4g}", f"{c.measured:.4g}",
                       "[green]pass[/]" if c.passed else "[bold red]FAIL[/]")
    return result
