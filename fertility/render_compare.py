"""Renderers for `fertility compare`: a rich table with winners, and JSON, CSV, Markdown."""

from __future__ import annotations

import io
import json
import math

from rich.console import Console
from rich.table import Table

from .compare import Comparison
from .render import _json_value
from .signature import short_signature
from .version import __version__


def _num(value: float, digits: int = 2) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def _interval(row) -> str:
    if math.isnan(row["ratio_ci_low"]):
        return "n/a"
    return f"{row['ratio_ci_low']:.3f}–{row['ratio_ci_high']:.3f}"


def comparison_table(comparison: Comparison) -> Table:
    a, b = comparison.a, comparison.b
    table = Table(title=f"fertility compare: A = {a}, B = {b}", caption_justify="left",
                  caption="B/A = chars/token of B over A (>1: B packs more text per token); "
                          "95% bootstrap interval over documents" if comparison.intervals else
                          "saved audits: no per-document data, no intervals")
    for header in ("lang", "script", "A c/t", "B c/t", "B−A", "B/A", "95% CI", "A prem", "B prem"):
        table.add_column(header, justify="left" if header in ("lang", "script") else "right", no_wrap=True,
                         min_width=len(header) if header != "95% CI" else 11)
    for _, row in comparison.frame.iterrows():
        ca, cb = row["chars_per_token_a"], row["chars_per_token_b"]
        style_a = "green" if ca > cb else None
        style_b = "green" if cb > ca else None
        table.add_row(row["lang"], row["script"], f"[{style_a}]{_num(ca)}[/]" if style_a else _num(ca),
                      f"[{style_b}]{_num(cb)}[/]" if style_b else _num(cb), f"{row['chars_per_token_diff']:+.2f}",
                      _num(row["chars_per_token_ratio"], 3), _interval(row), _num(row["premium_a"]),
                      _num(row["premium_b"]), style="bold" if row["lang"] == "ALL" else None)
    return table


def print_comparison(console: Console, comparison: Comparison) -> None:
    console.print(comparison_table(comparison))
    console.print(f"A: {short_signature(comparison.signature_a)}", style="dim", markup=False)
    console.print(f"B: {short_signature(comparison.signature_b)}", style="dim", markup=False)
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
    payload = {"fertility_version": __version__, "a": comparison.a, "b": comparison.b,
               "signature_a": comparison.signature_a, "signature_b": comparison.signature_b,
               "rows": [_json_value(r) for r in comparison.frame.to_dict(orient="records")],
               "changed_words": comparison.changed_words, "findings_diff": comparison.findings_diff}
    return json.dumps(payload, ensure_ascii=False, indent=2) + "\n"


def to_csv(comparison: Comparison) -> str:
    buffer = io.StringIO()
    comparison.frame.to_csv(buffer, index=False, lineterminator="\n")
    return buffer.getvalue()


def to_markdown(comparison: Comparison) -> str:
    lines = [f"A = `{comparison.a}`, B = `{comparison.b}`", "",
             "| lang | chars/tok A | chars/tok B | B−A | B/A | 95% CI | premium A | premium B |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for _, r in comparison.frame.iterrows():
        lines.append(f"| {r['lang']} | {_num(r['chars_per_token_a'])} | {_num(r['chars_per_token_b'])} | "
                     f"{r['chars_per_token_diff']:+.2f} | {_num(r['chars_per_token_ratio'], 3)} | {_interval(r)} | "
                     f"{_num(r['premium_a'])} | {_num(r['premium_b'])} |")
    if comparison.changed_words:
        lines += ["", "Most changed words:", ""]
        lines += [f"- {w['lang']} `{w['word']}`: {w['tokens_a']:.1f} → {w['tokens_b']:.1f} tokens ({w['count']}×)"
                  for w in comparison.changed_words]
    if comparison.findings_diff:
        lines += ["", "Findings that differ:", ""]
        lines += [f"- `{f['code']}` {f['lang'] or ''}: {f['a'] or '–'} → {f['b'] or '–'}" for f in comparison.findings_diff]
    return "\n".join(lines) + "\n"


def to_text(comparison: Comparison, *, width: int = 140) -> str:
    console = Console(file=io.StringIO(), width=width, no_color=True, force_terminal=False)
    print_comparison(console, comparison)
    return console.file.getvalue()
