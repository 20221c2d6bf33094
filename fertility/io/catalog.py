"""Named benchmark corpora: `fertility audit -t X flores` after one download, offline after that.

A corpus argument `NAME[:ITEM,...][@REVISION]` that is not an existing path names one of these
datasets on the Hugging Face hub; ITEMs are languages or a split, REVISION a branch, tag or commit
(the bare name uses the commit the cache holds, as hub tokenizers do):

    flores                      FLORES+ devtest, every language (dev: flores:dev)
    flores:ben_Beng,eng_Latn    those languages only (dev and devtest may be named too)
    fineweb2:ben_Beng,hin_Deva  FineWeb-2, a bounded sample per language (train; or test)
    code:python,c,javascript    the-stack-smol by programming language (bare `code`: eight of them)

FLORES+ and the-stack-smol files are small and come whole into the Hugging Face cache.
FineWeb-2 files are gigabytes: only the first row groups of each language's first file are read
(`fineweb.py`, over `remote_parquet.py`), as many as `--sample-docs`/`--sample-bytes` need (else
DEFAULT_DOCS documents), and kept in fertility's cache. Programming languages are languages here: `python_Code`,
with the script `Code`, so their coverage is audited like Bengali's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any

import regex

from fertility.errors import CorpusError
from fertility.hub.download import REVISION

from .fineweb import dataset_commit, first_row_groups
from .readers import ReadOptions, Source, local_source

DEFAULT_DOCS = 1000  # FineWeb-2 documents per language when no --sample-docs/--sample-bytes is given


@dataclass(frozen=True)
class Entry:
    name: str
    repo: str
    title: str
    license: str
    syntax: str


CATALOG: dict[str, Entry] = {
    "flores": Entry("flores", "openlanguagedata/flores_plus",
                    "FLORES+, 997 (dev) / 1,012 (devtest) parallel sentences, ~220 languages",
                    "CC BY-SA 4.0; gated: accept its terms on the dataset page, then set HF_TOKEN",
                    "flores[:dev|devtest][,LANG...]"),
    "fineweb2": Entry("fineweb2", "HuggingFaceFW/fineweb-2",
                      "FineWeb-2 web text, 1,000+ languages (no English); a language's first documents",
                      "ODC-By 1.0, and Common Crawl's terms of use", "fineweb2:LANG[,LANG...][,train|test]"),
    "code": Entry("code", "bigcode/the-stack-smol",
                  "the-stack-smol, 10,000 source files per programming language",
                  "each file's own permissive license, The Stack's terms of use; gated: accept them on the dataset "
                  "page, then set HF_TOKEN", "code[:LANG,...] (python, c, c++, javascript ...; default: eight)"),
}
FLORES_SPLITS = ("dev", "devtest")
FINEWEB_SPLITS = ("train", "test")
DEFAULT_CODE = ("python", "javascript", "java", "c", "c++", "go", "rust", "typescript")
_SPEC = regex.compile(rf"^(?P<name>[a-z0-9]+)(?::(?P<items>[^@/\\]*))?(?:@(?P<revision>{REVISION}))?$")
_LANGUAGE = regex.compile(r"^[a-z]{2,3}_[A-Z][a-z]{3}$")
_CODE_NAME = regex.compile(r"^[a-z0-9][a-z0-9+#-]*$")


def catalog_help() -> str:
    """One line per named corpus, with its license, for `--help` (no import beyond this module)."""
    return "\n".join(f"{e.syntax}\n  {e.repo}: {e.title}\n  license: {e.license}" for e in CATALOG.values())


def code_language(name: str) -> str:
    """The language key of a programming language: `python_Code`, `cpp_Code` (c++), `csharp_Code`."""
    return name.replace("+", "p").replace("#", "sharp").replace("-", "") + "_Code"


def is_catalogue_name(text: str) -> bool:
    """Whether `text` names a catalogue corpus (`flores`, `code:python`), without fetching it."""
    match = _SPEC.match(text)
    return match is not None and match["name"] in CATALOG


def named_corpus(path: str | Path, *, sample: Any = None) -> NamedCorpus | None:
    """The named corpus `path` stands for (downloaded now if needed), or None when it is a path,
    a URL or no catalogue name (an existing path always wins)."""
    text = str(path)
    match = _SPEC.match(text)
    if match is None or match["name"] not in CATALOG or Path(text).exists():
        return None
    entry = CATALOG[match["name"]]
    items = [item.strip() for item in (match["items"] or "").split(",") if item.strip()]
    return {"flores": _flores, "fineweb2": _fineweb2, "code": _code}[entry.name](
        entry, text, items, match["revision"], sample)


@dataclass(frozen=True)
class NamedCorpus:
    """A catalogue corpus resolved to local files: what the corpus reader reads, and what the
    signature records."""

    spec: str
    entry: Entry
    file_sources: tuple[Source, ...]
    record: dict[str, Any]

    def sources(self) -> list[Source]:
        return list(self.file_sources)

    def describe(self) -> dict[str, Any]:
        return {"spec": self.spec, **self.record, "license": self.entry.license}

    def __str__(self) -> str:
        return self.spec


def _source(file: Path, lang: str, text_field: str) -> Source:
    """A downloaded file read with the dataset's own field, under the language the catalogue
    gives it (the source's path is where its language is read from)."""
    return replace(local_source(file, None), path=PurePosixPath(lang) / file.name, root=PurePosixPath(lang),
                   options=ReadOptions(text_field=text_field))


def _split_items(items: list[str], splits: tuple[str, ...], default: str) -> tuple[list[str], list[str]]:
    chosen = [item for item in items if item in splits]
    return chosen or [default], [item for item in items if item not in splits]


def _flores(entry: Entry, spec: str, items: list[str], revision: str | None, sample: Any) -> NamedCorpus:
    from fertility.hub.download import fetch

    splits, langs = _split_items(items, FLORES_SPLITS, "devtest")
    bad = [lang for lang in langs if not _LANGUAGE.match(lang)]
    if bad:
        raise CorpusError(f"{spec}: {', '.join(bad)} is neither a split ({', '.join(FLORES_SPLITS)}) nor a FLORES+ "
                          "language (like ben_Beng, cmn_Hans)")
    patterns = tuple(f"{split}/{lang}.parquet" for split in splits for lang in langs) or \
        tuple(f"{split}/*.parquet" for split in splits)
    snapshot = fetch(entry.repo, repo_type="dataset", revision=revision, patterns=patterns, error=CorpusError, what=spec)
    missing = [p for p in patterns if "*" not in p and not (snapshot.folder / p).is_file()]
    if missing or not snapshot.files:
        raise CorpusError(f"{spec}: {entry.repo} at commit {snapshot.commit[:12]} has no "
                          f"{', '.join(missing or patterns)} (FLORES+ names languages like ben_Beng, cmn_Hans)")
    sources = [_source(snapshot.folder / name, PurePosixPath(name).stem, "text") for name in snapshot.files]
    return NamedCorpus(spec, entry, tuple(sources), {**snapshot.describe(), "splits": splits,
                                                     "files": len(snapshot.files)})


def _code(entry: Entry, spec: str, items: list[str], revision: str | None, sample: Any) -> NamedCorpus:
    from fertility.hub.download import fetch

    known_keys = {"cpp": "c++", "csharp": "c-sharp", "fsharp": "f-sharp", "visualbasic": "visual-basic"}
    names = [known_keys.get(item, item) for item in items] or list(DEFAULT_CODE)
    bad = [name for name in names if not _CODE_NAME.match(name)]
    if bad:
        raise CorpusError(f"{spec}: {', '.join(bad)} is not a programming language name of the-stack-smol "
                          "(python, c, c++, c-sharp, javascript ...)")
    patterns = tuple(f"data/{name}/data.json" for name in names)
    snapshot = fetch(entry.repo, repo_type="dataset", revision=revision, patterns=patterns, error=CorpusError, what=spec)
    missing = [name for name, p in zip(names, patterns) if not (snapshot.folder / p).is_file()]
    if missing:
        raise CorpusError(f"{spec}: {entry.repo} at commit {snapshot.commit[:12]} has no language "
                          f"{', '.join(missing)} (its folders are data/<language>/, e.g. data/c++/)")
    sources = [_source(snapshot.folder / p, code_language(name), "content") for name, p in zip(names, patterns)]
    return NamedCorpus(spec, entry, tuple(sources), {**snapshot.describe(),
                                                     "languages": [code_language(n) for n in names]})


def _fineweb2(entry: Entry, spec: str, items: list[str], revision: str | None, sample: Any) -> NamedCorpus:
    from fertility.hub.download import offline_reason
    from fertility.hub.locations import endpoint

    splits, langs = _split_items(items, FINEWEB_SPLITS, "train")
    if not langs:
        raise CorpusError(f"{spec}: name the languages, e.g. fineweb2:ben_Beng,hin_Deva (FineWeb-2 has over a "
                          "thousand, and no English)")
    bad = [lang for lang in langs if not _LANGUAGE.match(lang)]
    if bad or len(splits) > 1:
        raise CorpusError(f"{spec}: {', '.join(bad) or 'two splits'}: give languages like ben_Beng and at most one "
                          f"split ({', '.join(FINEWEB_SPLITS)})")
    docs = getattr(sample, "docs", None)
    size = getattr(sample, "bytes", None)
    if docs is None and size is None:
        docs = DEFAULT_DOCS
    online = offline_reason() is None
    commit = dataset_commit(entry.repo, revision, online=online, what=spec)
    sources, record = [], {}
    for lang in langs:
        files, rows = first_row_groups(entry.repo, commit, lang, splits[0], docs=docs, size=size, online=online,
                                        what=spec)
        sources += [_source(path, lang, "text") for path in files]
        record[lang] = f"row groups 0-{len(files) - 1} ({sum(rows):,} documents) of its first {splits[0]} file"
    return NamedCorpus(spec, entry, tuple(sources), {"repo": entry.repo, "revision": revision or "main",
                                                     "commit": commit, "endpoint": endpoint(), "split": splits[0],
                                                     "bound": f"{docs:,} documents" if docs else f"{size:,} bytes",
                                                     "sample": record})
