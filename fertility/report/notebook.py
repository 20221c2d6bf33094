"""An audit in a notebook: the compact table Jupyter shows (`AuditResult._repr_html_`) and the
report's charts as Altair objects (`AuditResult.chart`).

The charts are the report's own Vega-Lite specs (charts.py, through contents.charts_of on the
audit's JSON), so a notebook, `-f html` and `--figures` draw the same numbers. Altair is an
optional extra (`pip install 'fertility[notebook]'`), imported only when a chart is asked for.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from fertility.errors import UsageError
from fertility.metrics.counts import ALL

from . import charts
from .cells import number
from .columns import COLUMNS, GLANCE_COLUMNS

if TYPE_CHECKING:
    from fertility.results.model import AuditResult

def html_table(result: AuditResult) -> str:
    """Tokenizer x language rows (ALL rows in bold), the note on premiums, the signature."""
    frame = result.to_frame()
    parallel = result.parallel
    columns = [c for c in GLANCE_COLUMNS if c != "premium" or parallel.parallel]
    head = "".join(f"<th>{html.escape(title)}</th>" for title in ("tokenizer", "language", *(str(COLUMNS[c].long) for c in columns)))
    body = []
    for row in frame.to_dict(orient="records"):
        lang = row["lang"] if row["lang"] == ALL else charts.label(row["lang"], row["script"])
        style = ' style="font-weight:bold"' if row["lang"] == ALL else ""
        cells = "".join(f'<td style="text-align:right">{number(row[key], COLUMNS[key].kind, digits=3)}</td>'
                        for key in columns)
        body.append(f"<tr{style}><td>{html.escape(str(row['tokenizer']))}</td><td>{html.escape(lang)}</td>{cells}</tr>")
    notes = [f"premiums against {result.reference}" if parallel.parallel else parallel.note(option="parallel=True"),
             f"signature: {result.signature.short()}"]
    foot = "".join(f"<div><small>{html.escape(note)}</small></div>" for note in notes)
    return (f"<div class=\"fertility-audit\"><table><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>{foot}</div>")


def chart_specs(result: AuditResult) -> dict[str, dict[str, Any]]:
    """Chart name (`chars_per_token`, `premium`, `lorenz`, ...) -> Vega-Lite spec with its config:
    those the report draws for this audit."""
    from .contents import audit_report, charts_of

    return {name.replace("-", "_"): {**spec, "config": charts.config()}
            for name, spec in charts_of(audit_report(result)).items()}


def chart(result: AuditResult, kind: str = "chars_per_token"):
    """One of the report's charts as an Altair chart (Altair validates the spec as it builds it)."""
    specs = chart_specs(result)
    key = kind.replace("-", "_")
    if key not in specs:
        why = " (premiums need parallel text: " + result.parallel.why + ")" \
            if key in ("premium", "lorenz") and not result.parallel.parallel else ""
        raise UsageError(f"no {kind!r} chart for this audit{why}; available: {', '.join(specs)}")
    try:
        import altair as alt
    except ImportError:
        raise UsageError("AuditResult.chart() needs Altair, an optional extra: pip install 'fertility[notebook]'") \
            from None
    spec = specs[key]
    kinds: dict[str, Any] = {"layer": alt.LayerChart, "hconcat": alt.HConcatChart, "vconcat": alt.VConcatChart,
             "concat": alt.ConcatChart, "facet": alt.FacetChart, "repeat": alt.RepeatChart}
    builder: Any = next((built for field, built in kinds.items() if field in spec), alt.Chart)
    return builder.from_dict(spec)


__all__ = ["chart", "chart_specs", "html_table"]
