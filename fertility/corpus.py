"""Reading corpora into documents: files, folders of `{lang}.txt`, FLORES-style split trees.

A corpus is read strictly as UTF-8 (a wrong byte changes the very counts we measure, so we
fail with file and line instead of replacing it). Two ways to cut documents:
`line` (one document per non-empty line, the default) and `file` (one document per file,
its non-empty lines joined by a single space, as Petrov et al. 2023 counted FLORES).
"""

from __future__ import annotations

import hashlib
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import regex

from ._iso639 import CODES
from .errors import CorpusError, FertilityWarning
from .text import detect_script, is_known_script

DOC_MODES = ("line", "file")
_LANG_KEY = regex.compile(r"^(?P<lang>[a-z]{2,3})(?:[_-](?P<script>[A-Z][a-z]{3}))?$")


@dataclass(frozen=True)
class Document:
    lang: str
    text: str
    source: str
    line: int  # first line of the document in its file (1-based)


@dataclass(frozen=True)
class Corpus:
    """Documents in reading order, each language's script, and what identifies the input."""

    documents: tuple[Document, ...]
    scripts: dict[str, str]
    files: tuple[str, ...]
    sha256: str
    doc_mode: str



def _key(name: str) -> tuple[str, str | None] | None:
    """(key, declared script) if `name` is a language key (`ben_Beng`, `bn`), else None.

    A bare name must be an ISO 639 code (`foo` and `new` look alike, only one is a language);
    with a script (`xyz_Latn`) the name plainly means a language, whatever the code.
    """
    match = _LANG_KEY.match(name)
    if not match:
        return None
    script = match["script"]
    if script and not is_known_script(script):
        return None
    if not script and match["lang"] not in CODES:
        return None
    return name, script


def language_of(path: Path, root: Path | None = None) -> tuple[str, str | None]:
    """Language key and declared script: `ben_Beng.txt` -> (ben_Beng, Beng).

    A file whose name is no language key takes the nearest folder below `root` that is one
    (`mono/ben/news/x.txt` -> ben); failing that it keeps its stem, with a warning, since a
    language called `notes` is most likely a naming slip. Undeclared scripts are detected from
    the text later.
    """
    stem = path.name[: -len(".txt")] if path.name.lower().endswith(".txt") else path.stem
    found = _key(stem)
    if found:
        return found
    if root is not None and root != path:
        for folder in path.parents:
            found = _key(folder.name)
            if found:
                return found
            if folder == root:
                break
    warnings.warn(f"{path}: {stem!r} is not a language code (like ben_Beng or bn), so its text is "
                  f"counted as language {stem!r}; to name the language, rename the file (e.g. "
                  "ben_Beng.txt) or put it in a folder named after the language (e.g. ben_Beng/)",
                  FertilityWarning, stacklevel=2)
    return stem, None


def _is_text(path: Path) -> bool:
    """A regular `.txt` file, whatever the case of its suffix (`ben_Beng.TXT`)."""
    return path.suffix.lower() == ".txt" and path.is_file()


def _text_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if _is_text(p))


def find_files(path: Path) -> list[Path]:
    """The text files a corpus path stands for: itself, its `*.txt`, or those below it
    (split folders such as dev/ and devtest/, or language folders such as ben/news/)."""
    if not path.exists():
        raise CorpusError(f"{path}: no such file or directory")
    if path.is_file():
        return [path]
    if not path.is_dir():  # a pipe, /dev/stdin, <(zcat x.gz): read once, as one file
        if not os.access(path, os.R_OK):
            raise CorpusError(f"{path}: cannot read (permission denied)")
        return [path]
    try:
        files = _text_files(path)
        if files:
            return files
        files = sorted(p for p in path.rglob("*") if _is_text(p)
                       and not any(part.startswith(".") for part in p.relative_to(path).parts))
    except OSError as err:
        raise CorpusError(f"{err.filename or path}: cannot read ({err.strerror})") from None
    if not files:
        raise CorpusError(f"{path}: directory holds no .txt files (expected {{lang}}.txt, "
                          f"e.g. ben_Beng.txt, or split folders such as dev/ and devtest/)")
    return files


def decode_strict(path: Path, data: bytes) -> str:
    """UTF-8 without replacement; the error names the line and column of the bad byte."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line_start = data.rfind(b"\n", 0, err.start) + 1
        line = data.count(b"\n", 0, err.start) + 1
        column = len(data[line_start:err.start].decode("utf-8", errors="replace")) + 1
        bad = data[err.start:err.end].hex(" ")
        raise CorpusError(f"{path}:{line}:{column}: not valid UTF-8 (byte {bad}: {err.reason}); "
                          "convert the file to UTF-8, e.g. with iconv") from None
    return text.removeprefix("\ufeff")


def read_text_file(path: Path) -> str:
    """A whole file as strict UTF-8 (for `show --file`), with the same errors as corpora."""
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise CorpusError(f"{path}: cannot read ({err.strerror})") from None
    return decode_strict(Path(path), data)


def _lines(text: str) -> list[tuple[int, str]]:
    """Non-empty lines with their 1-based numbers; only LF (and CRLF) end a line."""
    out = []
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if line.strip():
            out.append((number, line))
    return out


def read_corpus(paths: list[Path], *, doc_mode: str = "line") -> Corpus:
    """Read every corpus path into documents, grouped by the language named by each file."""
    if doc_mode not in DOC_MODES:
        raise CorpusError(f"unknown document mode {doc_mode!r}; choose one of {', '.join(DOC_MODES)}")
    documents: list[Document] = []
    declared: dict[str, str | None] = {}
    digest = hashlib.sha256()
    files: list[str] = []
    once = _ReadOnce()
    for root in paths:
        for file in find_files(Path(root)):
            once.path(file)
            try:
                data = file.read_bytes()
            except OSError as err:
                raise CorpusError(f"{file}: cannot read ({err.strerror})") from None
            once.content(file, data)
            lines = _lines(decode_strict(file, data))
            if not lines:
                raise CorpusError(f"{file}: empty corpus file (no non-empty lines)")
            lang, script = language_of(file, Path(root))
            declared.setdefault(lang, script)
            files.append(str(file))
            digest.update(f"{lang}\0{hashlib.sha256(data).hexdigest()}\0".encode())
            if doc_mode == "file":
                documents.append(Document(lang, " ".join(l for _, l in lines), str(file), lines[0][0]))
            else:
                documents.extend(Document(lang, line, str(file), n) for n, line in lines)
    if not documents:
        raise CorpusError(f"{', '.join(map(str, paths))}: no documents found")
    digest.update(doc_mode.encode())
    scripts = {}
    for lang, script in declared.items():
        scripts[lang] = script or detect_script(" ".join(d.text for d in _sample(documents, lang)))
    return Corpus(tuple(documents), scripts, tuple(files), digest.hexdigest(), doc_mode)


class _ReadOnce:
    """Refuse a file counted twice: the same file reached by two corpus paths, or two files
    with the same content (a copy would double that language's weight without a word)."""

    def __init__(self) -> None:
        self._paths: dict[str, Path] = {}
        self._contents: dict[str, Path] = {}

    def path(self, file: Path) -> None:
        try:
            key = str(file.resolve())
        except (OSError, RuntimeError):
            key = os.path.abspath(file)
        if key in self._paths:
            raise CorpusError(f"{file}: given twice (also as {self._paths[key]}); "
                              "each corpus file may be counted once")
        self._paths[key] = file

    def content(self, file: Path, data: bytes) -> None:
        key = hashlib.sha256(data).hexdigest()
        if key in self._contents:
            raise CorpusError(f"{file}: same content as {self._contents[key]}; "
                              "each text may be counted once (remove the copy)")
        self._contents[key] = file


def _sample(documents: list[Document], lang: str, limit: int = 200) -> list[Document]:
    out = []
    for doc in documents:
        if doc.lang == lang:
            out.append(doc)
            if len(out) == limit:
                break
    return out
