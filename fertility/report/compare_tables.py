"""Renderers for `fertility compare`: a rich table with winners, and JSON, CSV, Markdown."""

from __future__ import annotations

import io
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from fertility.compare import Comparison
from fertility.results import contract
from fertility.results.model import json_value
from fertility.version import __version__

from .cells import interval, markdown_cell, number
from .tables import dropped_note, fit_columns, print_unclipped

COLUMNS = ("lang", "script", "A c/t", "B c/t", "B−A", "B/A", "95% CI", "A prem", "B prem")
DROP_ORDER = ("script", "B prem", "A prem", "95% CI", "B−A", "B/A")


def _num(value: float, digits: int = 2) -> str:
    return number(value, digits=digits)


def _interval(row) -> str:
    return interval(row["ratio_ci_low"], row["ratio_ci_high"])


def comparison_table(comparison: Comparison, columns: Sequence[str] = COLUMNS) -> Table:
    a, b = comparison.a, comparison.b
    table = Table(title=f"fertility compare: A = {a}, B = {b}", caption_justify="left",
                  caption="B/A = chars/token of B over A (>1: B packs more text per token); "
                          "95% bootstrap interval over documents" if comparison.intervals else
                          "saved audits: no per-document data, no intervals")
    for header in columns:
        table.add_column(header, justify="left" if header in ("lang", "script") else "right",
                         no_wrap=header not in ("lang", "script"), min_width=len(header))
    for _, row in comparison.frame.iterrows():
        ca, cb = row["chars_per_token_a"], row["chars_per_token_b"]
        style_a = "green" if ca > cb else None
        style_b = "green" if cb > ca else None
        cells = {"lang": row["lang"], "script": row["script"],
                 "A c/t": f"[{style_a}]{_num(ca)}[/]" if style_a else _num(ca),
                 "B c/t": f"[{style_b}]{_num(cb)}[/]" if style_b else _num(cb),
                 "B−A": _signed(row["chars_per_token_diff"]), "B/A": _num(row["chars_per_token_ratio"], 3),
                 "95% CI": _interval(row), "A prem": _num(row["premium_a"]), "B prem": _num(row["premium_b"])}
        table.add_row(*(cells[c] for c in columns), style="bold" if row["lang"] == "ALL" else None)
    return table


def _signed(value: float) -> str:
    return number(value, "signed")


def print_comparison(console: Console, comparison: Comparison, *, width: int | None = None) -> None:
    """The comparison; `width`: drop columns whole to fit it (None: every column)."""
    shown, dropped = fit_columns(lambda columns: comparison_table(comparison, columns), COLUMNS, DROP_ORDER, width)
    print_unclipped(console, shown)
    if dropped:
        console.print(dropped_note(dropped), style="dim", markup=False)
    if comparison.premiums_note:
        console.print(comparison.premiums_note, style="dim", markup=False)
    console.print(f"A: {comparison.signature_a.short()}", style="dim", markup=False, soft_wrap=True)
    console.print(f"B: {comparison.signature_b.short()}", style="dim", markup=False, soft_wrap=True)
    if comparison.changed_words:
        console.print("\nMost changed words (mean tokens per occurrence, A -> B):", style="bold")
        for w in comparison.changed_words:
            console.print(f"  {w['lang']} {w['word']}: {w['tokens_a']:.1f} -> {w['tokens_b']:.1f} "
                          f"({w['count']}x)", markup=False)
    if comparison.findings_diff:
        console.print("\nFindings that differ (severity in A -> B):", style="bold")
        for f in comparison.findings_diff:
            console.print(f"  {f['code']} {f['lang'] or ''}: {f['a'] or '-'} -> {f['b'] or '-'}: {f['message']}",
                          markup=False)


def to_json(comparison: Comparison) -> str:
    payload = {"schema_version": contract.SCHEMA_VERSIONS["compare"], "fertility_version": __version__, "a": comparison.a, "b": comparison.b,
               "signature_a": comparison.signature_a.to_dict(), "signature_b": comparison.signature_b.to_dict(),
               "rows": [json_value(r) for r in comparison.frame.to_dict(orient="records")],
               "changed_words": comparison.changed_words, "findings_diff": comparison.findings_diff}
    if comparison.parallel is not None:  # whether premium_a/premium_b are premiums, and why
        payload["parallel"] = comparison.parallel.to_dict()
    return contract.dump("compare", payload)


def to_csv(comparison: Comparison) -> str:
    buffer = io.StringIO()
    comparison.frame.to_csv(buffer, index=False, lineterminator="\n")
    return buffer.getvalue()


def to_markdown(comparison: Comparison) -> str:
    lines = [f"A = `{comparison.a}`, B = `{comparison.b}`", "",
             "| lang | chars/tok A | chars/tok B | B−A | B/A | 95% CI | premium A | premium B |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for _, r in comparison.frame.iterrows():
        lines.append(f"| {markdown_cell(r['lang'])} | {_num(r['chars_per_token_a'])} | {_num(r['chars_per_token_b'])} | "
                     f"{_signed(r['chars_per_token_diff'])} | {_num(r['chars_per_token_ratio'], 3)} | {_interval(r)} | "
                     f"{_num(r['premium_a'])} | {_num(r['premium_b'])} |")
    if comparison.premiums_note:
        lines += ["", comparison.premiums_note]
    if comparison.changed_words:
        lines += ["", "Most changed words:", ""]
        lines += [f"- {w['lang']} `{w['word']}`: {w['tokens_a']:.1f} → {w['tokens_b']:.1f} tokens ({w['count']}×)"
                  for w in comparison.changed_words]
    if comparison.findings_diff:
        lines += ["", "Findings that differ:", ""]
        lines += [f"- `{f['code']}` {f['lang'] or ''}: {f['a'] or '–'} → {f['b'] or '–'}" for f in comparison.findings_diff]
    return "\n".join(lines) + "\n"


def to_text(comparison: Comparison, *, width: int | None = None) -> str:
    """Plain text for --output and off a terminal: every column, no width limit."""
    console = Console(file=io.StringIO(), width=width or 100, no_color=True, force_terminal=False)
    print_comparison(console, comparison, width=width)
    return console.file.getvalue()  # type: ignore[attr-defined]
