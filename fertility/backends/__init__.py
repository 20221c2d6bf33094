"""Tokenizer backends behind one small protocol, found through a name -> "module:attr" registry.

A spec is `scheme:reference` (`hf:path/tokenizer.json`, `spm:x.model`, `tiktoken:cl100k_base`,
`tekken:tekken.json`, `gguf:model.gguf`) or a baseline name (`bytes`, `chars`, `graphemes`). A plain existing
path is recognised by its content; otherwise a model name tiktoken knows (`gpt-4o`) is its encoding and
`org/name[@revision]` a hub repository (`named.py`, `hub.py`). Backend modules are imported only when used.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Protocol, runtime_checkable

from fertility.errors import TokenizerError, UsageError

from .formats import folder_tokenizer, sniff_format
from .vocabularies import Vocabulary

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
    """What an audit needs from a tokenizer: token spans and the settings that produced them.

    Every backend implements all of it, most of it by inheriting `TokenizerBase`'s defaults, so
    that no caller has to ask whether a tokenizer can do something (a wrapper forwards each
    member to the tokenizer it wraps)."""

    name: str

    @property
    def runtime_normalization(self) -> tuple[str, str] | None:
        """(form, why): the Unicode normalization the tokenizer's own runtime applies before
        its model (e.g. Qwen's NFC), which the file alone does not say; None when the runtime
        applies none or it is unknown."""
        ...

    def encode(self, texts: list[str]) -> list[Encoded]:
        """For each text, its tokens' byte spans; no special tokens added or recognised."""
        ...

    def encode_many(self, texts: list[str]) -> Tokens:
        """The same tokens for a whole batch, laid end to end: the engine's call, which a
        backend answers from its library's batch call without a Python object per token
        (`spans.concatenate` of `encode` where the library has nothing faster)."""
        ...

    def encode_checked(self, texts: list[str]) -> tuple[Tokens, FastCheck | None]:
        """`encode_many`, through a fast path where one is on, with how its self-check went
        (None: no fast path; see FastCheck)."""
        ...

    def count_tokens(self, texts: list[str]) -> list[int]:
        """Tokens per text, where no span is needed (normalization evidence)."""
        ...

    def vocabulary(self) -> Vocabulary | None:
        """Every id of the vocabulary with its bytes and kind (vocabularies.py), which vocab.py
        reads for the allocation by script and token_stats for the Rényi efficiency; None when
        there is none (the baselines)."""
        ...

    def info(self) -> dict[str, str]:
        """Signature fragment: backend, source, file hash, library version, settings."""
        ...

    def pre_tokenizer(self) -> PreTokenizer | None:
        """The split applied before the model, or None when there is none (SentencePiece)."""
        ...


class TokenizerBase:
    """The defaults of the protocol's optional parts, for a backend (or your own tokenizer) to
    inherit: it then needs only `name`, `encode`, `encode_many`, `info` and `pre_tokenizer`."""

    runtime_normalization: tuple[str, str] | None = None

    def encode_many(self, texts: list[str]) -> Tokens:  # overridden by every backend
        raise NotImplementedError

    def encode_checked(self, texts: list[str]) -> tuple[Tokens, FastCheck | None]:
        return self.encode_many(texts), None

    def count_tokens(self, texts: list[str]) -> list[int]:
        return self.encode_many(texts).counts.tolist() if texts else []

    def vocabulary(self) -> Vocabulary | None:
        return None

    def __repr__(self) -> str:  # object's default named a private module and an address
        return f"<{type(self).__name__} {getattr(self, 'name', '?')!r}>"


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
    from .named import Described

    tokenizer = _load_spec(spec, pattern)
    seen_as = effective_form(tokenizer, form)
    off = "--exact-library" if exact_library else \
        f"the text is normalized ({seen_as.upper()}) before the model" if seen_as else None
    if isinstance(tokenizer, Described):  # a model alias or hub id: the fast path sees the backend it names
        return apply(Described(with_fast_path(tokenizer.inner, off=off), name=tokenizer.name, extra=tokenizer.extra),
                     form)
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
    from ._tiktoken import NAMED_ENCODINGS

    if spec in NAMED_ENCODINGS:  # a tiktoken encoding name is not a model name: say the spec that loads it
        raise TokenizerError(f"{spec}: no such file or directory; tiktoken's encoding of that name is the spec "
                             f"tiktoken:{spec}")
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
