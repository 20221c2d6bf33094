"""Renderers: a rich table for terminals, and JSON, CSV, Markdown, from a DataFrame + signature."""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from rich.console import Console, RenderableType
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from fertility.metrics.counts import ALL
from fertility.results.signature import Signature
from fertility.text.units import UNSPACED_SCRIPTS

from .cells import markdown_cell, number
from .columns import COLUMNS, DROP_ORDER, WIDE_COLUMNS, short_columns

if TYPE_CHECKING:
    import pandas as pd

    from fertility.results.model import AuditResult

UNLIMITED = 1_000_000  # a width no table reaches


def natural_width(renderable: RenderableType) -> int:
    """Columns the renderable takes when nothing limits its width."""
    console = Console(width=UNLIMITED, file=io.StringIO())
    return Measurement.get(console, console.options, renderable).maximum


def fit_columns(build: Callable[[Sequence[str]], Table], columns: Sequence[str], drop_order: Sequence[str],
                width: int | None) -> tuple[Table, list[str]]:
    """The table with as many columns as fit `width` (None: all), dropping whole columns in
    `drop_order`; also the dropped columns. If even the essential ones do not fit, the table
    is returned at its natural width (the terminal wraps its lines; nothing is cropped)."""
    shown, dropped = list(columns), []
    table = build(shown)
    while width is not None and natural_width(table) > width:
        victim = next((c for c in drop_order if c in shown), None)
        if victim is None:
            break
        shown.remove(victim)
        dropped.append(victim)
        table = build(shown)
    return table, dropped


def print_unclipped(console: Console, renderable: RenderableType) -> None:
    """Print at the renderable's natural width when it is wider than the console, so rich
    never crops a cell (`0.8…`); a terminal then wraps the long lines."""
    width = natural_width(renderable)
    if width <= console.width:
        console.print(renderable)
        return
    wide = Console(file=io.StringIO(), width=width, force_terminal=console.is_terminal,
                   no_color=console.no_color, highlight=False)
    wide._color_system = console._color_system  # the same colours as the console it stands for
    wide.print(renderable)
    console.file.write(wide.file.getvalue())  # type: ignore[attr-defined]
    console.file.flush()


def _cell(value, kind: str) -> str:
    return str(value) if kind == "text" else number(value, kind if kind in ("int", "share") else "ratio")


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


def premiums_note(frame: pd.DataFrame, signature: Signature) -> str | None:
    """Why there are no premiums, once, when the corpus is not parallel (several languages)."""
    from fertility.io.parallel import recorded

    if len(set(frame["lang"]) - {ALL}) < 2:
        return None
    parallel = recorded(signature.extra)
    return None if parallel.parallel else parallel.note()


def notes(frame: pd.DataFrame, *, dropped: Sequence[str] = (), signature: Signature | None = None) -> list[str]:
    """Footnotes a reader needs to read the numbers right."""
    unspaced = sorted(set(frame["script"]) & UNSPACED_SCRIPTS)
    out = []
    if unspaced:
        out.append(f"tok/word and split words are n/a for scripts written without spaces "
                   f"({', '.join(unspaced)}); ALL rows count spaced languages only for them.")
    out.append("chars are Unicode code points of the text as read (no normalization); "
               "graphemes are extended grapheme clusters.")
    if dropped:
        out.append(dropped_note([str(COLUMNS[c].short) for c in dropped]))
    no_premiums = premiums_note(frame, signature) if signature is not None else None
    if no_premiums:
        out.append(no_premiums)
    return out


def dropped_note(headers: Sequence[str]) -> str:
    return (f"not shown at this width: {', '.join(headers)}; widen the terminal, or use "
            "-f json|csv|markdown, or redirect the output for the full table.")


def to_json(result: AuditResult, *, by: str = "lang", findings: bool | None = None) -> str:
    """The audit JSON: what AuditResult.to_dict writes and AuditResult.load reads."""
    return result.to_json(by=by, findings=findings)


def to_csv(frame: pd.DataFrame) -> str:
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False, lineterminator="\n")
    return buffer.getvalue()


def to_markdown(frame: pd.DataFrame, signature: Signature, *, findings=None) -> str:
    columns = short_columns(frame.columns)  # the counts and ratios; premiums: -f csv|json
    lines = ["| " + " | ".join(str(COLUMNS[c].short) for c in columns) + " |",
             "|" + "|".join("---" if COLUMNS[c].kind == "text" else "---:" for c in columns) + "|"]
    for row in frame.itertuples(index=False):
        cells = [markdown_cell(_cell(value, COLUMNS[c].kind)) for c, value in zip(columns, row)]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", *(f"- {note}" for note in notes(frame, signature=signature)),
              f"- signature: `{signature.short()}`"]
    return "\n".join(lines) + "\n" + findings_markdown(findings or [])


def table(frame: pd.DataFrame, columns: Sequence[str], *, title: str = "fertility audit") -> Table:
    result = Table(title=title)
    columns = [c for c in columns if c in frame.columns]
    for column in columns:
        kind, header = COLUMNS[column].kind, str(COLUMNS[column].short)
        result.add_column(header, justify="left" if kind == "text" else "right", no_wrap=kind != "text",
                          min_width=len(header))
    previous = None
    for row in frame.itertuples(index=False):
        values = dict(zip(frame.columns, row))
        if previous is not None and values["tokenizer"] != previous:
            result.add_section()
        previous = values["tokenizer"]
        style = "bold" if values["lang"] == ALL else None
        result.add_row(*(_cell(values[c], COLUMNS[c].kind) for c in columns), style=style)
    return result


def print_table(console: Console, frame: pd.DataFrame, signature: Signature, *, findings=None,
                width: int | None = None) -> None:
    """The terminal view: table, footnotes, signature, then findings (when diagnosed).
    `width`: drop columns to fit it (None: every column, however wide)."""
    shown, dropped = fit_columns(lambda columns: table(frame, columns), WIDE_COLUMNS, DROP_ORDER, width)
    print_unclipped(console, shown)
    for note in notes(frame, dropped=dropped, signature=signature):
        console.print(note, style="dim", markup=False)
    console.print(f"signature: {signature.short()}", style="dim", markup=False,
                  soft_wrap=True)
    if findings is not None:
        console.print()
        console.print(findings_text(findings))


def to_text_table(frame: pd.DataFrame, signature: Signature, *, findings=None, width: int | None = None) -> str:
    """The terminal view as plain text: for --output and for output off a terminal, every
    column at its natural width (no width limit) unless `width` is given."""
    console = Console(file=io.StringIO(), width=width or 100, no_color=True, force_terminal=False)
    print_table(console, frame, signature, findings=findings, width=width)
    return console.file.getvalue()  # type: ignore[attr-defined]


GATE_COLUMNS = ("threshold", "lang", "limit", "measured", "verdict")
GATE_DROP_ORDER = ("limit",)  # never the threshold: rows would not say what they check


def gate_table(checks, columns: Sequence[str] = GATE_COLUMNS) -> Table:
    """`fertility check`: one row per threshold and language, with its verdict."""
    result = Table(title="fertility check")
    for header in columns:
        numeric = header in ("limit", "measured")
        result.add_column(header, justify="right" if numeric else "left", no_wrap=numeric or header == "verdict")
    for c in checks:
        cells = {"threshold": c.threshold, "lang": c.lang, "limit": f"{c.limit:.4g}",
                 "measured": f"{c.measured:.4g}",
                 "verdict": "[green]pass[/]" if c.passed else "[bold red]FAIL[/]"}
        result.add_row(*(cells[h] for h in columns))
    return result


def print_gate(console: Console, checks) -> None:
    """The gate table on a terminal (columns dropped whole to fit) or off one (all of them)."""
    width = console.width if console.is_terminal else None
    shown, dropped = fit_columns(lambda columns: gate_table(checks, columns), GATE_COLUMNS, GATE_DROP_ORDER, width)
    print_unclipped(console, shown)
    if dropped:
        console.print(dropped_note(dropped), style="dim", markup=False)


def gate_text(checks) -> str:
    """The gate table as plain text, every column (for `check -o FILE`)."""
    console = Console(file=io.StringIO(), width=100, no_color=True, force_terminal=False)
    print_gate(console, checks)
    return console.file.getvalue()  # type: ignore[attr-defined]
