"""Language names: which name is a language, and the language a corpus file's name gives.

A corpus names its languages by file or folder (`ben_Beng.txt`, `ben/`), by `--lang` or by a
record's field, and every such name is checked here. A bare name counts as a language only if
it is an ISO 639 code (`new` is Newari, `foo` is a naming slip), so the codes ship as package
data: `data/iso639.txt`, generated from Debian's iso-codes 4.15.0 (ISO 639-1, 639-2 with
bibliographic codes, 639-3 and 639-5 collective codes): 185 two-letter and 8046 three-letter
codes, one a line, read once on first use.
"""

from __future__ import annotations

import warnings
from functools import cache
from importlib import resources
from pathlib import PurePath

import regex

from fertility.errors import CorpusError, FertilityWarning
from fertility.text.units import CODE, is_known_script

from .readers import split_suffix

# The all-languages row of every table and audit JSON (results.ALL): a language of that name
# would give a second one, which `report` and `compare` rightly refuse. Lower-case `all` is a
# language (ISO 639-3: Allar, of Kerala), so only this exact name is reserved.
RESERVED_LANGUAGE = "ALL"
_LANG_KEY = regex.compile(r"^(?P<lang>[a-z]{2,3})(?:[_-](?P<script>[A-Z][a-z]{3}))?$")
_CODE_KEY = regex.compile(r"^[a-z][a-z0-9]*_Code$")  # programming languages: python_Code, cpp_Code


@cache
def iso639_codes() -> frozenset[str]:
    """Every ISO 639 code (two and three letters), from the package's data file."""
    text = resources.files(__package__).joinpath("data", "iso639.txt").read_text(encoding="ascii")
    return frozenset(text.split())


def language_key(name: str) -> tuple[str, str | None] | None:
    """(key, declared script) if `name` is a language key (`ben_Beng`, `bn`), else None.

    A bare name must be an ISO 639 code (`foo` and `new` look alike, only one is a language);
    with a script (`xyz_Latn`) the name plainly means a language, whatever the code.
    """
    if _CODE_KEY.match(name):
        return name, CODE
    match = _LANG_KEY.match(name)
    if not match:
        return None
    script = match["script"]
    if script and not is_known_script(script):
        return None
    if not script and match["lang"] not in iso639_codes():
        return None
    return name, script


def check_language_name(lang: str, where: str) -> None:
    """Every language name, however it was given (a file or folder name, --lang, a record's
    field), is checked here once, when it is first seen."""
    if lang == RESERVED_LANGUAGE:
        raise CorpusError(f"{where}: {RESERVED_LANGUAGE!r} cannot name a language: it is the name of the "
                          "all-languages row; name the language by its code (e.g. eng_Latn)")
    if not lang.strip() or any(ord(c) < 32 or ord(c) == 127 for c in lang):
        raise CorpusError(f"{where}: {lang!r} cannot name a language (empty, or with a control character)")


def language_of(path: PurePath, root: PurePath | None = None) -> tuple[str, str | None]:
    """Language key and declared script: `ben_Beng.txt` -> (ben_Beng, Beng).

    A file whose name is no language key takes the nearest folder below `root` that is one
    (`mono/ben/news/x.txt` -> ben); failing that it keeps its stem, with a warning, since a
    language called `notes` is most likely a naming slip. Undeclared scripts are detected from
    the text later.
    """
    stem, fmt, _ = split_suffix(path.name)
    stem = stem if fmt else path.stem
    found = language_key(stem)
    if found:
        return found
    if root is not None and root != path:
        for folder in path.parents:
            found = language_key(folder.name.rpartition("=")[2])  # Hive partitions: lang=ben_Beng/
            if found:
                return found
            if folder == root:
                break
    warnings.warn(f"{path}: {stem!r} is not a language code (like ben_Beng or bn), so its text is "
                  f"counted as language {stem!r}; to name the language, rename the file (e.g. "
                  "ben_Beng.txt) or put it in a folder named after the language (e.g. ben_Beng/)",
                  FertilityWarning, stacklevel=2)
    return stem, None
