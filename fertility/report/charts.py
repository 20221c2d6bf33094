"""Vega-Lite specifications of the report's charts: plain dicts, data inline, no I/O.

Each builder takes numbers already computed elsewhere (results.py divides, compare.py
bootstraps, metrics.py splits premiums) and only lays them out, so a test can check that a
chart's data equal the audit's numbers without a browser. Languages are labelled with their
English name, their own name in their script, and their code (which names the script).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

SCHEMA = "https://vega.github.io/schema/vega-lite/v6.json"
# One font family, Noto, as one CSS list: a browser takes each character from the first family
# that holds it and shapes each run with HarfBuzz; the figures do the same (outlines.py). Latin,
# Greek and Cyrillic are in Noto Sans; every script a label can show has its family here.
FONTS = ("Noto Sans", "Noto Sans Bengali", "Noto Sans Devanagari", "Noto Sans Tamil", "Noto Sans Telugu",
         "Noto Sans Ethiopic", "Noto Sans Sinhala", "Noto Sans Khmer", "Noto Sans Myanmar", "Noto Sans Thai",
         "Noto Sans Arabic", "Noto Sans Gujarati", "Noto Sans Gurmukhi", "Noto Sans Malayalam",
         "Noto Sans Kannada", "Noto Sans Oriya", "Noto Sans Hebrew", "Noto Sans CJK SC", "Noto Sans CJK JP",
         "Noto Sans CJK KR", "sans-serif")
FONT = ", ".join(f"'{f}'" if " " in f else f for f in FONTS)

# language code (ISO 639-3, or 639-1) -> (English name, autonym)
LANGUAGES: dict[str, tuple[str, str]] = {
    "amh": ("Amharic", "አማርኛ"), "arb": ("Arabic", "العربية"), "ara": ("Arabic", "العربية"),
    "asm": ("Assamese", "অসমীয়া"), "ben": ("Bengali", "বাংলা"), "deu": ("German", "Deutsch"),
    "eng": ("English", "English"), "fra": ("French", "français"), "hin": ("Hindi", "हिन्दी"),
    "jpn": ("Japanese", "日本語"), "khm": ("Khmer", "ខ្មែរ"), "kor": ("Korean", "한국어"),
    "mya": ("Burmese", "မြန်မာ"), "npi": ("Nepali", "नेपाली"), "nep": ("Nepali", "नेपाली"),
    "rus": ("Russian", "русский"), "sin": ("Sinhala", "සිංහල"), "spa": ("Spanish", "español"),
    "swh": ("Swahili", "Kiswahili"), "swa": ("Swahili", "Kiswahili"), "tam": ("Tamil", "தமிழ்"),
    "tel": ("Telugu", "తెలుగు"), "tha": ("Thai", "ไทย"), "urd": ("Urdu", "اردو"),
    "yor": ("Yoruba", "Yorùbá"), "zho": ("Chinese", "中文"), "cmn": ("Chinese", "中文"),
    "guj": ("Gujarati", "ગુજરાતી"), "pan": ("Punjabi", "ਪੰਜਾਬੀ"), "mar": ("Marathi", "मराठी"),
    "mal": ("Malayalam", "മലയാളം"), "kan": ("Kannada", "ಕನ್ನಡ"), "ory": ("Odia", "ଓଡ଼ିଆ"),
    "vie": ("Vietnamese", "Tiếng Việt"), "ind": ("Indonesian", "Bahasa Indonesia"), "tur": ("Turkish", "Türkçe"),
    "pes": ("Persian", "فارسی"), "heb": ("Hebrew", "עברית"), "ell": ("Greek", "Ελληνικά"),
}
_TWO_LETTER = {"am": "amh", "ar": "arb", "as": "asm", "bn": "ben", "de": "deu", "en": "eng", "fr": "fra",
               "hi": "hin", "ja": "jpn", "km": "khm", "ko": "kor", "my": "mya", "ne": "npi", "ru": "rus",
               "si": "sin", "es": "spa", "sw": "swh", "ta": "tam", "te": "tel", "th": "tha", "ur": "urd",
               "yo": "yor", "zh": "zho"}


def label(lang: str, script: str) -> str:
    """`Bengali বাংলা (ben_Beng)`; the script is added when the code does not name it."""
    code = lang.split("_")[0].split("-")[0]
    name = LANGUAGES.get(_TWO_LETTER.get(code, code))
    where = lang if "_" in lang else f"{lang}, {script}"
    if name is None:
        return f"{lang} ({script})" if "_" not in lang else lang
    english, own = name
    return f"{english} {own} ({where})" if own != english else f"{english} ({where})"


def _clean(value: Any) -> Any:
    """JSON-safe numbers: NaN -> None (Vega leaves such marks out)."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item"):
        return _clean(value.item())
    return value


def _records(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [{k: _clean(v) for k, v in row.items()} for row in rows]


def _base(title: str, subtitle: str | list[str], values: list[dict], **rest: Any) -> dict[str, Any]:
    spec = {"$schema": SCHEMA, "title": {"text": title, "subtitle": subtitle, "anchor": "start"},
            "data": {"values": values}, "width": 560, **rest}
    return {k: v for k, v in spec.items() if v is not None}


def _order(values: list[dict], field: str, *, descending: bool = True) -> list[str]:
    """Labels sorted by the mean of `field` over the series that have it (the sort every chart
    uses), so no one tokenizer, nor a baseline, decides the order alone."""
    seen: dict[str, list[float]] = {}
    for row in values:
        if row.get(field) is not None:
            seen.setdefault(row["label"], []).append(row[field])
    mean = {k: sum(v) / len(v) for k, v in seen.items()}
    ordered = sorted(mean, key=lambda k: mean[k], reverse=descending)
    return ordered + sorted({row["label"] for row in values} - set(ordered))


def _y(order: list[str]) -> dict[str, Any]:
    return {"field": "label", "type": "nominal", "sort": order, "title": None,
            "axis": {"labelLimit": 320}}


def _height(series: int) -> dict[str, int]:
    """Band height: with an offset channel Vega-Lite's step is per series, not per language."""
    return {"step": 9 if series > 1 else 18}


def chars_per_token(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per language and tokenizer: chars/token, the longer bar the cheaper the language."""
    values = _records([{"tokenizer": r["tokenizer"], "lang": r["lang"], "script": r["script"],
                        "label": label(r["lang"], r["script"]), "chars_per_token": r["chars_per_token"],
                        "bytes_per_token": r["bytes_per_token"]} for r in rows])
    series = len({v["tokenizer"] for v in values})
    return _base("Characters per token", "higher is cheaper: more text per token", values,
                 height=_height(series), mark={"type": "bar", "tooltip": True},
                 encoding={"y": _y(_order(values, "chars_per_token")),
                           "yOffset": {"field": "tokenizer", "type": "nominal"},
                           "x": {"field": "chars_per_token", "type": "quantitative", "title": "chars/token"},
                           "color": {"field": "tokenizer", "type": "nominal", "title": "tokenizer"}})


def premium(rows: Sequence[Mapping[str, Any]], reference: str) -> dict[str, Any]:
    """Token premium against the reference (point) and its encoding part, the byte premium
    (tick): the gap between them is the tokenizer's."""
    values = _records([{"tokenizer": r["tokenizer"], "lang": r["lang"], "script": r["script"],
                        "label": label(r["lang"], r["script"]), "premium": r["premium"],
                        "byte_premium": r.get("byte_premium")} for r in rows])
    series = len({v["tokenizer"] for v in values})
    y, offset = _y(_order(values, "premium")), {"field": "tokenizer", "type": "nominal"}
    color = {"field": "tokenizer", "type": "nominal", "title": "tokenizer"}
    return _base(f"Token premium against {reference}",
                 ["tokens for the same content, 1 = as cheap as the reference;",
                  "black tick: byte premium (the part the UTF-8 encoding explains)"], values,
                 height=_height(series), layer=[
                     {"mark": {"type": "rule", "color": "#999"}, "encoding": {"x": {"datum": 1}}},
                     {"mark": {"type": "point", "filled": True, "tooltip": True}, "encoding": {
                         "y": y, "yOffset": offset, "color": color,
                         "x": {"field": "premium", "type": "quantitative", "title": "premium (x reference)"}}},
                     {"mark": {"type": "tick", "color": "black", "thickness": 2}, "encoding": {
                         "y": y, "yOffset": offset,
                         "x": {"field": "byte_premium", "type": "quantitative"}}},
                 ])


def lorenz(balance: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Lorenz curve of the premiums per tokenizer, its Gini in the legend; the diagonal is
    equality (every language pays the same)."""
    values = []
    for tokenizer, entry in balance.items():
        gini = entry.get("gini")
        name = f"{tokenizer} (Gini {gini:.3f})" if gini is not None else tokenizer
        values += [{"tokenizer": name, "languages": x, "cost": y} for x, y in entry.get("lorenz", [])]
    return _base("Lorenz curve of the premiums", "share of the token cost borne by the cheapest share of "
                 "languages; the further below the diagonal, the less fair", _records(values), height=360,
                 width=360, layer=[
                     {"data": {"values": [{"languages": 0, "cost": 0}, {"languages": 1, "cost": 1}]},
                      "mark": {"type": "line", "color": "#999", "strokeDash": [4, 4]},
                      "encoding": {"x": {"field": "languages", "type": "quantitative"},
                                   "y": {"field": "cost", "type": "quantitative"}}},
                     {"mark": {"type": "line", "point": True, "tooltip": True}, "encoding": {
                         "x": {"field": "languages", "type": "quantitative", "title": "cumulative share of languages"},
                         "y": {"field": "cost", "type": "quantitative", "title": "cumulative share of token cost"},
                         "color": {"field": "tokenizer", "type": "nominal", "title": "tokenizer"}}},
                 ])


def budget(rows: Sequence[Mapping[str, Any]], *, given: bool) -> dict[str, Any]:
    """Content share against token share per language: a mix set in tokens moves text away
    from the expensive languages."""
    values = []
    for r in rows:
        base = {"tokenizer": r["tokenizer"], "lang": r["lang"], "label": label(r["lang"], r["script"])}
        values.append({**base, "measure": "content share", "share": r["content_share"]})
        values.append({**base, "measure": "token share", "share": r["token_share"]})
    values = _records(values)
    return _base("Content share against token share", f"for the {'given --mix' if given else 'corpus as read'}; "
                 "one panel per tokenizer", values,
                 facet={"row": {"field": "tokenizer", "type": "nominal", "title": None}},
                 spec={"width": 520, "height": {"step": 22}, "mark": {"type": "bar", "tooltip": True},
                       "encoding": {"y": _y(_order(values, "share")),
                                    "yOffset": {"field": "measure", "type": "nominal"},
                                    "x": {"field": "share", "type": "quantitative", "axis": {"format": "%"}},
                                    "color": {"field": "measure", "type": "nominal", "title": None}}},
                 width=None)


def ceiling(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What the pre-tokenizer allows (chars per pre-token, tick) against what the tokenizer
    achieves (chars/token, bar): a bar near its tick is capped by the split, not the vocabulary."""
    values = _records([{"tokenizer": r["tokenizer"], "lang": r["lang"], "label": label(r["lang"], r["script"]),
                        "chars_per_token": r["chars_per_token"], "chars_per_pretoken": r["chars_per_pretoken"]}
                       for r in rows])
    series = len({v["tokenizer"] for v in values})
    y, offset = _y(_order(values, "chars_per_pretoken")), {"field": "tokenizer", "type": "nominal"}
    color = {"field": "tokenizer", "type": "nominal", "title": "tokenizer"}
    return _base("Pre-tokenizer ceiling against achieved chars/token",
                 ["bar: chars/token achieved; black tick: chars per pre-token,",
                  "the most any vocabulary could reach"], values, height=_height(series), layer=[
                     {"mark": {"type": "bar", "tooltip": True}, "encoding": {
                         "y": y, "yOffset": offset, "color": color,
                         "x": {"field": "chars_per_token", "type": "quantitative", "title": "characters"}}},
                     {"mark": {"type": "tick", "color": "black", "thickness": 2, "tooltip": True}, "encoding": {
                         "y": y, "yOffset": offset, "x": {"field": "chars_per_pretoken", "type": "quantitative"}}},
                 ])


def ratios(rows: Sequence[Mapping[str, Any]], a: str, b: str) -> dict[str, Any]:
    """compare: chars/token of B over A per language, with the paired bootstrap interval. ALL
    (every language) is not one of the sorted languages: a dashed line, its value in the subtitle."""
    values = _records([{"lang": r["lang"], "label": label(r["lang"], r["script"]),
                        "ratio": r["chars_per_token_ratio"], "ci_low": r.get("ratio_ci_low"),
                        "ci_high": r.get("ratio_ci_high")} for r in rows if r["lang"] != "ALL"])
    every = _records([{"ratio": r["chars_per_token_ratio"], "ci_low": r.get("ratio_ci_low"),
                       "ci_high": r.get("ratio_ci_high")} for r in rows if r["lang"] == "ALL"])
    y = _y(_order(values, "ratio"))
    layer: list[dict[str, Any]] = [{"mark": {"type": "rule", "color": "#999"}, "encoding": {"x": {"datum": 1}}}]
    subtitle = ["chars/token of B over A: above 1, B packs more text per token; bars: 95% paired bootstrap interval"]
    if every and every[0]["ratio"] is not None:
        whole = every[0]
        interval = f" ({whole['ci_low']:.3f}–{whole['ci_high']:.3f})" if whole["ci_low"] is not None else ""
        subtitle.append(f"dashed line: all languages together (ALL), B/A = {whole['ratio']:.3f}{interval}")
        layer.append({"data": {"values": [{"ratio": whole["ratio"]}]},
                      "mark": {"type": "rule", "color": "#e45756", "strokeDash": [6, 4]},
                      "encoding": {"x": {"field": "ratio", "type": "quantitative"}}})
    layer += [{"mark": {"type": "rule"}, "encoding": {
                  "y": y, "x": {"field": "ci_low", "type": "quantitative"}, "x2": {"field": "ci_high"}}},
              {"mark": {"type": "point", "filled": True, "tooltip": True}, "encoding": {
                  "y": y, "x": {"field": "ratio", "type": "quantitative", "title": "B/A chars per token",
                                "scale": {"zero": False}}}}]
    return _base(f"{b} against {a}", subtitle, values, height={"step": 18}, layer=layer)


def before_after(rows: Sequence[Mapping[str, Any]], before: str, after: str) -> dict[str, Any]:
    """retrain: chars/token before (the --compare-with tokenizer) and after (the new one)."""
    values = []
    for r in rows:
        if r["lang"] == "ALL":
            continue
        base = {"lang": r["lang"], "label": label(r["lang"], r["script"])}
        values.append({**base, "when": f"before: {before}", "chars_per_token": r["chars_per_token_a"]})
        values.append({**base, "when": f"after: {after}", "chars_per_token": r["chars_per_token_b"]})
    values = _records(values)
    return _base("Before and after retraining", "chars/token on held-out text, higher is cheaper", values,
                 height=_height(2), mark={"type": "bar", "tooltip": True},
                 encoding={"y": _y(_order(values, "chars_per_token", descending=False)),
                           "yOffset": {"field": "when", "type": "nominal", "sort": "descending"},
                           "x": {"field": "chars_per_token", "type": "quantitative", "title": "chars/token"},
                           "color": {"field": "when", "type": "nominal", "title": None, "sort": "descending"}})


def vocabulary(allocations: Mapping[str, Mapping[str, Any]], *, top: int = 12) -> dict[str, Any]:
    """Vocabulary entries per script, per tokenizer (the largest scripts, the rest as `other`)."""
    values = []
    for tokenizer, entry in allocations.items():
        by_script = sorted(entry["by_script"].items(), key=lambda kv: -kv[1])
        shown = by_script[:top]
        rest = sum(n for _, n in by_script[top:])
        parts = shown + ([("other scripts", rest)] if rest else [])
        parts += [("undecodable bytes", entry.get("n_undecodable", 0))]
        values += [{"tokenizer": tokenizer, "script": s, "entries": n, "share": n / entry["size"]}
                   for s, n in parts if n]
    return _base("Vocabulary by script", "entries per Unicode script of their letters, marks and digits "
                 "(Zyyy: none of these, as spaces, punctuation, ASCII digits)", _records(values), height={"step": 28},
                 mark={"type": "bar", "tooltip": True},
                 encoding={"y": {"field": "tokenizer", "type": "nominal", "title": None, "axis": {"labelLimit": 320}},
                           "x": {"field": "share", "type": "quantitative", "stack": "normalize",
                                 "axis": {"format": "%"}, "title": "share of the vocabulary"},
                           "color": {"field": "script", "type": "nominal", "title": "script",
                                     "scale": {"scheme": "tableau20"}},
                           "order": {"field": "entries", "type": "quantitative", "sort": "descending"}})


def config() -> dict[str, Any]:
    """One look for every chart: the Noto list everywhere (titles, axes, legends, marks), labels never cut."""
    return {"font": FONT, "axis": {"labelFont": FONT, "titleFont": FONT, "labelFontSize": 12},
            "legend": {"labelFont": FONT, "titleFont": FONT, "labelLimit": 360},
            "title": {"font": FONT, "subtitleFont": FONT, "fontSize": 15},
            "header": {"labelFont": FONT, "titleFont": FONT}}
