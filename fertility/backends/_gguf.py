"""GGUF backend: the vocabulary inside a llama.cpp model file, counted as llama.cpp counts it.

llama.cpp tokenizes without BOS and without parsing special tokens as we audit; user-defined
tokens are still split out first (as in `llama_vocab::tokenizer_st_partition`). We rebuild its
three tokenizers from the file's metadata as Hugging Face `tokenizers` objects:

- BPE (`tokenizer.ggml.model` = gpt2): byte-level BPE over merges, after the sequence of
  split regexes llama.cpp uses for the file's `tokenizer.ggml.pre` name (src/llama-vocab.cpp);
  an unknown name is refused, never approximated.
- SPM (llama): spaces become "▁", a "▁" prefix when `add_space_prefix`, then the pair whose
  joined text has the highest score is merged first (the merges below are ranked by score),
  and characters outside the vocabulary fall back to `<0xXX>` byte tokens.
- WPM (bert): BERT normalization and punctuation split, greedy longest match per word.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import tokenizers

from fertility.errors import TokenizerError

from . import PreTokenizer
from . import vocabularies as listing
from ._common import display_name, native_errors
from ._gguf_models import _MODELS, _added_tokens, _array, _strings, _token_id
from ._gguf_patterns import BYTE, CONTROL, NORMAL, UNKNOWN, UNUSED
from ._gguf_read import read_metadata
from ._hf import HFEncoding
from .vocabularies import ListedVocabulary, VocabEntry, byte_level_spelling


class GGUFTokenizer(HFEncoding):
    """The tokenizer of a GGUF model file, rebuilt as a `tokenizers` object."""

    def __init__(self, path: Path):
        meta = read_metadata(path)
        model = meta.get("tokenizer.ggml.model")
        if not isinstance(model, str):
            raise TokenizerError(f"{path}: GGUF file without tokenizer.ggml.model; it holds no tokenizer")
        if model not in _MODELS:
            raise TokenizerError(f"{path}: GGUF tokenizer model {model!r} is not supported "
                                 f"(supported: {', '.join(sorted(_MODELS))})")
        tokens = _strings(meta, "tokenizer.ggml.tokens", path)
        types = _array(meta, "tokenizer.ggml.token_type", path, len(tokens), NORMAL).astype(np.int64)
        tokenizer, self.settings = _MODELS[model](path, meta, tokens, types)
        added = _added_tokens(tokens, types)
        if added:
            tokenizer.add_tokens(added)
        self._tokenizer = tokenizer
        self._n_tokens = len(tokens)
        self._unknown = types == UNKNOWN
        # the id llama.cpp emits for what it cannot spell, whatever its type says (BERT files type
        # [UNK] as a control token; a WordPiece vocabulary then showed no unknown token at all)
        self._unk_id = _token_id(meta, "tokenizer.ggml.unknown_token_id", {"bert": 100, "llama": 0}.get(model, -1),
                                 tokens, path)
        if self._unk_id is not None:
            self._unknown[self._unk_id] = True
        self._byte = types == BYTE
        self._piece_bytes = np.where(self._byte, 1, -1).astype(np.int64)  # <0xE0>: one byte each
        if model == "llama" and meta.get("tokenizer.ggml.add_space_prefix", True) and "\u2581" in tokens:
            self._piece_bytes[tokens.index("\u2581")] = 0  # the "▁" put before the text: no byte of it
        if model == "gpt2":
            partial = _partial_byte_level(tokens)
            self._byte = self._byte | partial
            self._piece_bytes[partial] = [len(tokens[i]) for i in np.flatnonzero(partial)]
        self._tokens, self._types = tokens, types
        self._vocabulary: ListedVocabulary | None = None  # listed when first asked
        self.model = model
        self.pre = meta.get("tokenizer.ggml.pre")
        self.digest = _tokenizer_digest(meta)
        self.path = path
        self.name = display_name(path).removesuffix(".gguf")

    def __reduce__(self):
        """Rebuilt from the file in another process (a custom normalizer does not pickle)."""
        return (GGUFTokenizer, (self.path,))

    @property
    def tokenizer(self) -> tokenizers.Tokenizer:
        return self._tokenizer

    def ids(self, text: str) -> list[int]:
        """llama.cpp's token ids for one text (no BOS, special tokens not parsed)."""
        with native_errors(self.path):
            return self._tokenizer.encode(text, add_special_tokens=False).ids

    def pre_tokenizer(self) -> PreTokenizer | None:
        pre, normalizer = self._tokenizer.pre_tokenizer, self._tokenizer.normalizer
        if pre is None:
            return None

        def split(text: str) -> tuple[str, list[tuple[int, int]]]:
            seen = normalizer.normalize_str(text) if normalizer is not None else text
            return seen, [offsets for _, offsets in pre.pre_tokenize_str(seen)]
        return PreTokenizer(f"llama.cpp {self.pre or self.model}", split)

    def vocabulary(self) -> ListedVocabulary:
        """Listed from the file's token types: control tokens are special, as llama.cpp treats
        them; the rebuilt `tokenizers` object alone would call them ordinary."""
        if self._vocabulary is None:
            self._vocabulary = ListedVocabulary(self._list_vocabulary)
        return self._vocabulary

    def _list_vocabulary(self) -> list[VocabEntry]:
        spelling = byte_level_spelling() if self.model == "gpt2" else None
        kinds = {CONTROL: listing.SPECIAL, UNKNOWN: listing.UNKNOWN, UNUSED: listing.UNUSED}
        out: list[VocabEntry] = []
        for index, (token, kind) in enumerate(zip(self._tokens, self._types.tolist())):
            if index == self._unk_id:
                out.append((index, None, listing.UNKNOWN))
            elif kind in kinds:
                out.append((index, None, kinds[kind]))
            elif kind == BYTE and len(token) == 6 and token.startswith("<0x") and token.endswith(">"):
                out.append((index, bytes([int(token[3:5], 16)]), listing.BYTE))
            elif spelling is not None and (raw := spelling.bytes_of(token)) is not None:
                out.append((index, raw, listing.NORMAL))
            else:
                out.append((index, token.replace("\u2581", " ").encode("utf-8"), listing.NORMAL))
        return out

    def info(self) -> dict[str, str]:
        return {
            "backend": "gguf",
            "source": str(self.path),
            "sha256": f"{self.digest} (tokenizer.ggml.* metadata; model weights not read)",
            "model": f"llama.cpp {self.model}: {self.settings}",
            "vocab_size": str(self._n_tokens),
            "special_tokens": "BOS/EOS not added, control tokens not parsed (user-defined tokens split out, "
                              "as llama.cpp)",
            "library": f"tokenizers {tokenizers.__version__}",
        }


def _tokenizer_digest(meta: dict[str, Any]) -> str:
    """SHA-256 of what counting depends on, not of the whole file (a model file is gigabytes)."""
    digest = hashlib.sha256()
    for key in sorted(k for k in meta if k.startswith("tokenizer.ggml.")):
        value = meta[key]
        digest.update(key.encode("utf-8") + b"\0")
        if isinstance(value, np.ndarray):
            digest.update(value.dtype.str.encode() + value.tobytes())
        elif isinstance(value, list):
            digest.update("\0".join(map(str, value)).encode("utf-8"))
        else:
            digest.update(repr(value).encode("utf-8"))
        digest.update(b"\1")
    return digest.hexdigest()


def _partial_byte_level(tokens: list[str]) -> np.ndarray:
    """Byte-level tokens that are not whole UTF-8 characters."""
    spelling = byte_level_spelling()
    partial = np.zeros(len(tokens), dtype=bool)
    for index, token in enumerate(tokens):
        if (raw := spelling.bytes_of(token)) is not None:
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                partial[index] = True
    return partial


def load(reference: str, *, pattern: str | None = None) -> GGUFTokenizer:
    """A .gguf model file (`pattern` ignored: the file names its pre-tokenizer)."""
    path = Path(reference)
    if not path.is_file():
        raise TokenizerError(f"{reference}: no such file")
    return GGUFTokenizer(path)
