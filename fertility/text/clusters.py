"""Extended grapheme cluster boundaries (UAX #29) as array operations, for the audit's hot path.

`regex`'s `\\X` walks every character in Python-visible C calls and costs as much as tokenizing
Bengali. Most of the rules are a function of two neighbouring characters' Grapheme_Cluster_Break
classes (GB3-GB9b), so a table indexed by (class before, class after) decides them all at
once; the Indic conjunct rule GB9c looks back over a run of marks, which is done only for the
few consonants that follow a mark. The classes come from `regex`'s own property tables, so the segmenter's Unicode
version is kept. Texts that need the remaining rules (emoji ZWJ sequences GB11, regional
indicator pairs GB12/13) or hold characters above U+FFFF go to `\\X` itself; a test checks
both give the same boundaries on every FLORES language and on random text.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import regex

# Grapheme_Cluster_Break classes, numbered for the pair table (OTHER is 0)
CLASSES = ("Other", "CR", "LF", "Control", "Extend", "ZWJ", "Regional_Indicator", "Prepend", "SpacingMark",
           "L", "V", "T", "LV", "LVT")
OTHER, CR, LF, CONTROL, EXTEND, ZWJ, RI, PREPEND, SPACING_MARK, L, V, T, LV, LVT = range(len(CLASSES))
NONE, CONSONANT, LINKER, INCB_EXTEND = 0, 1, 2, 3  # Indic_Conjunct_Break


def _codes(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le", errors="surrogatepass"), dtype=np.uint32)


@lru_cache(maxsize=1)
def bmp() -> str:
    """Every BMP code point but U+D800, to scan with `regex` property classes."""
    return "".join(map(chr, range(0x10000))).replace("\ud800", "")


@lru_cache(maxsize=1)
def tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool]:
    """(class per BMP code point, Indic_Conjunct_Break per BMP code point, Extended_Pictographic
    per BMP code point, the pair table: no boundary between classes (a, b), and whether the
    segmenter keeps Indic conjuncts together (GB9c, Unicode 15.1))."""
    everything = bmp()
    names = "|".join(f"(?P<c{i}>\\p{{Grapheme_Cluster_Break={name}}}+)" for i, name in enumerate(CLASSES) if i)
    cls = np.zeros(0x10000, dtype=np.uint8)
    for match in regex.finditer(names, everything):
        cls[_codes(match.group())] = int(str(match.lastgroup)[1:])
    # U+D800, left out of the scan, stays Other, as `regex` treats lone surrogates
    incb = np.zeros(0x10000, dtype=np.uint8)
    for value, name in ((CONSONANT, "Consonant"), (LINKER, "Linker"), (INCB_EXTEND, "Extend")):
        incb[_codes("".join(regex.findall(f"\\p{{InCB={name}}}+", everything)))] = value
    pictographic = np.zeros(0x10000, dtype=bool)
    pictographic[_codes("".join(regex.findall(r"\p{Extended_Pictographic}+", everything)))] = True
    joined = np.zeros((len(CLASSES), len(CLASSES)), dtype=bool)
    joined[:, [EXTEND, ZWJ, SPACING_MARK]] = True  # GB9, GB9a
    joined[PREPEND, :] = True  # GB9b
    joined[L, [L, V, LV, LVT]] = True  # GB6
    joined[[LV, V], [[V], [T]]] = True  # GB7
    joined[[LVT, T], T] = True  # GB8
    joined[[CR, LF, CONTROL], :] = False  # GB4
    joined[:, [CR, LF, CONTROL]] = False  # GB5
    joined[CR, LF] = True  # GB3
    conjuncts = len(regex.findall(r"\X", "\u0995\u09cd\u09b7")) == 1
    return cls, incb, pictographic, joined, conjuncts


def needs_segmenter(codes: np.ndarray) -> np.ndarray:
    """Per character: does a text holding it need `\\X` (above U+FFFF, or a ZWJ before an
    Extended_Pictographic character, GB11)?"""
    _, _, pictographic, _, _ = tables()
    out = codes > 0xFFFF
    zwj = np.flatnonzero(codes[:-1] == 0x200D)  # few: look up only the characters after them
    after = codes[zwj + 1]
    out[zwj[(after <= 0xFFFF) & pictographic[np.minimum(after, 0xFFFF)]]] = True
    return out


def _last_at_or_before(points: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Per position, the largest of the sorted `points` not after it (-1 if none)."""
    at = np.searchsorted(points, positions, side="right") - 1
    return np.where(at >= 0, points[np.maximum(at, 0)], -1) if len(points) else np.full(len(positions), -1)


def joins(codes: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per pair of neighbouring characters (i, i + 1) of texts laid end to end (`starts`: where
    each text begins): does no cluster boundary fall between them? Right for BMP text without
    GB11/GB12 cases (see `needs_segmenter`); never across two texts."""
    cls_table, incb_table, _, joined, conjuncts = tables()
    if len(codes) < 2:
        return np.zeros(max(len(codes) - 1, 0), dtype=bool)
    clipped = np.minimum(codes, 0xFFFF)  # astral texts are redone by the segmenter
    cls = cls_table[clipped]
    keep = joined[cls[:-1], cls[1:]]
    if conjuncts:
        # GB9c as `regex` applies it: [Extend Linker]* Linker [Extend Linker]* x Consonant; the
        # standard also wants a Consonant before the marks, `regex` does not (অ্যা is one cluster)
        incb = incb_table[clipped]
        marks = (incb == LINKER) | (incb == INCB_EXTEND)
        candidates = np.flatnonzero((incb[1:] == CONSONANT) & marks[:-1])  # i: a consonant after marks at i
        if len(candidates):
            last_linker = _last_at_or_before(np.flatnonzero(incb == LINKER), candidates)
            run_start = _last_at_or_before(np.flatnonzero(~marks), candidates)  # the marks run after it
            text_start = starts[np.searchsorted(starts, candidates, side="right") - 1]
            keep[candidates[last_linker > np.maximum(run_start, text_start - 1)]] = True
    between = starts[(starts > 0) & (starts < len(codes))]
    keep[between - 1] = False  # a text's first character starts a cluster
    return keep
