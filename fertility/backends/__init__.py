"""Tokenizer backends behind one small protocol, found through a name -> "module:attr" registry.

A spec is `scheme:reference` (`hf:path/tokenizer.json`, `spm:x.model`, `tiktoken:cl100k_base`,
`tekken:tekken.json`, `gguf:model.gguf`) or a baseline name (`bytes`, `chars`, `graphemes`). A plain existing
path is recognised by its content; otherwise a model name tiktoken knows (`gpt-4o`) is its encoding and
`org/name[@revision]` a hub repository (`named.py`, `hub.py`). Backend modules are imported only when used.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Protocol, runtime_checkable

from fertility.errors import TokenizerError, UsageError

if TYPE_CHECKING:  # annotations only: `fertility --help` starts without numpy
    import numpy as np

# Every backend module exposes `load(reference, *, pattern=None) -> Tokenizer`.
BACKENDS: dict[str, str] = {
    "hf": "fertility.backends._hf:load",
    "spm": "fertility.backends._spm:load",
    "tiktoken": "fertility.backends._tiktoken:load",
    "tekken": "fertility.backends._tiktoken:load_tekken",
    "gguf": "fertility.backends._gguf:load",
    "ollama": "fertility.backends._ollama:load_ollama",
    "transformers": "fertility.backends._transformers:load",
}
BASELINES: dict[str, str] = {
    "bytes": "fertility.backends._baselines:Bytes",
    "chars": "fertility.backends._baselines:Chars",
    "graphemes": "fertility.backends._baselines:Graphemes",
}
DEFAULT_TOKENIZERS = ("tiktoken:cl100k_base",)


class Encoded(NamedTuple):
    """One text's tokens as UTF-8 byte spans, in text order, with what kind of token each is."""

    starts: np.ndarray
    ends: np.ndarray
    unknown: np.ndarray | None = None  # bool per token: the unknown token (text lost)
    byte_fallback: np.ndarray | None = None  # bool per token: raw bytes, not whole characters
    ids: np.ndarray | None = None  # the token ids, when the backend has a vocabulary


class Tokens(NamedTuple):
    """The tokens of a batch of texts, laid end to end: spans in the texts' concatenation.

    `counts[i]` tokens belong to text i, in order. Spans are UTF-8 byte offsets, or character
    offsets when `in_chars` (the engine converts them with the character table it already has).
    Character offsets give every byte piece of one character that whole character's span;
    `piece_bytes` (per token, the bytes of text a byte token stands for; -1 for tokens of whole
    characters) lets `_common.exact_piece_spans` give each piece its own bytes after that.
    """

    counts: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    unknown: np.ndarray | None = None
    byte_fallback: np.ndarray | None = None
    in_chars: bool = False
    ids: np.ndarray | None = None  # token ids (Rényi efficiency, unseen tokens), when known
    tiled: bool = False  # spans laid end to end by construction: already in text order
    piece_bytes: np.ndarray | None = None  # with in_chars: see above


class FastCheck(NamedTuple):
    """How a fast path's tokens of one batch compared with the library's (the arbiter). A
    tokenizer with a fast path offers `encode_checked(texts) -> (Tokens, FastCheck | None)`
    beside `encode_many` (None: its fast path is off); the engine counts the outcomes."""

    used: bool  # the fast path's tokens, which passed the check; else the library's
    difference: str | None = None  # what differed, when the library's tokens replaced them
    text: int | None = None  # the batch's text where it differed first


class PreTokenizer(NamedTuple):
    """A tokenizer's own pre-tokenization: no merge can cross the pieces it cuts."""

    name: str
    # text -> (the text as the splitter saw it, after any normalizer; char spans of the pieces)
    split: Callable[[str], tuple[str, list[tuple[int, int]]]]
    # optional, faster: text -> the lengths of its pieces in order, for a splitter that sees the
    # text unchanged; they may leave gaps, which the caller detects (then it uses `split`)
    lengths: Callable[[str], list[int]] | None = None


@runtime_checkable
class Tokenizer(Protocol):
    """What an audit needs from a tokenizer: token spans and the settings that produced them."""

    name: str

    def encode(self, texts: list[str]) -> list[Encoded]:
        """For each text, its tokens' byte spans; no special tokens added or recognised."""
        ...

    def encode_many(self, texts: list[str]) -> Tokens:
        """The same tokens for a whole batch, laid end to end: the engine's call, which a
        backend answers from its library's batch call without a Python object per token
        (`spans.concatenate` of `encode` where the library has nothing faster)."""
        ...

    def info(self) -> dict[str, str]:
        """Signature fragment: backend, source, file hash, library version, settings."""
        ...

    def pre_tokenizer(self) -> PreTokenizer | None:
        """The split applied before the model, or None when there is none (SentencePiece)."""
        ...


def _resolve(target: str):
    module, attr = target.split(":")
    return getattr(importlib.import_module(module), attr)


def known_schemes() -> list[str]:
    return [*BACKENDS, *BASELINES]


def load_tokenizer(spec: str, *, pattern: str | None = None, normalize: str | None = None,
                   exact_library: bool = False) -> Tokenizer:
    """Load a tokenizer from a spec; baseline names are reserved, then an existing path wins
    over a `scheme:` prefix. `normalize` (nfc, nfkc, none) overrides the Unicode normalization
    its runtime applies before the file's model; by default it is the runtime's, when known.
    Token ids come from the fast path where it is exact and checked (gigatoken, when
    installed: `_gigatoken`), unless `exact_library`; the signature says which."""
    from ._gigatoken import with_fast_path
    from ._normalize import apply, check_form, effective_form

    form = check_form(normalize)
    if spec in BASELINES:  # baselines measure the raw text's own units
        return _resolve(BASELINES[spec])()
    tokenizer = _load_spec(spec, pattern)
    seen_as = effective_form(tokenizer, form)
    off = "--exact-library" if exact_library else \
        f"the text is normalized ({seen_as.upper()}) before the model" if seen_as else None
    return apply(with_fast_path(tokenizer, off=off), form)


def adapt_object(given: object, *, normalize: str | None = None) -> Tokenizer:
    """A library's tokenizer object (`tokenizers`, tiktoken, SentencePiece, transformers) as a
    fertility tokenizer (`objects.py`), behind the runtime's or the user's normalization."""
    from ._normalize import apply, check_form
    from .objects import from_object

    return apply(from_object(given), check_form(normalize))


def spec_path(spec: str) -> Path | None:
    """The local file or folder a tokenizer spec reads, if it names one (for the checks made
    before any work: nothing is opened or imported)."""
    if not spec.strip() or spec in BASELINES:
        return None
    if Path(spec).exists():
        return Path(spec)
    scheme, sep, reference = spec.partition(":")
    if sep and scheme in BACKENDS and reference.strip() and Path(reference).exists():
        return Path(reference)
    return None


def _load_spec(spec: str, pattern: str | None) -> Tokenizer:
    """An existing path first, then `scheme:reference`, a model alias (`gpt-4o`), a hub id
    (`org/name[@revision]`, downloaded once); `hf:org/name` is a hub id too."""
    from fertility.hub.download import parse_hub_id

    from .named import encoding_for, load_alias, load_from_hub

    if not spec.strip():
        raise UsageError("empty tokenizer spec (-t ''): give a path, SCHEME:REF or a baseline name")
    if spec in BASELINES:
        return _resolve(BASELINES[spec])()
    if Path(spec).exists():
        if not Path(spec).is_file() and not Path(spec).is_dir():
            raise TokenizerError(f"{spec}: not a regular file (a pipe or device); a tokenizer file is "
                                 "read more than once, so save it to a file first")
        if Path(spec).is_dir():
            return load_folder(Path(spec), spec=spec, pattern=pattern)
        return _load(BACKENDS[sniff_format(Path(spec))], spec, spec, pattern)
    scheme, sep, reference = spec.partition(":")
    if sep and scheme in ("hf", "tiktoken") and not Path(reference).exists():
        if scheme == "hf" and parse_hub_id(reference) is not None:
            return load_from_hub(reference, spec=spec, pattern=pattern)
        if scheme == "tiktoken" and (encoding := encoding_for(reference)) is not None:
            return load_alias(reference, encoding)
    if sep and scheme in BACKENDS:
        if not reference.strip():
            raise TokenizerError(f"{spec}: nothing after '{scheme}:'")
        return _load(BACKENDS[scheme], spec, reference, pattern)
    if (encoding := encoding_for(spec)) is not None:
        return load_alias(spec, encoding)
    if parse_hub_id(spec) is not None:
        return load_from_hub(spec, spec=spec, pattern=pattern)
    if sep and "/" not in scheme and "\\" not in scheme:
        raise TokenizerError(f"{spec}: unknown tokenizer scheme {scheme!r}; "
                             f"known: {', '.join(known_schemes())}")
    raise TokenizerError(f"{spec}: no such file or directory, and not a tokenizer spec "
                         f"(use scheme:reference with one of {', '.join(BACKENDS)}, "
                         f"or a baseline: {', '.join(BASELINES)})")


def load_folder(folder: Path, *, spec: str, pattern: str | None) -> Tokenizer:
    """A model folder (or hub snapshot): the tokenizer file it holds, by its own backend."""
    found = folder_tokenizer(folder)
    if found is not None:
        return _load(BACKENDS[found[0]], spec, str(found[1]), pattern)
    return _load(BACKENDS[sniff_format(folder)], spec, str(folder), pattern)


def _load(target: str, spec: str, reference: str, pattern: str | None) -> Tokenizer:
    """Call a backend's loader; a native library's panic on a corrupt file names the spec."""
    from ._common import native_errors

    loader = _resolve(target)
    with native_errors(spec):
        return loader(reference, pattern=pattern)


# What a model folder (or hub snapshot) may hold, in the order we use it: scheme, file patterns.
FOLDER_FILES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("hf", ("tokenizer.json",)),
    ("hf", ("vocab.json", "merges.txt")),  # GPT-2 style byte-level BPE, before tokenizer.json existed
    ("tekken", ("tekken.json",)),
    ("spm", ("tokenizer.model",)), ("spm", ("spiece.model",)), ("spm", ("sentencepiece.bpe.model",)),
    ("spm", ("*.model",)), ("spm", ("*.model.v*",)),
    ("tiktoken", ("*.tiktoken",)),
    ("gguf", ("*.gguf",)),
    ("transformers", ("tokenizer_config.json",)),  # vocab.txt (BERT) and other slow-only folders
)


def folder_tokenizer(path: Path) -> tuple[str, Path] | None:
    """(scheme, file or folder to load) for a model folder, else None."""
    for scheme, patterns in FOLDER_FILES:
        found = [sorted(p for p in path.glob(pattern) if p.is_file()) for pattern in patterns]
        if all(found):
            return scheme, (found[0][0] if len(patterns) == 1 else path)
    return None


def sniff_format(path: Path) -> str:
    """Tell a tokenizer file's format from its content, not its name."""
    if path.is_dir():
        found = folder_tokenizer(path)
        if found is None:
            raise TokenizerError(f"{path}: directory holds no tokenizer file (tokenizer.json, vocab.json + "
                                 "merges.txt, a SentencePiece .model, tekken.json, .tiktoken, .gguf or tokenizer_config.json)")
        return found[0]
    try:
        with path.open("rb") as handle:
            head = handle.read(4096)
    except OSError as err:
        raise TokenizerError(f"{path}: cannot read ({err.strerror})") from None
    if not head:
        raise TokenizerError(f"{path}: empty file, not a tokenizer")
    if head[:4] == b"GGUF":  # llama.cpp model files, whatever their name
        return "gguf"
    stripped = head.lstrip()
    if stripped.startswith(b"{"):
        return _sniff_json(path)
    first_line = head.split(b"\n", 1)[0].split()
    if len(first_line) == 2 and first_line[1].isdigit():
        return "tiktoken"
    if head[:1] == b"\x0a":  # protobuf field 1 (pieces), as every SentencePiece model starts
        return "spm"
    raise TokenizerError(f"{path}: unknown tokenizer format (expected a Hugging Face "
                         "tokenizer.json, a SentencePiece .model, a .tiktoken ranks file or "
                         "a Tekken JSON or a GGUF model file)")


def _sniff_json(path: Path) -> str:
    with path.open("rb") as handle:
        head = handle.read(4096)
    if b'"config"' in head and b'"pattern"' in head:  # Tekken writes its config first
        return "tekken"
    if b'"truncation"' in head or b'"added_tokens"' in head:  # tokenizers writes these first
        return "hf"
    from fertility.limits import MAX_TOKENIZER_FILE_BYTES, read_file_capped

    try:
        data = json.loads(read_file_capped(path, MAX_TOKENIZER_FILE_BYTES, "tokenizer file", TokenizerError))
    except (ValueError, UnicodeDecodeError) as err:
        raise TokenizerError(f"{path}: corrupt JSON ({err})") from None
    except RecursionError:
        raise TokenizerError(f"{path}: corrupt JSON (nested too deeply to read)") from None
    if isinstance(data, dict) and "model" in data and "pre_tokenizer" in data:
        return "hf"
    if isinstance(data, dict) and "config" in data and "vocab" in data:
        return "tekken"
    raise TokenizerError(f"{path}: JSON file is neither a Hugging Face tokenizer.json "
                         "(needs 'model') nor a Tekken tokenizer (needs 'config' and 'vocab')")
