"""Whether a corpus is parallel (line i of every language is the same content), and how we know.

A premium (tokens(lang) / tokens(reference)), a byte premium and the Gini over premiums are
defined over the same content only. Equal document counts prove nothing (any sample of N
documents per language has them, and so do two unrelated files of the same length), so a corpus
is parallel only when

- the user states it (`--parallel`, `parallel = true` in the gate config), and every language
  has the same number of documents; or
- its files prove it: every language has the same number of files, the k-th files of all
  languages have the same number of non-empty lines, with their empty lines (if any) at the
  same places, so document i is line i everywhere; and the lengths of aligned lines follow each
  other as translations' do (Gale & Church 1993): over the first EVIDENCE_LINES lines of each
  file, at least MIN_LINES lines, every language's line lengths correlate with the reference's
  (Pearson r >= MIN_CORRELATION), and line i's with line i's more than with its neighbours'
  (by MIN_MARGIN: two files merely sorted by length follow each other at any offset).
  FLORES-200 and NTREX-128: r >= 0.74 for every language, r <= 0.16 one line off; unrelated
  text or lines shifted by one: |r| < 0.1.

Anything else is not parallel, with the reason, and gets per-language ratios only. The decision
is recorded in the signature (`parallel`) and every command reads it from there.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import Any

from fertility.errors import UsageError

EVIDENCE_LINES = 2000  # per file: the lengths of its first non-empty lines
MIN_LINES = 30  # fewer aligned lines than this prove nothing (chance correlations reach 0.6)
MIN_CORRELATION = 0.6
MIN_MARGIN = 0.2  # r on the same line minus r one line off (the bundled samples' 36 lines: 0.27)
STATED = "stated"
PROVEN = "proven"


@dataclass(frozen=True)
class Parallelism:
    """The one decision every premium obeys: parallel or not, how it was established
    (`proven`, `stated`, or None when it is not parallel) and why, in words."""

    parallel: bool
    established: str | None
    why: str

    def to_dict(self) -> dict[str, Any]:
        return {"parallel": self.parallel, "established": self.established, "why": self.why}

    @classmethod
    def from_dict(cls, data: Any) -> Parallelism:
        """What the signature holds; an audit written before it was recorded is not parallel."""
        if data is None:
            return NOT_RECORDED
        if not isinstance(data, dict) or not isinstance(data.get("parallel"), bool) \
                or data.get("established") not in (PROVEN, STATED, None) or not isinstance(data.get("why"), str):
            raise ValueError("signature.parallel is not {parallel, established, why}")
        if data["parallel"] != (data["established"] is not None):
            raise ValueError("signature.parallel: parallel and established disagree")
        return cls(data["parallel"], data["established"], data["why"])

    def note(self, *, option: str = "--parallel") -> str:
        """The one line a table prints when there are no premiums; `option` is how the reader
        states it (`--parallel` on the command line, `parallel=True` in Python)."""
        said = any(way in self.why for way in ("--parallel", "parallel=True", option))
        hint = "" if said else f" (aligned translations prove themselves; {option} states it)"
        return f"no premiums: {self.why}; per-language ratios only{hint}."


NOT_RECORDED = Parallelism(False, None, "this audit does not record whether its corpus is parallel (written "
                                        "before fertility recorded it), so it gives no premiums")


def recorded(extra: dict[str, Any]) -> Parallelism:
    """The decision a result's signature records (its keys beyond the known ones). A part of a
    sharded audit holds every N-th document of the corpus, not the same lines of each language:
    its own counts give no premiums, the merged whole does."""
    found = Parallelism.from_dict(extra.get("parallel"))
    if found.parallel and "shard" in extra:
        return not_parallel(f"this is part {extra['shard']} of a sharded audit, which holds every N-th document "
                            "of the corpus, not the same lines of each language; the merged parts give premiums")
    return found


def not_parallel(why: str) -> Parallelism:
    return Parallelism(False, None, why)


def stated(option: str, n_docs: dict[str, int]) -> Parallelism:
    """The user says line i is the same content in every language: at least the counts must agree."""
    if len(n_docs) < 2:
        return not_parallel("one language only")
    if len(set(n_docs.values())) > 1:
        counts = ", ".join(f"{lang} {n:,}" for lang, n in sorted(n_docs.items()))
        raise UsageError(f"{option}: the languages differ in document count ({counts}), so document i "
                         "cannot be the same content in each; give line-aligned files")
    return Parallelism(True, STATED, f"stated by {option}")


@dataclass
class LayoutRecorder:
    """What one corpus file shows about its alignment, gathered while it is read: how many
    non-empty lines (or records), where the empty ones are (only those before its last
    non-empty line matter), and the lengths of its first EVIDENCE_LINES non-empty lines."""

    name: str
    lang: str
    n_units: int = 0
    mixed: bool = False  # records of several languages: no layout to compare
    lengths: list[int] = field(default_factory=list)
    _pending: list[int] = field(default_factory=list)  # empty lines not yet followed by text
    _gaps: Any = field(default_factory=lambda: hashlib.blake2b(digest_size=16))

    def block(self, first: int, lines: list[str], kept: list[str]) -> None:
        """Lines numbered from `first`, and those of them that are not empty."""
        if len(kept) != len(lines):
            for number, line in enumerate(lines, start=first):
                if line.strip():
                    self._flush()
                else:
                    self._pending.append(number)
        elif kept:
            self._flush()
        self.n_units += len(kept)
        missing = EVIDENCE_LINES - len(self.lengths)
        if missing > 0:
            self.lengths.extend(map(len, kept[:missing]))

    def long_line(self, number: int, n_chars: int) -> None:
        """A line read in segments (over a megabyte): one non-empty line of `n_chars`."""
        self._flush()
        self.n_units += 1
        if len(self.lengths) < EVIDENCE_LINES:
            self.lengths.append(n_chars)

    def record(self, number: int, text: str, lang: str) -> None:
        """One non-empty record (numbered in its file) of language `lang`."""
        if lang != self.lang:
            self.mixed = True
        self.block(number, [text], [text])

    def skipped(self, number: int) -> None:
        """An empty record: a gap, like an empty line."""
        self._pending.append(number)

    def _flush(self) -> None:
        if self._pending:
            self._gaps.update(",".join(map(str, self._pending)).encode() + b";")
            self._pending.clear()

    def layout(self) -> FileLayout:
        return FileLayout(self.name, None if self.mixed else self.lang, self.n_units, self._gaps.hexdigest(),
                          tuple(self.lengths))


@dataclass(frozen=True)
class FileLayout:
    name: str
    lang: str | None  # None: records of several languages
    n_units: int
    gaps: str  # digest of where its empty lines are
    lengths: tuple[int, ...]


def prove(layouts: tuple[FileLayout, ...] | list[FileLayout], reference: str, *,
          option: str = "--parallel") -> Parallelism:
    """Parallel if the files show it (see the module docstring), else why not; `option` is how
    the caller states it (`--parallel` on the command line, `parallel=True` in Python)."""
    if any(layout.lang is None for layout in layouts):
        mixed = next(layout.name for layout in layouts if layout.lang is None)
        return not_parallel(f"{mixed} holds several languages, so nothing shows which line translates which")
    files: dict[str, list[FileLayout]] = {}
    for layout in layouts:
        files.setdefault(str(layout.lang), []).append(layout)
    if len(files) < 2:
        return not_parallel("one language only")
    counts = {lang: len(found) for lang, found in files.items()}
    if len(set(counts.values())) > 1:
        listed = ", ".join(f"{lang} {n}" for lang, n in sorted(counts.items()))
        return not_parallel(f"the languages have different numbers of files ({listed})")
    langs = sorted(files)
    for k in range(counts[langs[0]]):
        kth = {lang: files[lang][k] for lang in langs}
        units = {lang: layout.n_units for lang, layout in kth.items()}
        if len(set(units.values())) > 1:
            listed = ", ".join(f"{kth[lang].name} {n:,}" for lang, n in sorted(units.items())[:4])
            return not_parallel(f"the languages differ in line count ({listed}{', ...' if len(units) > 4 else ''}), "
                                "so line i is not the same content in each")
        if len({layout.gaps for layout in kth.values()}) > 1:
            return not_parallel(f"{kth[langs[0]].name} and the files beside it have empty lines at different "
                                "places, so line i is not document i in each")
    lengths = {lang: [n for layout in files[lang] for n in layout.lengths] for lang in langs}
    n_lines = len(lengths[langs[0]])
    if n_lines < MIN_LINES:
        return not_parallel(f"{n_lines} lines per language are too few to show that they are aligned "
                            f"(at least {MIN_LINES}); if they are translations line by line, say so with {option}")
    pivot = reference if reference in lengths else langs[0]
    weakest = min((_ordered(pearson(lengths[lang], lengths[pivot])), lang) for lang in langs if lang != pivot)
    if weakest[0] == -math.inf:
        return not_parallel(f"every line of {weakest[1]} or {pivot} has the same length, which shows nothing "
                            f"about alignment; if the lines are translations, say so with {option}")
    if not weakest[0] >= MIN_CORRELATION:
        return not_parallel(f"the line lengths of {weakest[1]} do not follow those of {pivot} (Pearson r = "
                            f"{weakest[0]:.2f} over {n_lines:,} lines; translations give {MIN_CORRELATION} or more), "
                            f"so its lines are not translations of each other; if they are, say so with {option}")
    for lang in (lang for lang in langs if lang != pivot):
        same, off = pearson(lengths[lang], lengths[pivot]), _off_by_one(lengths[lang], lengths[pivot])
        if not same - off >= MIN_MARGIN:
            return not_parallel(f"the line lengths of {lang} follow those of {pivot} one line off about as much as "
                                f"on the same line (Pearson r = {same:.2f}, one line off {off:.2f}): a shared trend, "
                                f"such as files sorted by length, not lines aligned; if they are, say so with {option}")
    splits = counts[langs[0]]
    return Parallelism(True, PROVEN, f"aligned files: {len(langs)} languages, {splits} file{'s' if splits > 1 else ''} "
                                     f"each, the same lines at the same places; line lengths follow {pivot}'s "
                                     f"(Pearson r >= {weakest[0]:.2f} over {n_lines:,} lines)")


def _off_by_one(xs: list[int], ys: list[int]) -> float:
    """The larger correlation of each line with the other file's next or previous line."""
    return max(_ordered(pearson(xs[1:], ys[:-1])), _ordered(pearson(xs[:-1], ys[1:])))


def _ordered(value: float) -> float:
    """NaN (a language whose lines all have one length) sorts first, as no evidence."""
    return -math.inf if math.isnan(value) else value


def pearson(xs: list[int], ys: list[int]) -> float:
    """Correlation of two equally long sequences; NaN when either is constant."""
    n = len(xs)
    mean_x, mean_y = sum(xs) / n, sum(ys) / n
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys))
    sxx = sum((x - mean_x) ** 2 for x in xs)
    syy = sum((y - mean_y) ** 2 for y in ys)
    return sxy / math.sqrt(sxx * syy) if sxx and syy else math.nan


def decide(layouts, n_docs: dict[str, int], *, reference: str, parallel: bool = False,
           option: str = "--parallel") -> Parallelism:
    """The corpus's parallelism: stated by `option` (checked against the document counts), or
    proven by its files, or not parallel with the reason (which names `option`)."""
    if parallel:
        return stated(option, n_docs)
    return prove(layouts, reference, option=option)


__all__ = ["NOT_RECORDED", "FileLayout", "LayoutRecorder", "Parallelism", "decide", "not_parallel", "prove",
           "recorded", "stated"]
