"""What a corpus argument stands for: the files of a path or folder, a URL's files, standard
input, or a named corpus; each as the Sources the reader opens.

Kept apart from the reader because it answers a question asked before any text is read (which
files, is standard input open, is this a device), and the training commands ask it alone
(`find_files`) to fail early on a folder holding no corpus file.
"""

from __future__ import annotations

import dataclasses
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from fertility.errors import CorpusError, FertilityError

from .languages import check_language_name
from .readers import ReadOptions, Source, is_corpus_file, is_url, local_source, stdin_source, url_sources

if TYPE_CHECKING:
    from .catalog import NamedCorpus
    from .sampling import Sample


def corpus_root(path: Path | str, sample: Sample | None) -> Path | str | NamedCorpus:
    """A corpus argument as read: a URL or `-` as given, a named corpus (`flores`, fetched now)
    unless a path by that name exists, else a path."""
    from .catalog import named_corpus

    if isinstance(path, str) and (is_url(path) or path == "-"):
        return path
    return named_corpus(path, sample=sample) or Path(path)


def check_corpus_paths(paths: Sequence[object], options: ReadOptions) -> None:
    """Standard input can be read once, only when it is open, and --lang names its language."""
    stdin = [p for p in paths if p == "-"]
    if len(stdin) > 1:
        raise CorpusError("-: standard input is given twice as a corpus; it can be read once")
    if options.stdin_lang is not None and not stdin:
        raise CorpusError(f"--lang {options.stdin_lang}: names the language of standard input, but no corpus is "
                          "`-`; a file's language comes from its name (ben_Beng.txt) or its folder")
    if stdin:
        import sys
        if sys.stdin is None or getattr(sys.stdin, "closed", False):
            raise CorpusError("-: standard input is closed, so there is nothing to read; pipe the corpus in "
                              "(zcat x.gz | fertility audit - --lang ben_Beng) or give a file")
        if options.stdin_lang is not None:
            check_language_name(options.stdin_lang, "--lang")


def corpus_sources(root: Path | str | NamedCorpus, options: ReadOptions) -> list[Source]:
    """The files a corpus argument (as `corpus_root` gives it) stands for, in reading order."""
    if root == "-":
        return [stdin_source(options)]
    if isinstance(root, str):
        found = _remote(root, lambda: url_sources(root))
        return [dataclasses.replace(source, open=lambda opener=source.open, name=source.name:
                                    _remote(name, opener)) for source in found]
    if not isinstance(root, Path):  # a named corpus (flores, code:python ...), already fetched
        return root.sources()
    return [local_source(file, root) for file in find_files(root)]


def _remote(url: str, call):
    """An fsspec backend's failure, whatever its class (huggingface_hub's httpx raises a bare
    Exception without a network), as one line naming the URL."""
    try:
        return call()
    except FertilityError:
        raise
    except Exception as err:  # noqa: BLE001 - a remote file system's error is any class
        reason = (str(err).strip().splitlines() or [""])[0][:200]
        raise CorpusError(f"{url}: cannot reach it ({type(err).__name__}: {reason}); remote corpora need "
                          "the network (or give a local copy)") from None


def _is_text(path: Path) -> bool:
    """A regular corpus file (`.txt`, `.jsonl.gz`, `.parquet`...), whatever the case of its
    suffix (`ben_Beng.TXT`)."""
    return is_corpus_file(path.name) and path.is_file()


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
        _refuse_device(path)
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
                          f"e.g. ben_Beng.txt, or split folders such as dev/ and devtest/; "
                          f"or .jsonl, .parquet, .arrow, plain or compressed)")
    return files


def _refuse_device(path: Path) -> None:
    """A device other than a terminal is no corpus: /dev/zero and /dev/urandom never end and
    hold no text (a terminal, as /dev/stdin, is read like a pipe)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        try:
            with path.open("rb") as handle:
                if handle.isatty():
                    return
        except OSError:
            pass
        raise CorpusError(f"{path}: a device, not a corpus file (fertility reads files, folders, pipes and "
                          "standard input)")
