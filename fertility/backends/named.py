"""Tokenizers given by name rather than by file: hub repository ids (`org/name[@revision]`) and
model names (`-t gpt-4o` is the encoding tiktoken itself maps that model to).

A hub id fetches only the tokenizer's files (TOKENIZER_FILES, at the repository's top; never
weights) and loads the snapshot as a local folder is; the row is named after the repository and
the signature says which commit and files (`hub_*`). The model table is tiktoken's own (`tiktoken.model`: exact names, then prefixes such as `gpt-4o-` or
`ft:gpt-4`), so fertility never keeps a second copy that could drift. The encoding comes from the
offline sources named encodings always use (tiktoken's cache, an installed package); the row is
named as asked (`gpt-4o`) and the signature gives both the alias and the encoding.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fertility.errors import TokenizerError

if TYPE_CHECKING:
    from . import Tokenizer

# A tokenizer's files at the top of a model repository: what the backends read, and what
# transformers reads beside them (config.json names the tokenizer class of old repositories).
# Weights (.safetensors, .bin, .pth, .gguf ...) match none of them.
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json",
                   "vocab.json", "merges.txt", "vocab.txt", "tekken.json", "*.model", "*.model.v*",
                   "*.tiktoken", "config.json")
TOP_LEVEL_ONLY = ("*/*",)  # a model folder's tokenizer sits at its top; subfolders hold other parts

# Encodings that differ from a named one only in special tokens, which fertility never counts.
SAME_RANKS = {"o200k_harmony": "o200k_base"}


def encoding_for(name: str) -> str | None:
    """The encoding tiktoken maps a model name to, or None when it is no model name it knows."""
    if not name or "/" in name or name.startswith(("tiktoken:", "hf:")):
        return None
    from tiktoken.model import encoding_name_for_model

    try:
        return encoding_name_for_model(name)
    except KeyError:
        return None


def load_alias(name: str, encoding: str) -> Tokenizer:
    """The model's encoding, loaded offline, named after the model."""
    import tiktoken

    from ._tiktoken import NAMED_ENCODINGS, load_named, tiktoken_cache_dir

    counted = SAME_RANKS.get(encoding, encoding)
    if counted not in NAMED_ENCODINGS:
        raise TokenizerError(f"{name}: tiktoken {tiktoken.__version__} maps it to {encoding}, which fertility "
                             f"does not know ({', '.join(n for n in NAMED_ENCODINGS if n != 'gpt2')})")
    try:
        tokenizer = load_named(counted)
    except TokenizerError:
        raise TokenizerError(
            f"{name}: tiktoken maps it to {counted}, which is not available offline here (not in tiktoken's cache "
            f"{tiktoken_cache_dir()} and no installed package bundles it); get it once where there "
            f"is a network with: python -c \"import tiktoken; tiktoken.get_encoding('{counted}')\" (it stays in "
            f"that cache; set TIKTOKEN_CACHE_DIR to keep it elsewhere), or give the file: "
            f"-t tiktoken:path/to/{counted}.tiktoken") from None
    extra = {"alias": name, "encoding": encoding,
             "alias_table": f"tiktoken {tiktoken.__version__} (tiktoken.model)"}
    if counted != encoding:
        extra["counted_as"] = f"{counted} (same ranks and split pattern; only special tokens differ, never counted)"
    return Described(tokenizer, name=name, extra=extra)


class Described:
    """A loaded tokenizer under another name, with more in its signature (where it came from);
    everything else is the loaded tokenizer's own."""

    def __init__(self, inner: Tokenizer, *, name: str, extra: dict[str, Any]):
        self.inner, self.name, self.extra = inner, name, extra

    def __repr__(self) -> str:
        return f"<Described {self.name!r} over {self.inner!r}>"

    def __getattr__(self, attribute: str):
        if attribute == "inner":  # not set yet (unpickling): no recursion
            raise AttributeError(attribute)
        return getattr(self.inner, attribute)

    def encode(self, texts):
        return self.inner.encode(texts)

    def encode_many(self, texts):
        return self.inner.encode_many(texts)

    def encode_checked(self, texts):
        return self.inner.encode_checked(texts)

    def count_tokens(self, texts):
        return self.inner.count_tokens(texts)

    def vocabulary(self):
        return self.inner.vocabulary()

    @property
    def runtime_normalization(self):
        return self.inner.runtime_normalization

    def pre_tokenizer(self):
        return self.inner.pre_tokenizer()

    def info(self) -> dict[str, Any]:
        return {**self.inner.info(), **self.extra}


def load_from_hub(reference: str, *, spec: str, pattern: str | None = None) -> Tokenizer:
    """`org/name[@revision]`: its tokenizer files (downloaded once), loaded as a local folder is."""
    from fertility.hashing import sha256_file
    from fertility.hub.download import fetch, parse_hub_id

    from . import load_folder
    from .formats import folder_tokenizer

    parsed = parse_hub_id(reference)
    if parsed is None:
        raise TokenizerError(f"{spec}: not a hub repository id (org/name, optionally @revision)")
    repo_id, revision = parsed
    snapshot = fetch(repo_id, patterns=TOKENIZER_FILES, ignore=TOP_LEVEL_ONLY, revision=revision, what=spec,
                     usable=lambda folder: folder_tokenizer(folder) is not None)
    found = folder_tokenizer(snapshot.folder)  # also a .gguf the user downloaded into that snapshot
    if found is None:
        raise TokenizerError(f"{spec}: {repo_id} holds no tokenizer file at commit {snapshot.commit[:12]} "
                             "(tokenizer.json, vocab.json + merges.txt, a SentencePiece .model, tekken.json, "
                             ".tiktoken or tokenizer_config.json); weights and .gguf files are never downloaded: "
                             "download a .gguf yourself and give its path")
    tokenizer = load_folder(snapshot.folder, spec=spec, pattern=pattern)
    files = " ".join(f"{name}:{sha256_file(str(snapshot.folder / name))}" for name in snapshot.files)
    extra = {f"hub_{key}": value for key, value in snapshot.describe().items()}
    extra["hub_files"] = files
    extra["hub_spec"] = f"{repo_id}@{snapshot.commit}"  # the spec of an exact rerun
    return Described(tokenizer, name=repo_id, extra=extra)
