"""What produced a number: tokenizers, corpus, counting settings, library versions.

Rendered like sacrebleu's signatures, `key:value|key:value`, with fertility's version last.
Two results with different signatures (apart from tokenizers) must not be compared.
"""

from __future__ import annotations

import platform
import sys
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fertility.version import __version__

if TYPE_CHECKING:
    from fertility.io.corpus import Corpus

_LIBRARIES = ("tokenizers", "sentencepiece", "tiktoken", "regex")
# the parts that must agree for two results to be comparable (all but the tokenizers)
COUNTING_KEYS = ("corpus", "doc_mode", "normalization", "words", "segmenter", "segmenter_unicode")


def library_versions() -> dict[str, str]:
    return {name: _installed_version(name) for name in _LIBRARIES}


def _installed_version(name: str) -> str:
    """The version pip installed, read from its `{name}-{version}.dist-info` folder name (what
    `importlib.metadata.version` says, without parsing each METADATA file: 25 ms at start-up);
    `importlib.metadata` where there is no such folder (eggs, editable installs)."""
    for entry in sys.path:
        try:
            found = sorted(Path(entry or ".").glob(f"{name}-*.dist-info"))
        except OSError:
            continue
        if len(found) == 1:
            return found[0].name[len(name) + 1:-len(".dist-info")]
        if found:  # two versions side by side: let importlib.metadata choose, as Python would
            break
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "absent"


class SignatureError(ValueError):
    """A signature read from a file is not what fertility writes (the caller names the file)."""


@dataclass(frozen=True)
class Signature:
    """The settings behind a result, by name; written as one JSON object (`to_dict`), read back
    with its types checked (`from_dict`). Keys it does not know (the engine's settings, keys of
    newer versions) are kept in `extra`, in order, so that a file read and written again is
    unchanged."""

    tokenizers: dict[str, dict[str, Any]] = field(default_factory=dict)
    corpus: dict[str, Any] = field(default_factory=dict)
    doc_mode: str = ""
    normalization: str = "none"
    words: str = ""
    segmenter: str = ""
    segmenter_unicode: str = ""
    indic_conjunct_clusters: str = ""
    python: str = ""
    python_unicodedata: str = ""
    libraries: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # keys added by newer versions, in order
    fertility: str = __version__

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: every field by name, unknown keys kept, fertility's version last."""
        out: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)
                               if f.name not in ("extra", "fertility")}
        out.update(self.extra)
        out["fertility"] = self.fertility
        return out

    @classmethod
    def from_dict(cls, data: Any) -> Signature:
        """Check types of the known keys (raises SignatureError naming the key)."""
        if isinstance(data, Signature):
            return data
        if not isinstance(data, dict):
            raise SignatureError(f"'signature' is {type(data).__name__}, not an object")
        known = {f.name: f for f in fields(cls)}
        values: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in data.items():
            if key not in known or key == "extra":
                extra[key] = value
                continue
            want = dict if key in ("tokenizers", "corpus", "libraries") else str
            if not isinstance(value, want):
                raise SignatureError(f"signature.{key} is {type(value).__name__}, not "
                                     f"{'an object' if want is dict else 'a string'}")
            values[key] = value
        for name, info in values.get("tokenizers", {}).items():
            if not isinstance(info, dict):
                raise SignatureError(f"signature.tokenizers.{name} is not an object")
        return cls(**values, extra=extra)

    def one(self, name: str) -> Signature:
        """The same settings for one of its tokenizers only."""
        return _replace(self, tokenizers={name: self.tokenizers[name]})

    def counting_settings(self) -> dict[str, Any]:
        data = self.to_dict()
        return {key: data.get(key) for key in COUNTING_KEYS}

    def text_selection(self) -> dict[str, Any]:
        """Which of the corpus's documents were counted, beyond the corpus itself: a sample, one
        shard part, or a merge that lacks shards. The corpus hash is the same for all of them, so
        without this two results counted on different documents would look comparable."""
        merged = self.extra.get("merged_shards")
        incomplete = merged if isinstance(merged, str) and "missing" in merged else None
        return {"sample": self.extra.get("sample"), "shard": self.extra.get("shard"),
                "merged_shards": incomplete}

    def short(self) -> str:
        """`tok:name@sha|corpus:...|docs:...|norm:...|seg:...|version:...`."""
        parts = []
        for name, info in self.tokenizers.items():
            digest = str(info.get("sha256", ""))[:8]
            parts.append(f"tok:{name}" + (f"@{digest}" if digest else ""))
        parts += [
            f"corpus:{str(self.corpus.get('sha256', ''))[:12]}",
            f"docs:{self.doc_mode}",
            f"norm:{self.normalization}",
            f"seg:regex-{self.libraries.get('regex')}/U{self.segmenter_unicode}",
            f"version:{self.fertility}",
        ]
        return "|".join(parts)

    def __str__(self) -> str:
        return self.short()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Signature):
            return self.to_dict() == other.to_dict()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.short())


def _replace(signature: Signature, **changes: Any) -> Signature:
    from dataclasses import replace
    return replace(signature, **changes)


def build_signature(tokenizer_infos: dict[str, dict[str, str]], corpus: Corpus, *,
                    n_documents: int | None = None, **extra: Any) -> Signature:
    """`extra` settings (e.g. a sample size) go after the known ones, before the version;
    `n_documents` counts a streamed corpus, whose documents were not kept."""
    from fertility.text.units import segmenter_info
    seg = segmenter_info()
    return Signature(
        tokenizers=tokenizer_infos,
        corpus={
            "sha256": corpus.sha256,
            "files": len(corpus.files),
            "languages": len(corpus.scripts),
            "documents": len(corpus.documents) if n_documents is None else n_documents,
        },
        doc_mode=corpus.doc_mode,
        normalization="none",
        words="whitespace-separated (\\S+); not counted for scripts written without spaces",
        segmenter=seg["segmenter"],
        segmenter_unicode=seg["segmenter_unicode"],
        indic_conjunct_clusters=seg["indic_conjunct_clusters"],
        python=platform.python_version(),
        python_unicodedata=seg["python_unicodedata"],
        libraries=library_versions(),
        extra=dict(extra),
    )


def fast_path_chunks(fast: int, total: int, differences: int) -> str:
    """A tokenizer's `fast_path_chunks`: of its `total` chunks, how many the fast path counted,
    and how many the library counted because the fast path's tokens differed from its own."""
    return f"{fast} of {total}" + (f" ({differences} differed from the library and were counted by it)"
                                   if differences else "")


def read_fast_path_chunks(text: object) -> tuple[int, int, int] | None:
    """(fast, total, differences) from a `fast_path_chunks` value, or None if it is not one."""
    import re

    found = re.fullmatch(r"(\d+) of (\d+)(?: \((\d+) differed from the library and were counted by it\))?",
                         str(text))
    return None if found is None else (int(found[1]), int(found[2]), int(found[3] or 0))


def check_comparable(sig_a: Signature, sig_b: Signature, *, what: str = "compare") -> None:
    """Counts made on different corpora or settings cannot be set side by side: refuse, naming
    every setting that differs."""
    import json

    from fertility.errors import UsageError

    a = {**sig_a.counting_settings(), **sig_a.text_selection()}
    b = {**sig_b.counting_settings(), **sig_b.text_selection()}
    differing = [key for key in a if a[key] != b[key]]
    if differing:
        detail = "; ".join(f"{key}: {json.dumps(a[key], sort_keys=True)} vs {json.dumps(b[key], sort_keys=True)}"
                           for key in differing)
        hint = ("; merge a sharded audit's parts first (fertility merge)"
                if {"shard", "merged_shards"} & set(differing) else "")
        raise UsageError(f"refusing to {what}: the counts were made on different corpora or settings "
                         f"({detail}){hint}")
