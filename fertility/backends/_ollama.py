"""Ollama models: a name resolves through the store's manifest to the GGUF blob that holds the
tokenizer, and never to a file outside the store."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from fertility.errors import TokenizerError

from ._gguf import GGUFTokenizer


def ollama_models_dir() -> Path:
    return Path(os.environ.get("OLLAMA_MODELS") or Path.home() / ".ollama" / "models")


OLLAMA_MODEL_LAYER = "application/vnd.ollama.image.model"
_OLLAMA_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_OLLAMA_NAME_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")  # no "..", no "/" or "\\" inside
MAX_MANIFEST_BYTES = 1 << 20  # a manifest is a few hundred bytes of JSON


def ollama_manifest(name: str) -> Path:
    """`llama3.2`, `llama3.2:1b`, `user/model:tag` or `host/namespace/model:tag` -> manifest path,
    always inside the store's `manifests/` (each part a plain name, never `..`)."""
    model, _, tag = name.partition(":")
    parts = model.split("/")
    if len(parts) > 3 or not all(_OLLAMA_NAME_PART.fullmatch(p) for p in [*parts, tag or "latest"]):
        raise TokenizerError(f"ollama:{name}: not an Ollama model name (MODEL, MODEL:TAG, NAMESPACE/MODEL:TAG or "
                             "HOST/NAMESPACE/MODEL:TAG; letters, digits, '.', '_' and '-')")
    if len(parts) == 1:
        parts = ["registry.ollama.ai", "library", *parts]
    elif len(parts) == 2:
        parts = ["registry.ollama.ai", *parts]
    return ollama_models_dir().joinpath("manifests", *parts, tag or "latest")


def _manifest_layers(manifest: Path, name: str) -> list[dict]:
    """The manifest's layers, each an object with a string mediaType; one line for anything else."""
    def bad(problem: str) -> TokenizerError:
        return TokenizerError(f"{manifest}: not an Ollama manifest ({problem})")
    try:
        if not manifest.is_file():  # a folder, a FIFO (which would block) or a device
            if manifest.exists():
                raise bad("not a regular file")
            raise OSError
        with manifest.open("rb") as handle:
            data = handle.read(MAX_MANIFEST_BYTES + 1)
    except OSError:
        raise TokenizerError(f"ollama:{name}: not in the local Ollama store ({ollama_models_dir()}); "
                             f"we never download: run `ollama pull {name}` first") from None
    if len(data) > MAX_MANIFEST_BYTES:
        raise bad(f"larger than {MAX_MANIFEST_BYTES:,} bytes")
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        raise bad(f"not JSON: {err}") from None
    except RecursionError:
        raise bad("not JSON: nested too deeply") from None
    if not isinstance(document, dict):
        raise bad(f"a JSON {type(document).__name__}, not an object")
    layers = document.get("layers")
    if not isinstance(layers, list):
        raise bad("no 'layers' list" if layers is None else f"'layers' is {type(layers).__name__}, not a list")
    for number, layer in enumerate(layers, start=1):
        if not isinstance(layer, dict):
            raise bad(f"layer {number} is {type(layer).__name__}, not an object")
        if not isinstance(layer.get("mediaType"), str):
            raise bad(f"layer {number} has no mediaType")
    return layers


def ollama_blob(name: str) -> Path:
    """The GGUF blob of a pulled model: its manifest's one model layer, whose digest must be
    `sha256:` and 64 hex digits and name a file inside the store's `blobs/`."""
    manifest = ollama_manifest(name)
    models = [layer for layer in _manifest_layers(manifest, name) if layer["mediaType"] == OLLAMA_MODEL_LAYER]
    if len(models) != 1:
        raise TokenizerError(f"{manifest}: not an Ollama manifest ({len(models)} layers of type "
                             f"{OLLAMA_MODEL_LAYER}; a model has one)")
    digest = models[0].get("digest")
    if not isinstance(digest, str) or not _OLLAMA_DIGEST.fullmatch(digest):
        raise TokenizerError(f"{manifest}: the model layer's digest {digest!r:.80} is not sha256: and 64 "
                             "lowercase hex digits")
    store = ollama_models_dir() / "blobs"
    blob = store / digest.replace(":", "-")
    if not os.path.realpath(blob).startswith(os.path.realpath(store) + os.sep):
        raise TokenizerError(f"{manifest}: its model blob {blob} is a link to a file outside the store")
    if not blob.is_file():
        raise TokenizerError(f"ollama:{name}: its model blob {blob} is missing from the store")
    return blob


def ollama_names() -> list[str]:
    """Every model in the local Ollama store, as `ollama list` names them."""
    root = ollama_models_dir() / "manifests"
    names = []
    for manifest in sorted(p for p in root.glob("*/*/*/*") if p.is_file()) if root.is_dir() else []:
        host, namespace, model, tag = manifest.relative_to(root).parts
        prefix = "" if (host, namespace) == ("registry.ollama.ai", "library") else (
            f"{namespace}/" if host == "registry.ollama.ai" else f"{host}/{namespace}/")
        names.append(f"{prefix}{model}:{tag}")
    return names


def load_ollama(reference: str, *, pattern: str | None = None) -> GGUFTokenizer:
    """A model pulled by Ollama: its manifest's model layer is a GGUF blob (never downloaded)."""
    tokenizer = GGUFTokenizer(ollama_blob(reference))
    tokenizer.name = reference if ":" in reference else f"{reference}:latest"
    return tokenizer
