"""Figure text drawn as glyph outlines, shaped by HarfBuzz in the font a browser would pick.

vl-convert's renderer (resvg) shapes a `<text>` with one font and, for characters that font
lacks, copies glyphs from a fallback font *by glyph index*; it takes as fallback the first face on
the system that holds the character. So a label such as `Hindi हिन्दी (hin_Deva)` loses its
shaping as soon as the script changes the number of glyphs (the vowel sign ि drawn before its
consonant, conjuncts, Myanmar medials), and the Latin part comes out in whatever face is first
(often a serif). Splitting a label into `<tspan>`s does not help: resvg shapes every span over
the whole text and merges by index the same way.

Browsers do it properly: each character (grapheme cluster) takes the first family of the
`font-family` list that holds it, and each run of one font is shaped by HarfBuzz. This module
does exactly that for the figures: it finds the Noto font files, splits each label into runs,
shapes them with HarfBuzz (uharfbuzz) and replaces the `<text>` element with the glyphs'
outlines (defined once, placed with `<use>`). The SVG and the PNG made from it then look alike
on any machine, whatever fonts the reader has; the text stays in an `aria-label`.
"""

from __future__ import annotations

import html
import os
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import regex

_TEXT = re.compile(r"<text\b([^>]*)>(.*?)</text>", re.DOTALL)
_ATTRIBUTE = re.compile(r'([\w:-]+)="([^"]*)"')
_LINE = re.compile(r"<tspan\b([^>]*)>(.*?)</tspan>", re.DOTALL)
_CLUSTER = regex.compile(r"\X")
_FONT_FILE = re.compile(r"^Noto.*\.(ttf|otf|ttc)$", re.IGNORECASE)
# Characters a cluster may carry that fonts need not map (joiners, variation selectors).
_IGNORABLE = {0x200C, 0x200D, 0xFE0E, 0xFE0F}
_GENERIC = {"serif", "sans-serif", "monospace", "cursive", "fantasy", "system-ui"}


def font_dirs() -> list[Path]:
    """Where fonts live: `$FERTILITY_FONT_DIRS` (os.pathsep-separated) when set, else the
    usual system and user folders of Linux, macOS and Windows."""
    given = os.environ.get("FERTILITY_FONT_DIRS")
    if given is not None:
        return [Path(p) for p in given.split(os.pathsep) if p]
    home = Path.home()
    dirs = [Path("/usr/share/fonts"), Path("/usr/local/share/fonts"),
            Path(os.environ.get("XDG_DATA_HOME", home / ".local/share")) / "fonts", home / ".fonts"]
    if sys.platform == "darwin":
        dirs += [Path("/Library/Fonts"), Path("/System/Library/Fonts"), home / "Library/Fonts"]
    if sys.platform == "win32":
        dirs += [Path(os.environ.get("WINDIR", "C:/Windows")) / "Fonts",
                 Path(os.environ.get("LOCALAPPDATA", home)) / "Microsoft/Windows/Fonts"]
    return dirs


@dataclass(frozen=True)
class Face:
    family: str
    weight: int
    italic: bool
    path: str
    index: int


@cache
def installed_faces(dirs: tuple[Path, ...]) -> tuple[Face, ...]:
    """Every Noto face in the folders (file names only are filtered; HarfBuzz reads the names)."""
    faces: list[Face] = []
    for folder in dirs:
        if folder.is_dir():
            for root, _, files in os.walk(folder):
                faces += [face for name in sorted(files) if _FONT_FILE.match(name)
                          for face in _faces_of(os.path.join(root, name))]
    return tuple(faces)


def _faces_of(path: str) -> list[Face]:
    """The faces of one font file (a .ttc holds several); none when it cannot be read, as a
    browser skips a broken font."""
    import uharfbuzz as hb

    try:
        blob = hb.Blob.from_file_path(path)
    except OSError:
        return []
    out = []
    for index in range(hb.Face(blob, 0).count):
        face = hb.Face(blob, index)
        family = face.get_name(hb.OTNameIdPredefined.TYPOGRAPHIC_FAMILY) or \
            face.get_name(hb.OTNameIdPredefined.FONT_FAMILY)
        font = hb.Font(face)
        if family:
            out.append(Face(family, int(font.get_style_value(hb.StyleTag.WEIGHT)),
                            font.get_style_value(hb.StyleTag.ITALIC) > 0, path, index))
    return out


class _Font:
    """One HarfBuzz font, with the outlines of the glyphs it has drawn so far."""

    def __init__(self, face: Face, key: str) -> None:
        import uharfbuzz as hb

        self.key = key
        self.hb_face = hb.Face(hb.Blob.from_file_path(face.path), face.index)
        self.font = hb.Font(self.hb_face)
        self.upem = self.hb_face.upem
        self.unicodes = self.hb_face.unicodes

    def holds(self, cluster: str) -> bool:
        return all(ord(c) in self.unicodes or ord(c) in _IGNORABLE for c in cluster)

    def outline(self, glyph: int) -> str:
        pen = _SvgPen()
        self.font.draw_glyph_with_pen(glyph, pen)
        return "".join(pen.parts)


class _SvgPen:
    """fontTools-style pen protocol (what uharfbuzz calls) writing SVG path data."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    @staticmethod
    def _xy(point: Sequence[float]) -> str:
        return f"{point[0]:g} {point[1]:g}"

    def moveTo(self, point) -> None:
        self.parts.append(f"M{self._xy(point)}")

    def lineTo(self, point) -> None:
        self.parts.append(f"L{self._xy(point)}")

    def qCurveTo(self, *points) -> None:
        *controls, end = points
        for index, control in enumerate(controls):  # implied on-curve points between controls
            target = end if index == len(controls) - 1 else \
                ((control[0] + controls[index + 1][0]) / 2, (control[1] + controls[index + 1][1]) / 2)
            self.parts.append(f"Q{self._xy(control)} {self._xy(target)}")

    def curveTo(self, *points) -> None:
        self.parts.append("C" + " ".join(self._xy(p) for p in points))

    def closePath(self) -> None:
        self.parts.append("Z")

    def endPath(self) -> None:
        pass


@dataclass
class Outliner:
    """Turns the `<text>` elements of one SVG into outlines; remembers what it could not draw."""

    dirs: tuple[Path, ...] = field(default_factory=lambda: tuple(font_dirs()))
    fonts: dict[tuple[str, bool, bool], _Font | None] = field(default_factory=dict)
    glyphs: dict[tuple[str, int], str] = field(default_factory=dict)
    missing: set[str] = field(default_factory=set)

    def font(self, family: str, bold: bool, italic: bool) -> _Font | None:
        key = (family, bold, italic)
        if key not in self.fonts:
            faces = [f for f in installed_faces(self.dirs) if f.family == family]
            best = min(faces, key=lambda f: (f.italic != italic, abs(f.weight - (700 if bold else 400))), default=None)
            self.fonts[key] = _Font(best, f"f{len(self.fonts)}") if best else None
        return self.fonts[key]

    def runs(self, text: str, families: Sequence[str], bold: bool, italic: bool) -> list[tuple[_Font, str]] | None:
        """Runs of one font each, chosen per grapheme cluster as a browser does; a space
        between two clusters of one font stays in that font's run (an Arabic phrase is one
        right-to-left run). None when no listed font holds some cluster."""
        fonts = [f for f in (self.font(name, bold, italic) for name in families) if f is not None]
        clusters = _CLUSTER.findall(text)
        chosen: list[_Font | None] = [next((f for f in fonts if f.holds(c)), None) for c in clusters]
        if any(font is None for font in chosen):
            self.missing.update(c for c, font in zip(clusters, chosen) if font is None)
            return None
        for index, cluster in enumerate(clusters):
            if cluster.isspace() and 0 < index < len(clusters) - 1:
                before, after = chosen[index - 1], chosen[index + 1]
                if before is after and before is not None and before.holds(cluster):
                    chosen[index] = before
        runs: list[tuple[_Font, str]] = []
        for cluster, font in zip(clusters, chosen):
            assert font is not None
            if runs and runs[-1][0] is font:
                runs[-1] = (font, runs[-1][1] + cluster)
            else:
                runs.append((font, cluster))
        return runs

    def line(self, text: str, families: Sequence[str], size: float, bold: bool, italic: bool
             ) -> tuple[list[tuple[str, float, float, float]], float] | None:
        """The glyphs of one line, each (glyph id, x, y, scale) from the line's start, and its width."""
        import uharfbuzz as hb

        runs = self.runs(text, families, bold, italic)
        if runs is None:
            return None
        placed, pen = [], 0.0
        for font, run in runs:
            buffer = hb.Buffer()
            buffer.add_str(run)
            buffer.guess_segment_properties()
            hb.shape(font.font, buffer, {})
            scale = size / font.upem
            for info, position in zip(buffer.glyph_infos, buffer.glyph_positions):
                key = (font.key, info.codepoint)
                if key not in self.glyphs:
                    self.glyphs[key] = font.outline(info.codepoint)
                placed.append((f"{font.key}-{info.codepoint}", pen + position.x_offset * scale,
                               -position.y_offset * scale, scale))
                pen += position.x_advance * scale
        return placed, pen

    def element(self, attributes: str, content: str) -> str | None:
        """One `<text>` element as a group of glyphs, or None to leave it as it is."""
        attrs = {key: html.unescape(value) for key, value in _ATTRIBUTE.findall(attributes)}
        families = [f.strip().strip("'\"") for f in attrs.get("font-family", "").split(",")]
        families = [f for f in families if f and f.lower() not in _GENERIC]
        size = _length(attrs.get("font-size", "12"), 12.0)
        weight = attrs.get("font-weight", "normal")
        bold = weight == "bold" or (weight.isdigit() and int(weight) >= 600)
        italic = attrs.get("font-style", "normal") in ("italic", "oblique")
        lines = [(dict(_ATTRIBUTE.findall(a)), html.unescape(t)) for a, t in _LINE.findall(content)] \
            if "<tspan" in content else [({}, html.unescape(content))]
        anchor = attrs.get("text-anchor", "start")
        uses, y = [], 0.0
        for line_attrs, text in lines:
            y += _length(line_attrs.get("dy", "0"), size)
            drawn = self.line(text, families, size, bold, italic)
            if drawn is None:
                return None
            glyphs, width = drawn
            x0 = _length(line_attrs.get("x", "0"), size) - {"middle": width / 2, "end": width}.get(anchor, 0.0)
            uses += [f'<use xlink:href="#{gid}" transform="translate({x0 + x:.2f},{y + dy:.2f}) scale({s:.5g},{-s:.5g})"/>'
                     for gid, x, dy, s in glyphs if self.glyphs[_key(gid)]]
        keep = " ".join(f'{k}="{v}"' for k, v in attrs.items()
                        if k in ("transform", "fill", "opacity", "fill-opacity", "class"))
        label = html.escape(" ".join(text for _, text in lines))
        return f'<g {keep} role="img" aria-label="{label}">{"".join(uses)}</g>'

    def svg(self, svg: str) -> str:
        """The SVG with every `<text>` it can draw replaced by outlines, the glyphs in `<defs>`."""
        out = _TEXT.sub(lambda m: self.element(m.group(1), m.group(2)) or m.group(0), svg)
        defs = "".join(f'<path id="{key}-{gid}" d="{path}"/>' for (key, gid), path in self.glyphs.items() if path)
        if not defs:
            return out
        if 'xmlns:xlink=' not in out[:out.index(">")]:
            out = out.replace("<svg ", '<svg xmlns:xlink="http://www.w3.org/1999/xlink" ', 1)
        opening = out.index(">", out.index("<svg")) + 1
        return f"{out[:opening]}<defs>{defs}</defs>{out[opening:]}"


def _length(value: str, size: float) -> float:
    """An SVG length as Vega writes them (`12`, `12px`, `1.2em`), in pixels."""
    number = re.match(r"\s*(-?[\d.]+(?:e-?\d+)?)\s*(px|em)?\s*$", value or "0")
    if number is None:
        return 0.0
    return float(number.group(1)) * (size if number.group(2) == "em" else 1.0)


def _key(glyph_ref: str) -> tuple[str, int]:
    key, gid = glyph_ref.rsplit("-", 1)
    return key, int(gid)


def outline_svg(svg: str) -> tuple[str, set[str]]:
    """`svg` with its text as outlines, and the clusters no listed font could draw (those
    texts are left as `<text>`, for the renderer's own fallback)."""
    outliner = Outliner()
    return outliner.svg(svg), outliner.missing


def missing_families(families: Iterable[str]) -> list[str]:
    """The families of `families` that no installed face carries (for warnings and test skips)."""
    present = {face.family for face in installed_faces(tuple(font_dirs()))}
    return [family for family in families if family not in present]
