"""Figures for papers: each chart of a report as SVG and PNG files, its text shaped by HarfBuzz.

Vega lays a chart out (vl-convert, the same specs as the HTML page's); its labels are then
written as outlines (outlines.py), because vl-convert's own renderer mis-shapes Indic scripts,
and rasterized. A separate module from the page because it needs the optional `report` extra
and writes files, which the page never does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fertility.errors import UsageError
from fertility.report.contents import Report, charts_of

from . import charts
from .html import INSTALL_HINT


def figure_files(report: Report) -> list[str]:
    return [f"{chart_id}.{kind}" for chart_id in charts_of(report) for kind in ("svg", "png")]


def check_figures(folder: Path, names: list[str], *, force: bool) -> None:
    """Before any work: the folder is new (its parent exists) or holds none of the files,
    unless --force (which replaces only the figures, nothing else in the folder)."""
    from fertility.io.output import check_folder_writable, check_output_file

    if folder.exists():
        if not folder.is_dir():
            raise UsageError(f"{folder}: exists and is not a folder (given to --figures)")
        for name in names:
            check_output_file(folder / name, force=force, option="--figures")
    else:
        check_folder_writable(folder.parent if str(folder.parent) else Path("."), what=folder)


def figures(report: Report, folder: Path, *, force: bool = False) -> list[Path]:
    """Each chart as SVG and PNG (2x) for papers; returns the files written."""
    from importlib.util import find_spec

    for module, package in (("vl_convert", "vl-convert-python"), ("uharfbuzz", "uharfbuzz")):
        if find_spec(module) is None:
            raise UsageError(f"--figures needs {package}: {INSTALL_HINT}")
    from fertility.io.output import make_folder, replace_files

    check_figures(folder, figure_files(report), force=force)
    if not folder.exists():
        make_folder(folder)
    files = []
    missing: set[str] = set()
    for chart_id, spec in charts_of(report).items():
        svg, png, lacking = figure(spec)
        missing |= lacking
        files += [(f"{chart_id}.svg", lambda path, data=svg: path.write_text(data, encoding="utf-8")),
                  (f"{chart_id}.png", lambda path, data=png: path.write_bytes(data))]
    replace_files(folder, files)
    if missing:
        import warnings

        from fertility.errors import FertilityWarning

        warnings.warn(f"--figures: no Noto font holds {' '.join(sorted(missing))!r}, so those labels are set by the "
                      f"SVG renderer's fallback font (install {FONT_PACKAGES}, or set FERTILITY_FONT_DIRS)",
                      FertilityWarning, stacklevel=2)
    return [folder / name for name, _ in files]


FONT_PACKAGES = "Debian: fonts-noto-core fonts-noto-cjk"


def figure(spec: dict[str, Any], *, scale: float = 2) -> tuple[str, bytes, set[str]]:
    """One chart as SVG and PNG, and the text clusters no Noto font could draw. Vega lays the
    chart out (vl-convert); the text is shaped by HarfBuzz and written as outlines
    (outlines.py: vl-convert's own renderer mis-shapes Indic labels), then rasterized."""
    import vl_convert

    from fertility.report.outlines import outline_svg

    svg, missing = outline_svg(vl_convert.vegalite_to_svg({**spec, "config": charts.config()}))
    return svg, vl_convert.svg_to_png(svg, scale=scale), missing
