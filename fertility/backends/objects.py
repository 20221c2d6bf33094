"""Tokenizer objects a notebook already holds: a `tokenizers.Tokenizer`, a `tiktoken.Encoding`, a
`sentencepiece.SentencePieceProcessor`, a transformers tokenizer (fast, or slow where transformers
can convert it).

Each is measured through the same backend class as its file (so counts are cell for cell those of
the file), from a copy: an audit switches padding and truncation off, and must not do that to the
caller's object. The signature says it came from memory and pins it by a hash of its content (the
serialized tokenizer, the ranks in `.tiktoken` form, the model proto: the last two are the very
bytes of the file it was loaded from). transformers is never imported here unless the object
passed is one of its tokenizers.
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import Any

import tokenizers

from fertility.errors import ArgumentTypeError, TokenizerError, described

from . import Tokenizer
from ._hf import HFTokenizer

ACCEPTED = ("a spec string (path, scheme:reference, hub id, model alias or baseline), a tokenizers.Tokenizer, "
            "a tiktoken.Encoding, a sentencepiece.SentencePieceProcessor, a transformers tokenizer, "
            "or a tokenizer fertility.load_tokenizer returned")


def _classes(value: object) -> set[str]:
    """Fully qualified names of the object's classes: duck typing without importing a library
    the caller did not use."""
    return {f"{kind.__module__}.{kind.__qualname__}" for kind in type(value).__mro__}


def from_object(value: Any) -> Tokenizer:
    """A fertility tokenizer measuring as `value` does, or an ArgumentTypeError naming it."""
    classes = _classes(value)
    if "tokenizers.Tokenizer" in classes:
        return _hf_object(value, kind="tokenizers.Tokenizer")
    if "tiktoken.core.Encoding" in classes:
        return _tiktoken_object(value)
    if "sentencepiece.SentencePieceProcessor" in classes:
        return _spm_object(value)
    if any(name.startswith("transformers.") and name.endswith(".PreTrainedTokenizerBase") for name in classes):
        return _transformers_object(value)
    raise ArgumentTypeError(f"cannot audit a tokenizer given as {described(value)}; accepted: {ACCEPTED}")


class InMemoryHF(HFTokenizer):
    """A copy of a `tokenizers.Tokenizer` object, signed by the hash of its serialized form."""

    def __init__(self, built: tokenizers.Tokenizer, *, name: str, kind: str, digest: str, extra: dict[str, str]):
        super().__init__(Path(f"<in-memory {kind}>"), name=name, built=built)
        self.kind, self.digest, self.extra = kind, digest, extra

    def info(self) -> dict[str, str]:
        built = self.tokenizer
        return {"backend": "hf", "source": f"in memory: {self.kind}", "sha256": f"{self.digest} (serialized tokenizer)",
                "model": type(built.model).__name__, "vocab_size": str(built.get_vocab_size(with_added_tokens=True)),
                "padding": "disabled" if self._had_padding else "off",
                "truncation": "disabled" if self._had_truncation else "off",
                "special_tokens": "not added, not recognised in text",
                "library": f"tokenizers {tokenizers.__version__}", **self.dropout_info(), **self.extra}


def _hf_object(tokenizer: Any, *, kind: str, name: str | None = None, extra: dict[str, str] | None = None) -> Tokenizer:
    try:
        serialized = tokenizer.to_str()
        copy = tokenizers.Tokenizer.from_str(serialized)
    except Exception as err:  # noqa: BLE001 - the Rust side raises plain Exception (custom Python parts)
        raise TokenizerError(f"in-memory {kind}: cannot be copied for counting ({str(err).splitlines()[0][:200]}); "
                             "a custom Python pre-tokenizer or normalizer cannot be serialized: save the "
                             "tokenizer to a tokenizer.json without it") from None
    digest = hashlib.sha256(serialized.encode("utf-8")).hexdigest()
    model = type(copy.model).__name__
    label = name or f"{model}-{copy.get_vocab_size(with_added_tokens=True)}@{digest[:8]}"
    return InMemoryHF(copy, name=label, kind=kind, digest=digest, extra=extra or {})


def _tiktoken_object(encoding: Any) -> Tokenizer:
    """Built from the Encoding's ranks and split pattern; its special tokens are never counted
    (as for files: encode_ordinary). The ranks written as a `.tiktoken` file give that file's
    SHA-256, so a named encoding is recognised by the same hash as its file."""
    from ._tiktoken import KNOWN_RANK_FILES, RUNTIME_NORMALIZATION, TiktokenTokenizer

    try:
        ranks: dict[bytes, int] = dict(encoding._mergeable_ranks)
        pattern: str = encoding._pat_str
        name: str = encoding.name
    except AttributeError as err:  # a tiktoken whose Encoding keeps them elsewhere
        raise TokenizerError(f"in-memory tiktoken.Encoding: this tiktoken version does not expose its ranks "
                             f"({err}); pass the .tiktoken file instead") from None
    ordered = sorted(ranks.items(), key=lambda item: item[1])
    digest = hashlib.sha256(b"".join(base64.b64encode(token) + b" " + str(rank).encode() + b"\n"
                                     for token, rank in ordered)).hexdigest()
    known_name, known_pattern = KNOWN_RANK_FILES.get(digest, (None, None))
    pattern_name = known_name if known_pattern == pattern else "the Encoding's own pat_str"
    tokenizer = TiktokenTokenizer(name=name, ranks=ranks, pattern=pattern, pattern_name=pattern_name or "",
                                  source=f"in memory: tiktoken.Encoding {name!r}",
                                  sha256=f"{digest} (ranks as a .tiktoken file)")
    tokenizer.runtime_normalization = RUNTIME_NORMALIZATION.get(digest)
    return tokenizer


def _spm_object(processor: Any) -> Tokenizer:
    """A copy loaded from the processor's model proto (the bytes of its .model file), so options
    set on the caller's object (BOS/EOS, sampling) play no part, as for a file."""
    from ._spm import SPMTokenizer

    try:
        proto = processor.serialized_model_proto()
    except Exception as err:  # noqa: BLE001 - an unloaded processor raises from C++
        raise TokenizerError(f"in-memory SentencePieceProcessor: no model loaded ({err})") from None
    if not proto:
        raise TokenizerError("in-memory SentencePieceProcessor: no model loaded (load a .model file first)")
    digest = hashlib.sha256(proto).hexdigest()
    return SPMTokenizer(Path(f"<in-memory SentencePieceProcessor {digest[:8]}>"), model_proto=proto,
                        name=f"sentencepiece-{processor.get_piece_size()}@{digest[:8]}",
                        source="in memory: sentencepiece.SentencePieceProcessor", sha256=digest)


def _transformers_object(tokenizer: Any) -> Tokenizer:
    """A fast tokenizer counts with its `backend_tokenizer` (as a tokenizer folder does); a slow
    one with the fast form transformers' own converter makes of it."""
    import transformers

    class_name = type(tokenizer).__name__
    built = getattr(tokenizer, "backend_tokenizer", None)
    how = "backend_tokenizer"
    if built is None:
        try:
            from transformers.convert_slow_tokenizer import convert_slow_tokenizer
            built = convert_slow_tokenizer(tokenizer)
            how = "converted from the slow tokenizer"
        except Exception as err:  # noqa: BLE001 - transformers raises many types for unconvertible classes
            raise TokenizerError(f"in-memory {class_name}: a slow tokenizer transformers cannot convert to a "
                                 f"fast one ({str(err).splitlines()[0][:200] if str(err) else type(err).__name__})"
                                 "; pass its tokenizer files instead") from None
    source = str(getattr(tokenizer, "name_or_path", "") or "")
    name = (Path(source).name if source and Path(source).exists() else source) or class_name
    return _hf_object(built, kind=f"transformers {class_name}", name=name,
                      extra={"backend": "transformers", "model": f"{class_name} ({how})",
                             "library": f"transformers {transformers.__version__}, tokenizers {tokenizers.__version__}"})


__all__ = ["ACCEPTED", "from_object"]
