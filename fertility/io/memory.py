"""Corpora a notebook already holds: a list of texts, a `{lang: texts}` mapping, a pandas DataFrame
with `lang` and `text` columns.

Each text is one document. Languages are read in sorted order, each one's texts in the order
given, and the corpus is described exactly as the reader describes files of the same lines
(`{lang}.txt`, one text a line): the same hash over "lang\\0text" in reading order, the same
script detection, the same layout evidence for premiums. So a DataFrame audits to the same
numbers and the same corpus sha256 as the files it came from. Empty texts are skipped, as empty
lines are (and, like them, recorded where they were).
"""

from __future__ import annotations

import hashlib
import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import regex

from fertility.errors import ArgumentTypeError, CorpusError, FertilityWarning, described
from fertility.text.units import detect_script

from .corpus import Corpus, CorpusStream, Document
from .languages import check_language_name, language_key
from .parallel import LayoutRecorder

UNDETERMINED = "und"  # ISO 639-3 for a language not given: a plain list of texts
ACCEPTED = ("corpus paths (files, folders, URLs, named corpora such as 'flores'), a list of texts, "
            "a {lang: [texts]} mapping, or a pandas DataFrame with 'lang' and 'text' columns")
# A string that looks like a path or a corpus name rather than text: one word with a folder
# separator or a file suffix (`data/eng.txt`, `ben_Beng.jsonl.gz`).
_PATH_LIKE = regex.compile(r"^\S*(?:[/\\]\S*|\.[A-Za-z][A-Za-z0-9]{0,7})$")


class CorpusPaths(tuple):
    """Corpus arguments that are paths by where they come from (the command line, a gate config):
    never taken for text, so a mistyped path is reported missing, whatever it looks like."""


def _is_reference(text: str) -> bool:
    """A corpus reference as the reader takes it: an existing path, a URL, `-`, a catalogue name."""
    from .catalog import is_catalogue_name
    from .readers import is_url

    return text == "-" or is_url(text) or is_catalogue_name(text) or Path(text).exists()


def in_memory(corpus: Any) -> tuple[Corpus, str] | None:
    """(the corpus, what it was given as) for in-memory text; None for corpus paths (and None,
    the bundled samples); an ArgumentTypeError for anything else."""
    if corpus is None or isinstance(corpus, (Corpus, CorpusPaths)) or (isinstance(corpus, (list, tuple)) and not corpus):
        return None  # no corpus: the bundled samples
    if _is_frame(corpus):
        return from_frame(corpus), "pandas DataFrame (lang, text columns)"
    if isinstance(corpus, Mapping):
        return from_mapping(corpus), "{lang: texts} mapping"
    if isinstance(corpus, (str, Path)):
        return None  # one path (or named corpus): the reader checks it
    if isinstance(corpus, Sequence) and not isinstance(corpus, (bytes, bytearray)):
        items = list(corpus)
        if any(isinstance(item, Path) for item in items) or (items and all(
                isinstance(item, str) and _is_reference(item) for item in items)):
            return None
        if all(isinstance(item, str) for item in items):
            if not all(_is_prose(item) for item in items):
                return None  # paths, one of which the reader will report missing
            warnings.warn(f"corpus: {len(items)} strings, none a path, URL or named corpus: audited as texts of "
                          f"an undetermined language ({UNDETERMINED}); name it with {{lang: [texts]}}",
                          FertilityWarning, stacklevel=3)
            return from_mapping({UNDETERMINED: items}, what="list of texts"), "list of texts"
        bad = next(item for item in items if not isinstance(item, str))
        raise ArgumentTypeError(f"corpus list holds {_short(bad)} ({described(bad)}); accepted: {ACCEPTED}")
    raise ArgumentTypeError(f"cannot read a corpus given as {described(corpus)}; accepted: {ACCEPTED}")


def _is_prose(text: str) -> bool:
    """Text rather than a mistyped path: words apart (whitespace inside), or an empty text, and no
    file suffix or folder in a single word. A list of unspaced text (Chinese) is read as paths,
    and so fails loudly: give it as {lang: [texts]}."""
    return not text.strip() or (regex.search(r"\S\s+\S", text.strip()) is not None and not _PATH_LIKE.match(text))


def _is_frame(value: Any) -> bool:
    """A pandas DataFrame, told without importing pandas for every other input."""
    return any(kind.__module__.partition(".")[0] == "pandas" and kind.__qualname__ == "DataFrame"
               for kind in type(value).__mro__)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def from_frame(frame: Any) -> Corpus:
    """Rows of a DataFrame with `lang` and `text` columns, grouped by language (row order kept)."""
    missing = [column for column in ("lang", "text") if column not in frame.columns]
    if missing:
        raise CorpusError(f"corpus DataFrame has no {' or '.join(repr(c) for c in missing)} column (it has "
                          f"{', '.join(map(repr, map(str, frame.columns)))}); give one row per document with "
                          "its language in 'lang' and its text in 'text'")
    grouped: dict[str, list[Any]] = {}
    for index, lang, text in zip(frame.index, frame["lang"], frame["text"]):
        if not isinstance(lang, str):
            raise CorpusError(f"corpus DataFrame row {index!r}: 'lang' is {_short(lang)}, not a language code")
        if not isinstance(text, str):
            raise CorpusError(f"corpus DataFrame row {index!r} ({lang}): 'text' is {_short(text)}, not a string"
                              + (" (a missing value)" if isinstance(text, float) and math.isnan(text) else ""))
        grouped.setdefault(lang, []).append(text)
    return from_mapping(grouped, what="DataFrame")


def from_mapping(texts: Mapping[Any, Any], *, what: str = "mapping") -> Corpus:
    """{lang: texts}: the corpus the reader would make of one `{lang}.txt` per language."""
    if not texts:
        raise CorpusError(f"corpus {what} is empty: no languages")
    for lang in texts:
        if not isinstance(lang, str):
            raise ArgumentTypeError(f"corpus {what} key {_short(lang)} ({described(lang)}) is not a string; "
                                    "languages are named by strings such as 'ben_Beng'")
    documents: list[Document] = []
    scripts: dict[str, str] = {}
    layouts, n_docs, files = [], {}, []
    digest = hashlib.sha256()
    first = True
    multiline = False
    for lang in sorted(texts):
        where = f"corpus {what} language {lang!r}"
        check_language_name(lang, where)
        found = language_key(lang)
        if found is None:
            warnings.warn(f"{where}: {lang!r} is not a language code (like ben_Beng or bn), so its text is counted "
                          f"as language {lang!r}", FertilityWarning, stacklevel=3)
        given = _texts(texts[lang], where)
        kept = [(number, text) for number, text in enumerate(given, start=1) if text.strip()]
        if not kept:
            raise CorpusError(f"{where}: no non-empty texts")
        name = f"<{what}>/{lang}"
        recorder = LayoutRecorder(name, lang)
        recorder.block(1, given, [text for _, text in kept])
        layouts.append(recorder.layout())
        for number, text in kept:
            try:
                encoded = text.encode("utf-8")
            except UnicodeEncodeError as err:  # a lone surrogate: no file could hold it
                raise CorpusError(f"{where}, text {number}: not encodable as UTF-8 ({err.reason} at character "
                                  f"{err.start})") from None
            digest.update(f"{'' if first else chr(0)}{lang}\0".encode() + encoded)
            first = False
            multiline = multiline or "\n" in text or "\r" in text
            documents.append(Document(lang, text, name, number))
        n_docs[lang] = len(kept)
        files.append(name)
        declared = found[1] if found else None
        scripts[lang] = declared or detect_script(" ".join(_script_sample(text for _, text in kept)))
    doc_mode = "text" if multiline else "line"  # one document per text; a line each when none has a break
    digest.update(b"\0" + doc_mode.encode())
    return Corpus(tuple(documents), scripts, tuple(files), digest.hexdigest(), doc_mode, tuple(layouts), n_docs)


def _texts(value: Any, where: str) -> list[str]:
    if isinstance(value, str):
        raise ArgumentTypeError(f"{where}: a single string; give a list of texts (one document each)")
    if not isinstance(value, Iterable):
        raise ArgumentTypeError(f"{where}: {described(value)}, not a list of texts")
    out = list(value)
    for number, text in enumerate(out, start=1):
        if not isinstance(text, str):
            raise CorpusError(f"{where}, text {number}: {_short(text)} ({described(text)}) is not a string")
    return out


def _script_sample(texts: Iterable[str]) -> list[str]:
    """What the reader looks at to detect a script: the first 200 documents, at most 1 MiB."""
    limit = CorpusStream.SCRIPT_SAMPLE_CHARS
    sample: list[str] = []
    size = 0
    for text in texts:
        if len(sample) >= 200 or size >= limit:
            break
        sample.append(text[:limit])
        size += len(sample[-1])
    return sample


__all__ = ["ACCEPTED", "UNDETERMINED", "CorpusPaths", "from_frame", "from_mapping", "in_memory"]
