"""Counting text units (bytes, chars, graphemes, words) and telling a text's Unicode script.

Everything is measured on the text exactly as read: no normalization, so byte and character
counts are those of the file. Graphemes are extended grapheme clusters as the `regex` module
segments them (`\\X`); their count depends on its Unicode version, recorded by `segmenter_info`.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

import numpy as np
import regex

_GRAPHEME = regex.compile(r"\X")
_WORD = regex.compile(r"\S+")

# ISO 15924 code -> the `regex` module's script name. Order matters only for readability.
SCRIPT_NAMES: dict[str, str] = {
    "Latn": "Latin", "Cyrl": "Cyrillic", "Grek": "Greek", "Armn": "Armenian",
    "Geor": "Georgian", "Hebr": "Hebrew", "Arab": "Arabic", "Syrc": "Syriac",
    "Thaa": "Thaana", "Nkoo": "Nko", "Ethi": "Ethiopic", "Tfng": "Tifinagh",
    "Deva": "Devanagari", "Beng": "Bengali", "Guru": "Gurmukhi", "Gujr": "Gujarati",
    "Orya": "Oriya", "Taml": "Tamil", "Telu": "Telugu", "Knda": "Kannada",
    "Mlym": "Malayalam", "Sinh": "Sinhala", "Olck": "Ol_Chiki", "Mtei": "Meetei_Mayek",
    "Thai": "Thai", "Laoo": "Lao", "Tibt": "Tibetan", "Mymr": "Myanmar", "Khmr": "Khmer",
    "Hang": "Hangul", "Hira": "Hiragana", "Kana": "Katakana", "Hani": "Han",
    "Mong": "Mongolian", "Cher": "Cherokee", "Cans": "Canadian_Aboriginal",
}
# Writing-system codes that name a mixture or a variant of the scripts above.
SCRIPT_ALIASES: dict[str, tuple[str, ...]] = {
    "Hans": ("Hani",), "Hant": ("Hani",), "Jpan": ("Hani", "Hira", "Kana"),
    "Kore": ("Hang", "Hani"),
}
# Programming languages are audited as languages (`python_Code`, `c_Code`) under this family name:
# not an ISO 15924 script (their letters are mostly Latin), it keeps code apart from prose in tables.
CODE = "Code"
# Scripts written without spaces between words: whitespace "words" mean nothing there.
UNSPACED_SCRIPTS = frozenset({"Hani", "Hans", "Hant", "Jpan", "Hira", "Kana", "Thai", "Laoo",
                              "Khmr", "Mymr", "Tibt"})

_SCRIPT_RUN = regex.compile(
    "|".join(f"(?P<{code}>[\\p{{Script={name}}}]+)" for code, name in SCRIPT_NAMES.items())
)


def is_known_script(code: str) -> bool:
    return code in SCRIPT_NAMES or code in SCRIPT_ALIASES or code == CODE


def is_spaced(script: str) -> bool:
    """Whether words are separated by spaces, so that tokens per word is meaningful."""
    return script not in UNSPACED_SCRIPTS


def detect_script(text: str) -> str:
    """ISO 15924 code of the script most letters belong to (marks count with their script).

    Japanese (kana with Han) is `Jpan`, Han alone `Hani`; `Zyyy` when no script letters are found.
    """
    totals: dict[str, int] = {}
    for match in _SCRIPT_RUN.finditer(text):
        code = match.lastgroup
        totals[code] = totals.get(code, 0) + match.end() - match.start()
    if not totals:
        return "Zyyy"
    best = max(totals, key=totals.__getitem__)
    if best in ("Hani", "Hira", "Kana") and (totals.get("Hira", 0) + totals.get("Kana", 0)) > 0:
        return "Jpan"
    return best


@dataclass(frozen=True)
class TextProfile:
    """Unit counts of one document and where its words are, in UTF-8 byte offsets."""

    n_bytes: int
    n_chars: int
    n_graphemes: int
    word_starts: np.ndarray
    word_ends: np.ndarray
    grapheme_starts: np.ndarray  # byte offset of every cluster start, and the text's end
    char_starts: np.ndarray  # byte offset of every character start, and the text's end

    @property
    def n_words(self) -> int:
        return len(self.word_starts)


def char_to_byte_offsets(text: str) -> np.ndarray:
    """Array of len(text)+1 entries: the UTF-8 byte offset at which each character starts."""
    code_points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    widths = 1 + (code_points > 0x7F) + (code_points > 0x7FF) + (code_points > 0xFFFF)
    offsets = np.zeros(len(code_points) + 1, dtype=np.int64)
    np.cumsum(widths, out=offsets[1:])
    return offsets


# Two or more regional indicators (flag halves) in a row: `regex`'s `\X` rescans such a run from
# its start at every character, quadratic time (a 320 KB line of flags took 30 s, 1 MB minutes).
_RI_RUN = regex.compile("[\U0001F1E6-\U0001F1FF]{2,}")


def cluster_bounds(text: str) -> np.ndarray:
    """Character offset of every extended grapheme cluster's start, then `len(text)`: `\\X`'s
    clusters, in linear time. A run of regional indicators goes to `\\X` as a letter each
    (they take part in no rule but GB12/13, so every other boundary stays as it was) and is
    paired here, two by two from the run's start, as GB12/13 pair them."""
    runs = [match.span() for match in _RI_RUN.finditer(text)]
    masked = _RI_RUN.sub(lambda match: "A" * len(match.group()), text) if runs else text
    lengths = np.fromiter(map(len, _GRAPHEME.findall(masked)), dtype=np.int64)
    bounds = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=bounds[1:])
    if runs:
        inside = np.concatenate([np.arange(start + 1, end, 2) for start, end in runs])  # second halves
        bounds = bounds[~np.isin(bounds, inside)]
    return bounds


def count_graphemes(text: str) -> int:
    if _RI_RUN.search(text) is None:
        return sum(1 for _ in _GRAPHEME.finditer(text))
    return len(cluster_bounds(text)) - 1


def graphemes(text: str) -> list[str]:
    """The extended grapheme clusters of `text`, as `\\X` finds them (in linear time)."""
    if _RI_RUN.search(text) is None:
        return _GRAPHEME.findall(text)
    bounds = cluster_bounds(text).tolist()
    return [text[a:b] for a, b in pairwise(bounds)]


def profile(text: str) -> TextProfile:
    """Count bytes, chars, graphemes and whitespace-separated words of one document."""
    byte_at = char_to_byte_offsets(text)
    spans = [(m.start(), m.end()) for m in _WORD.finditer(text)]
    char_spans = np.array(spans, dtype=np.int64).reshape(-1, 2)
    bounds = cluster_bounds(text)  # char offset of each cluster start, then the end
    return TextProfile(
        n_bytes=int(byte_at[-1]),
        n_chars=len(text),
        n_graphemes=len(bounds) - 1,
        word_starts=byte_at[char_spans[:, 0]],
        word_ends=byte_at[char_spans[:, 1]],
        grapheme_starts=byte_at[bounds],
        char_starts=byte_at,
    )


@lru_cache(maxsize=1)
def segmenter_info() -> dict[str, str]:
    """Which grapheme segmenter ran and which Unicode version it implements.

    The `regex` module does not report its Unicode version, so we probe characters first
    assigned in each version; we also record whether Indic conjuncts (Unicode 15.1, e.g. ক্ষ)
    form one cluster, since that changes Bengali and Devanagari grapheme counts.
    """
    probes = [("15.0", "\U0001E030"), ("15.1", "\u2FFC"), ("16.0", "\u1C89"), ("17.0", "\u20C1")]
    version = "<15.0"
    for name, char in probes:
        if regex.match(r"\p{Assigned}", char):
            version = name
    conjunct_is_one = len(graphemes("\u0995\u09CD\u09B7")) == 1
    return {
        "segmenter": f"regex {regex.__version__} \\X",
        "segmenter_unicode": version,
        "indic_conjunct_clusters": "yes" if conjunct_is_one else "no",
        "python_unicodedata": unicodedata.unidata_version,
    }


@lru_cache(maxsize=1)
def _whitespace_table() -> np.ndarray:
    """Per BMP code point: does `\\s` (the `regex` module's, as `\\S+` words use) match it?
    No whitespace is assigned above U+FFFF, so callers treat those as non-space."""
    from .clusters import bmp

    table = np.zeros(0x10000, dtype=bool)
    table[code_points("".join(regex.findall(r"\s+", bmp())))] = True
    return table


def code_points(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le", errors="surrogatepass"), dtype=np.uint32)


def whitespace_mask(codes: np.ndarray) -> np.ndarray:
    table = _whitespace_table()
    return table[np.minimum(codes, 0xFFFF)] & (codes <= 0xFFFF)


def prepare_tables() -> None:
    """Build the lookup tables now (before worker processes fork, so each inherits them)."""
    from . import clusters

    _whitespace_table()
    clusters.tables()


def cluster_continuations(texts: list[str], codes: np.ndarray | None = None) -> np.ndarray:
    """Indices (in the concatenation of `texts`, whose code points `codes` are) of the
    characters that do not start an extended grapheme cluster: by the pair rules
    (clusters.py), and by `\\X` for the texts those do not cover (emoji sequences, astral)."""
    codes = code_points("".join(texts)) if codes is None else codes
    pairs = PairJoins(texts, codes)
    return np.flatnonzero(pairs.segmented(texts)) + 1


class PairJoins:
    """The cheap part of cluster boundaries, for every pair of neighbouring characters of
    texts laid end to end: `joins` by the pair rules (clusters.py), and which texts (`hard`)
    hold characters those rules do not cover, to be redone by `\\X` (`segmented`)."""

    def __init__(self, texts: list[str], codes: np.ndarray):
        from . import clusters

        self.codes = codes
        self.sizes = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        self.bases = np.cumsum(self.sizes) - self.sizes
        self.joins = clusters.joins(codes, self.bases)
        hard = np.flatnonzero(clusters.needs_segmenter(codes))
        chosen = np.unique(np.searchsorted(self.bases, hard, side="right") - 1) if len(hard) else hard
        self.hard = chosen[self.sizes[chosen] > 0]

    def segmented(self, texts: list[str]) -> np.ndarray:
        """`joins` with the hard texts' pairs decided by `\\X` (the costly part)."""
        joins = self.joins.copy()
        chosen, sizes, bases = self.hard, self.sizes, self.bases
        if len(chosen):
            for i in chosen.tolist():
                joins[bases[i]:bases[i] + sizes[i] - 1] = False
            positions = _segmented_continuations([texts[i] for i in chosen.tolist()])
            sub_bases = np.cumsum(sizes[chosen]) - sizes[chosen]
            which = np.searchsorted(sub_bases, positions, side="right") - 1
            joins[positions - sub_bases[which] + bases[chosen][which] - 1] = True
        return joins

    def undecided(self) -> np.ndarray:
        """Per pair: whether only `\\X` can tell (inside a hard text: after a ZWJ, between two
        regional indicators, a consonant after a mark, whose run of marks may hold characters
        above U+FFFF, or a letter after a mark above U+FFFF); elsewhere `expected` is exact."""
        from . import clusters

        out = np.zeros(len(self.joins), dtype=bool)
        if not len(self.hard):
            return out
        codes = self.codes
        classes = clusters.classes_of(codes)
        before, after = classes[:-1], classes[1:]
        astral = (codes[:-1] > 0xFFFF) | (codes[1:] > 0xFFFF)
        incb = clusters.tables()[1][np.minimum(codes, 0xFFFF)]
        mark = (incb[:-1] == clusters.LINKER) | (incb[:-1] == clusters.INCB_EXTEND) \
            | ((codes[:-1] > 0xFFFF) & (before == clusters.EXTEND))
        context = (before == clusters.ZWJ) | ((before == clusters.RI) & (after == clusters.RI)) \
            | (mark & (incb[1:] == clusters.CONSONANT)) | (astral & (before == clusters.EXTEND) & (after == clusters.OTHER))
        inside = np.zeros(len(self.joins), dtype=bool)
        for i in self.hard.tolist():
            inside[self.bases[i]:self.bases[i] + self.sizes[i] - 1] = True
        return context & inside

    def expected(self) -> np.ndarray:
        """Per pair, what the boundary must be where it is decided: the pair rules, with the
        true class of characters above U+FFFF (which `joins` clips)."""
        from . import clusters

        joins = self.joins.copy()
        astral = np.flatnonzero((self.codes[:-1] > 0xFFFF) | (self.codes[1:] > 0xFFFF))
        if len(astral):
            _, _, _, table, _ = clusters.tables()
            before, after = clusters.classes_of(self.codes[astral]), clusters.classes_of(self.codes[astral + 1])
            joins[astral] = table[before, after]
            joins[self.bases[(self.bases > 0) & (self.bases < len(self.codes))] - 1] = False
        return joins


def _segmented_continuations(texts: list[str]) -> np.ndarray:
    """The same by the segmenter: texts joined with NUL, a control character, which no
    cluster crosses (rules GB4/GB5)."""
    joined = "\0".join(texts)
    starts = np.zeros(len(joined) + 1, dtype=bool)
    starts[cluster_bounds(joined)] = True
    keep = np.ones(len(joined) + 1, dtype=bool)
    sizes = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    keep[(np.cumsum(sizes) + np.arange(len(texts)))[:-1]] = False  # the separators
    return np.flatnonzero(~starts[keep])
