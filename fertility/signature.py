"""What produced a number: tokenizers, corpus, counting settings, library versions.

Rendered like sacrebleu's signatures, `key:value|key:value`, with fertility's version last.
Two results with different signatures (apart from tokenizers) must not be compared.
"""

from __future__ import annotations

import platform
from importlib import metadata

from .corpus import Corpus
from .text import segmenter_info
from .version import __version__

_LIBRARIES = ("tokenizers", "sentencepiece", "tiktoken", "regex")


def library_versions() -> dict[str, str]:
    versions = {}
    for name in _LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "absent"
    return versions


def build_signature(tokenizer_infos: dict[str, dict[str, str]], corpus: Corpus) -> dict:
    seg = segmenter_info()
    return {
        "tokenizers": tokenizer_infos,
        "corpus": {
            "sha256": corpus.sha256,
            "files": len(corpus.files),
            "languages": len(corpus.scripts),
            "documents": len(corpus.documents),
        },
        "doc_mode": corpus.doc_mode,
        "normalization": "none",
        "words": "whitespace-separated (\\S+); not counted for scripts written without spaces",
        "segmenter": seg["segmenter"],
        "segmenter_unicode": seg["segmenter_unicode"],
        "indic_conjunct_clusters": seg["indic_conjunct_clusters"],
        "python": platform.python_version(),
        "python_unicodedata": seg["python_unicodedata"],
        "libraries": library_versions(),
        "fertility": __version__,
    }


def counting_settings(signature: dict) -> dict:
    """The parts that must agree for two results to be comparable (all but the tokenizers)."""
    keys = ("corpus", "doc_mode", "normalization", "words", "segmenter", "segmenter_unicode")
    return {key: signature.get(key) for key in keys}


def short_signature(signature: dict) -> str:
    parts = []
    for name, info in signature["tokenizers"].items():
        digest = info.get("sha256", "")[:8]
        parts.append(f"tok:{name}" + (f"@{digest}" if digest else ""))
    parts += [
        f"corpus:{signature['corpus']['sha256'][:12]}",
        f"docs:{signature['doc_mode']}",
        f"norm:{signature['normalization']}",
        f"seg:regex-{signature['libraries'].get('regex')}/U{signature['segmenter_unicode']}",
        f"version:{signature['fertility']}",
    ]
    return "|".join(parts)
