"""The HTML report: one self-contained file (scripts, styles and data inline, no network).

Charts are Vega-Lite specs (charts.py) drawn by the vega, vega-lite and vega-embed bundle that
the `vl-convert-python` package ships (`vl_convert.javascript_bundle()`), inlined once; fonts
are the system's Noto fonts by name, never embedded. `figures()` exports the same specs as
SVG and PNG for papers, through vl-convert's renderer (which shapes Indic scripts).
"""

from __future__ import annotations

import html
import json
from functools import cache
from typing import Any

from fertility.errors import UsageError
from fertility.metrics.counts import ALL
from fertility.report.contents import Report, charts_of, language_rows
from fertility.text.units import graphemes

from . import charts
from .cells import interval, missing, number
from .columns import COLUMNS, PAGE_COLUMNS

INSTALL_HINT = "install the report extra: pip install 'fertility[report]' (it brings vl-convert-python and uharfbuzz)"

_CAPTIONS = {
    "chars-per-token": "How much text each language gets per token, per tokenizer.",
    "premium": "How many times the reference's tokens the same content costs (Petrov et al. 2023), "
               "with the byte premium (Arnett et al. 2024): the part the script's UTF-8 encoding explains.",
    "lorenz": "How unequally the token cost falls on languages: the Gini is twice the area between "
              "the curve and the diagonal.",
    "budget": "Share of the content against share of the tokens it costs.",
    "ceiling": "No vocabulary can merge across pre-token boundaries: chars per pre-token caps chars/token.",
    "vocabulary": "Where the vocabulary's entries go, by Unicode script.",
    "ratios": "The second tokenizer against the first, per language.",
    "before-after": "What the retrained tokenizer changed, per language.",
}

_STYLE = """
body { font-family: %(font)s; margin: 2em auto; max-width: 1100px; color: #222; line-height: 1.4; }
h1 { font-size: 1.6em; } h2 { margin-top: 1.8em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 0.85em; margin: 1em 0; }
th, td { padding: 2px 8px; border-bottom: 1px solid #eee; text-align: right; }
th { background: #f4f4f4; position: sticky; top: 0; } td.text, th.text { text-align: left; white-space: nowrap; }
tr.all td { font-weight: bold; }
.chart { margin: 1.5em 0; } .caption { color: #555; font-size: 0.9em; }
.finding { margin: 0.8em 0; padding: 0.5em 0.8em; border-left: 4px solid #999; background: #fafafa; }
.finding.error { border-color: #c0392b; } .finding.warning { border-color: #e67e22; }
.finding.info { border-color: #2980b9; } .severity { font-weight: bold; text-transform: uppercase; }
.pieces { font-size: 1.3em; margin: 0.2em 0; } .word { margin-right: 0.6em; }
.piece { display: inline-block; border: 1px solid #7f8c8d; border-radius: 3px; padding: 0 3px; margin: 1px;
         background: #fff; }
.cut { color: #c0392b; font-weight: bold; padding: 0 1px; } .more { color: #777; }
footer { margin-top: 3em; font-size: 0.8em; color: #555; word-break: break-all; }
code { font-size: 0.9em; } .wide { overflow-x: auto; }
"""


def bundle() -> str:
    """vega + vega-lite + vega-embed as one script that sets window.vegaEmbed."""
    try:
        import vl_convert  # noqa: F401 - only whether it is there
    except ImportError:
        raise UsageError(f"-f html needs vl-convert-python: {INSTALL_HINT}") from None
    return _bundle()


@cache
def _bundle() -> str:
    """Built once per process: vl-convert bundles the scripts anew on every call, in seconds."""
    import vl_convert

    return vl_convert.javascript_bundle("window.vegaEmbed = vegaEmbed; window.vega = vega; window.vegaLite = vegaLite;")


def _script_json(value: Any) -> str:
    """JSON safe inside a <script> element (no `</script>`, no `<!--`)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False).replace("<", "\\u003c")


def _cell(value: Any, kind: str) -> str:
    if kind == "text" or (kind not in ("int", "share", "signed") and not missing(value) and not isinstance(value, float)):
        return html.escape(str(value))
    return number(value, kind, digits=3)


def table(rows: list[dict[str, Any]]) -> str:
    """Every column of the rows: the known ones in order, then any new metric column."""
    if not rows:
        return ""
    present = {k for row in rows for k in row}
    known = [(c, str(COLUMNS[c].long), COLUMNS[c].kind) for c in PAGE_COLUMNS if c in present]
    extra = [(k, k.replace("_", " "), "ratio") for k in dict.fromkeys(k for row in rows for k in row) if k not in COLUMNS]
    columns = known + extra
    head = "".join(f'<th class="{kind if kind == "text" else "num"}">{html.escape(title)}</th>'
                   for _, title, kind in columns)
    body = []
    for row in rows:
        cells = []
        for key, _, kind in columns:
            text = charts.label(row["lang"], row["script"]) if key == "lang" and row["lang"] != ALL else row.get(key)
            cells.append(f'<td class="{kind}">{_cell(text, kind)}</td>')
        body.append(f'<tr class="{"all" if row["lang"] == ALL else ""}">' + "".join(cells) + "</tr>")
    return f"<div class=\"wide\"><table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"


def draw_example(example: str) -> str:
    """`word -> piece | piece` as boxes, a red ¦ wherever a boundary falls inside a grapheme
    cluster of the word (pieces of raw bytes, `[ক]×3`, are shown as they are)."""
    word, sep, rest = example.partition(" -> ")
    if not sep:
        return f'<div class="pieces">{html.escape(example)}</div>'
    pieces = rest.split(" | ")
    clusters, ends, offset = set(), [], 0
    for cluster in graphemes(word):
        offset += len(cluster)
        clusters.add(offset)
    out, position, exact = [], 0, True
    for index, piece in enumerate(pieces):
        if piece == "…":
            out.append('<span class="more">…</span>')
            continue
        out.append(f'<span class="piece">{html.escape(piece)}</span>')
        if exact and word[position:position + len(piece)] == piece:
            position += len(piece)
            ends.append(position)
            if index < len(pieces) - 1 and position not in clusters and position < len(word):
                out.append('<span class="cut" title="boundary inside a grapheme cluster">¦</span>')
        else:
            exact = False
    return f'<div class="pieces"><span class="word">{html.escape(word)}</span> {"".join(out)}</div>'


def findings_section(findings) -> str:
    if not findings:
        return "<p>No findings.</p>"
    out = []
    for f in findings:
        where = html.escape(f.tokenizer + (f" · {charts.label(f.lang, '')}" if f.lang else ""))
        examples = "".join(draw_example(e) for e in f.examples[:4])
        out.append(f'<div class="finding {f.severity}"><span class="severity">{f.severity}</span> '
                   f'<code>{html.escape(f.code)}</code> {where}<div>{html.escape(f.message)}</div>'
                   f'<div><b>Fix:</b> {html.escape(f.fix)}</div>{examples}</div>')
    return "".join(out)


def _vocab_table(result) -> str:
    if not result.vocabularies:
        return ""
    rows = [("<tr><th class='text'>tokenizer</th><th>entries</th><th class='text'>largest scripts</th>"
             "<th>special</th><th>byte pieces</th><th>undecodable</th><th>unreachable</th></tr>")]
    for name, v in result.vocabularies.items():
        scripts = ", ".join(f"{s} {n:,}" for s, n in list(v.by_script.items())[:8])
        unreachable = "n/a" if v.n_unreachable is None else f"{v.n_unreachable:,}"
        rows.append(f"<tr><td class='text'>{html.escape(name)}</td><td>{v.size:,}</td>"
                    f"<td class='text'>{html.escape(scripts)}</td><td>{v.n_special:,}</td><td>{v.n_byte:,}</td>"
                    f"<td>{v.n_undecodable:,}</td><td>{unreachable}</td></tr>")
    return "<table>" + "".join(rows) + "</table>"


def _checks_table(checks) -> str:
    rows = [("<tr><th class='text'>threshold</th><th class='text'>language</th><th>limit</th><th>measured</th>"
             "<th class='text'>verdict</th></tr>")]
    rows += [f"<tr><td class='text'>{html.escape(c.threshold)}</td><td class='text'>{html.escape(c.lang)}</td>"
             f"<td>{c.limit:.4g}</td><td>{c.measured:.4g}</td><td class='text'>{'pass' if c.passed else 'FAIL'}</td></tr>"
             for c in checks]
    return "<table>" + "".join(rows) + "</table>"


def _comparison_table(comparison) -> str:
    """The comparison with human headers (the tokenizers named), ALL last and in bold."""
    a, b = html.escape(comparison.a), html.escape(comparison.b)
    columns = [("lang", "language", "text"), ("script", "script", "text"),
               ("chars_per_token_a", f"chars/token A ({a})", "num"), ("chars_per_token_b", f"chars/token B ({b})", "num"),
               ("chars_per_token_diff", "B − A", "signed"), ("chars_per_token_ratio", "B/A", "num"),
               ("interval", "95% interval of B/A", "text"), ("premium_a", "premium A", "num"),
               ("premium_b", "premium B", "num")]
    head = "".join(f'<th class="{"text" if kind == "text" else "num"}">{title}</th>' for _, title, kind in columns)
    body = []
    for r in comparison.frame.to_dict(orient="records"):
        low, high = r.get("ratio_ci_low"), r.get("ratio_ci_high")
        shown = {**r, "lang": charts.label(r["lang"], r["script"]) if r["lang"] != ALL else "ALL (every language)",
                 "interval": interval(low, high)}
        cells = "".join(f'<td class="{kind}">{_cell(shown.get(key), kind if kind != "num" else "ratio")}</td>'
                        for key, _, kind in columns)
        body.append(f'<tr class="{"all" if r["lang"] == ALL else ""}">{cells}</tr>')
    return f'<div class="wide"><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


def _findings_diff(comparison, scripts: dict[str, str]) -> str:
    """Findings whose severity differs, in words: a side without the finding says so."""
    def side(name: str, severity: str | None) -> str:
        return f"{html.escape(name)}: <b>{html.escape(severity)}</b>" if severity else f"{html.escape(name)}: no finding"
    items = []
    for d in comparison.findings_diff:
        where = charts.label(d["lang"], scripts.get(d["lang"], "")) if d["lang"] else "every language"
        items.append(f"<li><code>{html.escape(d['code'])}</code> {html.escape(where)}: {side(comparison.a, d['a'])} → "
                     f"{side(comparison.b, d['b'])}<div class=\"caption\">{html.escape(d['message'])}</div></li>")
    return f"<h3>Findings that differ</h3><ul>{''.join(items)}</ul>"


def _signatures(report: Report) -> list[tuple[str, Any]]:
    out = []
    if report.result is not None:
        out.append(("audit", report.result.signature))
    if report.comparison is not None and report.result is None:
        out += [(report.comparison.a, report.comparison.signature_a), (report.comparison.b, report.comparison.signature_b)]
    return out


def page(report: Report) -> str:
    """The whole report as one HTML document."""
    specs = charts_of(report)
    config = charts.config()
    sections = [f"<h1>{html.escape(report.title)}</h1>"]
    result = report.result
    if result is not None:
        langs = ", ".join(charts.label(lang, script) for lang, script in result.scripts.items())
        sections.append(f"<p>Tokenizers: <b>{html.escape(', '.join(result.tokenizers))}</b>. "
                        f"Reference: {html.escape(result.reference)}. Languages ({len(result.scripts)}): "
                        f"{html.escape(langs)}.</p>")
    if report.checks:
        failed = sum(not c.passed for c in report.checks)
        sections.append(f"<h2>Checks: {'all passed' if not failed else f'{failed} failed'}</h2>"
                        + _checks_table(report.checks))
    sections.append("<h2>Charts</h2>")
    for chart_id in specs:
        sections.append(f'<div class="chart"><div id="chart-{chart_id}" data-chart="{chart_id}"></div>'
                        f'<div class="caption">{html.escape(_CAPTIONS.get(chart_id, ""))}</div></div>')
    if result is not None:
        sections.append("<h2>Per language</h2>" + table(language_rows(result)))
        if result.vocabularies:
            sections.append("<h2>Vocabulary</h2>" + _vocab_table(result))
        if result.has_findings:
            sections.append(f"<h2>Findings ({len(result.findings)})</h2>" + findings_section(result.findings))
    if report.comparison is not None:
        sections.append(f"<h2>{html.escape(report.comparison.b)} against {html.escape(report.comparison.a)}</h2>"
                        + _comparison_table(report.comparison))
        if report.comparison.findings_diff:
            scripts = dict(zip(report.comparison.frame["lang"], report.comparison.frame["script"]))
            sections.append(_findings_diff(report.comparison, scripts))
    footer = "".join(f"<div>signature ({html.escape(name)}): <code>{html.escape(sig.short())}</code>"
                     f"<details><summary>full signature</summary><pre>"
                     f"{html.escape(json.dumps(sig.to_dict(), ensure_ascii=False, indent=1))}</pre></details></div>"
                     for name, sig in _signatures(report))
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width\"><title>{html.escape(report.title)}</title>"
            f"<style>{_STYLE % {'font': charts.FONT}}</style>"
            f"<script>{bundle()}</script></head><body>{''.join(sections)}<footer>{footer}</footer>"
            f"<script>const FERTILITY_SPECS = {_script_json(specs)};\nconst FERTILITY_CONFIG = {_script_json(config)};\n"
            "window.fertilityCharts = Promise.all(Object.entries(FERTILITY_SPECS).map(([id, spec]) =>"
            " vegaEmbed('#chart-' + id, Object.assign({config: FERTILITY_CONFIG}, spec),"
            " {renderer: 'svg', actions: false}))).then(() => document.body.setAttribute('data-charts', 'done'))"
            ".catch(err => { document.body.setAttribute('data-charts', 'error: ' + err); });</script>"
            "</body></html>\n")
