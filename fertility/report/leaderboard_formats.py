"""The leaderboard's formats: a terminal table, Markdown, LaTeX (booktabs), tidy CSV, one offline
HTML page. Each lays out the numbers leaderboard.py gathered; none computes one."""

from __future__ import annotations

import csv
import html
import io
import math
from collections.abc import Sequence

from fertility.metrics.counts import ALL

from .cells import markdown_cell, number
from .leaderboard import Leaderboard


def _number(value: float | None, places: int = 3) -> str:
    return number(value, "ratio", digits=places)


def _percent(value: float) -> str:
    """A share as a bare percentage (the column header says %)."""
    return number(value, "share").removesuffix("%")


def matrices(board: Leaderboard) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, header, rows of cells): chars/token, then premiums when there are any."""
    langs = board.langs
    tables = [("chars/token", ["rank", "tokenizer", "all", "unk %", *langs],
               [[str(s.rank), s.tokenizer, _number(s.chars_per_token[ALL]), _percent(s.unknown_share[ALL]),
                 *(_number(s.chars_per_token[lang]) for lang in langs)] for s in board.standings])]
    if board.parallel.parallel:
        tables.append((f"premium against {board.reference}", ["rank", "tokenizer", "gini", *langs],
                       [[str(s.rank), s.tokenizer, _number(s.gini), *(_number(s.premium.get(lang)) for lang in langs)]
                        for s in board.standings]))
    return tables


def _aligned(cells: Sequence[str], widths: Sequence[int]) -> str:
    """Rank and name to the left, numbers to the right."""
    return "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()


def to_text(board: Leaderboard) -> str:
    out = []
    for title, header, rows in matrices(board):
        widths = [max(len(cell) for cell in column) for column in zip(header, *rows)]
        out += [title, _aligned(header, widths), _aligned(["-" * w for w in widths], widths),
                *(_aligned(row, widths) for row in rows), ""]
    out += [*board.notes, *(f"signature {s.tokenizer}: {s.signature}" for s in board.standings)]
    return "\n".join(out) + "\n"


def to_markdown(board: Leaderboard) -> str:
    out = []
    for title, header, rows in matrices(board):
        out += [f"**{title}**", "", "| " + " | ".join(map(markdown_cell, header)) + " |",
                "|" + "|".join("---:" if i not in (1,) else "---" for i in range(len(header))) + "|",
                *("| " + " | ".join(map(markdown_cell, row)) + " |" for row in rows), ""]
    out += [f"- {note}" for note in board.notes]
    out += [f"- `{s.tokenizer}`: `{s.signature}`" for s in board.standings]
    return "\n".join(out) + "\n"


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(c, c) for c in text)


def to_latex(board: Leaderboard) -> str:
    """booktabs tables (\\usepackage{booktabs}), one per matrix, every name escaped."""
    out = []
    for title, header, rows in matrices(board):
        out += ["% " + latex_escape(title), r"\begin{tabular}{rl" + "r" * (len(header) - 2) + "}", r"\toprule",
                " & ".join(latex_escape(h) for h in header) + r" \\", r"\midrule",
                *(" & ".join(latex_escape(c) for c in row) + r" \\" for row in rows), r"\bottomrule", r"\end{tabular}",
                ""]
    out += ["% " + latex_escape(note) for note in board.notes]
    return "\n".join(out) + "\n"


def to_csv(board: Leaderboard) -> str:
    buffer = io.StringIO()
    columns = ["rank", "tokenizer", "lang", "script", "chars_per_token", "premium", "gini", "unknown_share"]
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in board.records():
        writer.writerow({k: "" if isinstance(v, float) and math.isnan(v) else v for k, v in row.items()})
    return buffer.getvalue()


_PAGE_STYLE = ("body{font-family:'Noto Sans',sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}"
               "th,td{padding:3px 8px;border-bottom:1px solid #ddd}td.n{text-align:right;font-variant-numeric:"
               "tabular-nums}th{cursor:pointer;background:#f4f4f4}code{font-size:90%}")
# a click on a header sorts its table by that column (numbers as numbers, n/a last)
_SORT = ("document.querySelectorAll('th').forEach((th,i)=>th.addEventListener('click',()=>{"
         "const body=th.closest('table').tBodies[0];const up=th.dataset.up!=='1';th.dataset.up=up?'1':'0';"
         "const key=r=>{const t=r.cells[i].textContent;const v=parseFloat(t);return isNaN(v)?t:v};"
         "[...body.rows].sort((a,b)=>{const x=key(a),y=key(b);if(typeof x!==typeof y)return typeof x==='number'?-1:1;"
         "return (x<y?-1:x>y?1:0)*(up?1:-1)}).forEach(r=>body.appendChild(r))}));")


# filters: rows by a part of the tokenizer's name, language columns by script; set from the page's
# address too (`board.html#tokenizer=llama&script=Beng`), so a filtered view can be linked
_FILTER = ("const byName=document.getElementById('filter-tokenizer'),byScript=document.getElementById('filter-script');"
           "function filter(){const q=byName.value.toLowerCase(),sc=byScript.value;"
           "document.querySelectorAll('tbody tr').forEach(r=>{r.style.display="
           "r.cells[1].textContent.toLowerCase().includes(q)?'':'none'});"
           "document.querySelectorAll('[data-script]').forEach(c=>{c.style.display=!sc||c.dataset.script===sc?'':'none'})}"
           "byName.addEventListener('input',filter);byScript.addEventListener('change',filter);"
           "const given=new URLSearchParams(location.hash.slice(1));"
           "if(given.has('tokenizer'))byName.value=given.get('tokenizer');"
           "if(given.has('script'))byScript.value=given.get('script');filter();")


def _shade(values: list[float], value: float, *, higher_better: bool) -> str:
    """A heat colour from the column's range: green good, red bad."""
    finite = [v for v in values if not math.isnan(v)]
    if math.isnan(value) or not finite or max(finite) == min(finite):
        return ""
    share = (value - min(finite)) / (max(finite) - min(finite))
    good = share if higher_better else 1 - share
    return f' style="background:hsl({round(120 * good)},60%,85%)"'


def to_html(board: Leaderboard) -> str:
    """One offline page: tables sortable by any column and shaded as heatmaps (green: better),
    filters by tokenizer and by script, the notes, every signature."""
    scripts = sorted(set(board.scripts.values()))
    options = "".join(f'<option value="{html.escape(s)}">{html.escape(s)}</option>' for s in scripts)
    sections = ["<h1>fertility leaderboard</h1>",
                ('<p><label>tokenizer <input id="filter-tokenizer" placeholder="part of a name"></label> '
                 f'<label>script <select id="filter-script"><option value="">every script</option>{options}'
                 "</select></label></p>")]
    for index, (title, header, rows) in enumerate(matrices(board)):
        numbers = [[_parse(cell) for cell in column] for column in zip(*rows)] if rows else []
        where = [f' data-script="{html.escape(board.scripts[h])}"' if h in board.scripts else "" for h in header]
        head = "".join(f"<th{w}>{html.escape(h)}</th>" for h, w in zip(header, where))
        body = []
        for r, row in enumerate(rows):
            cells = []
            for c, cell in enumerate(row):
                if c < 2:
                    cells.append(f"<td>{html.escape(cell)}</td>" if c else f'<td class="n">{cell}</td>')
                    continue
                higher = index == 0 and header[c] != "unk %"  # chars/token: more is better; premium, Gini, unk: less
                cells.append(f'<td class="n"{where[c]}{_shade(numbers[c], numbers[c][r], higher_better=higher)}>'
                             f"{html.escape(cell)}</td>")
            body.append("<tr>" + "".join(cells) + "</tr>")
        sections.append(f"<h2>{html.escape(title)}</h2><table><thead><tr>{head}</tr></thead>"
                        f"<tbody>{''.join(body)}</tbody></table>")
    sections += [f"<p>{html.escape(note)}</p>" for note in board.notes]
    sections.append("<h2>Signatures</h2><ul>" + "".join(
        f"<li>{html.escape(s.tokenizer)} ({html.escape(s.source)}): <code>{html.escape(s.signature)}</code></li>"
        for s in board.standings) + "</ul>")
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>fertility leaderboard</title>"
            f"<style>{_PAGE_STYLE}</style></head><body>{''.join(sections)}<script>{_SORT}{_FILTER}</script></body></html>\n")


def _parse(cell: str) -> float:
    try:
        return float(cell)
    except ValueError:
        return math.nan


RENDERERS = {"table": to_text, "markdown": to_markdown, "latex": to_latex, "csv": to_csv, "html": to_html}


def render(board: Leaderboard, fmt: str) -> str:
    """The leaderboard in one of LEADERBOARD_FORMATS."""
    return RENDERERS[fmt](board)


__all__ = ["RENDERERS", "latex_escape", "matrices", "render"]
