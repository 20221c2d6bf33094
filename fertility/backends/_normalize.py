"""Unicode normalization a tokenizer's runtime applies before its file's model sees the text.

Qwen's Python tokenizer calls `unicodedata.normalize("NFC", text)` before its tiktoken-style
ranks; nothing in `qwen.tiktoken` says so. Counting without it gives other numbers than Qwen
does. Tokens are counted on the normalized text; characters and bytes stay those of the raw
text, so token spans are mapped back: normalization never crosses a grapheme cluster, so each
cluster is normalized alone; inside an unchanged cluster offsets are exact, a token boundary
inside a changed cluster moves to that cluster's end.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Literal

import numpy as np
import regex

from fertility.errors import TokenizerError, UsageError
from fertility.limits import MAX_TOKENIZER_FILE_BYTES, check_file_size

from . import Encoded, FastCheck, PreTokenizer, Tokenizer, Tokens, Vocabulary
from .spans import concatenate

Form = Literal["NFC", "NFKC"]
FORMS: dict[str, Form | None] = {"nfc": "NFC", "nfkc": "NFKC", "none": None}
_CLUSTER = regex.compile(r"\X")
# tokenizer_config.json `tokenizer_class` values whose Python code normalizes before encoding
RUNTIME_NFC_CLASSES = ("QWenTokenizer", "Qwen2Tokenizer", "Qwen2TokenizerFast")


def check_form(normalize: str | None) -> str | None:
    if normalize is None:
        return None
    if normalize.lower() not in FORMS:
        raise UsageError(f"--normalize {normalize!r}: choose one of {', '.join(FORMS)}")
    return normalize.lower()


def runtime_form_from_config(folder: Path) -> tuple[str, str] | None:
    """(form, reason) when a tokenizer_config.json beside the file names a normalizing class."""
    config = folder / "tokenizer_config.json"
    if not config.is_file():
        return None
    check_file_size(config, MAX_TOKENIZER_FILE_BYTES, "tokenizer_config.json", TokenizerError)
    try:  # one that cannot be read or parsed says nothing (one too large to hold is refused)
        data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    name = data.get("tokenizer_class") if isinstance(data, dict) else None
    if isinstance(name, str) and name in RUNTIME_NFC_CLASSES:
        return "nfc", f"{name} applies NFC before encoding ({config.name})"
    return None


class Normalized:
    """A tokenizer behind the Unicode normalization its runtime (or the user) applies first."""

    def __init__(self, inner: Tokenizer, form: str | None, origin: str):
        self.inner, self.form, self.origin = inner, form, origin
        self.name = inner.name

    def __getattr__(self, attribute: str):  # backend extras (encoding, ids, ...) stay reachable
        if attribute == "inner":  # not set yet (unpickling): no recursion
            raise AttributeError(attribute)
        return getattr(self.inner, attribute)

    def __repr__(self) -> str:
        return f"<Normalized {self.name!r} ({(self.form or 'none').upper()}) over {self.inner!r}>"

    @property
    def runtime_normalization(self) -> tuple[str, str] | None:
        return self.inner.runtime_normalization

    def vocabulary(self) -> Vocabulary | None:
        return self.inner.vocabulary()

    def encode_checked(self, texts: list[str]) -> tuple[Tokens, FastCheck | None]:
        if self.form is None:
            return self.inner.encode_checked(texts)
        return self.encode_many(texts), None  # the inner fast path would skip the normalization

    def encode_many(self, texts: list[str]) -> Tokens:
        if self.form is None:
            return self.inner.encode_many(texts)
        # the inner batch call would skip the normalization: the spans mapped back, laid end to end
        return concatenate(self.encode(texts), [len(t.encode("utf-8")) for t in texts])

    def count_tokens(self, texts: list[str]) -> list[int]:
        form = FORMS[self.form] if self.form else None
        seen = [unicodedata.normalize(form, t) for t in texts] if form else texts
        return self.inner.count_tokens(seen)

    def encode(self, texts: list[str]) -> list[Encoded]:
        if self.form is None:
            return self.inner.encode(texts)
        form = FORMS[self.form]
        assert form is not None
        mapped = [normalize_with_map(text, form) for text in texts]
        encoded = self.inner.encode([seen for seen, _ in mapped])
        out = []
        for (_, to_raw), enc in zip(mapped, encoded):
            if to_raw is None:
                out.append(enc)
            else:
                out.append(Encoded(to_raw[enc.starts], to_raw[enc.ends], enc.unknown, enc.byte_fallback, enc.ids))
        return out

    def pre_tokenizer(self) -> PreTokenizer | None:
        inner = self.inner.pre_tokenizer()
        form = FORMS[self.form] if self.form else None
        if inner is None or form is None:
            return inner
        split_inner = inner.split

        def split(text: str) -> tuple[str, list[tuple[int, int]]]:
            return split_inner(unicodedata.normalize(form, text))
        return PreTokenizer(f"{form} + {inner.name}", split)

    def info(self) -> dict[str, str]:
        return {**self.inner.info(), "normalize": f"{self.form or 'none'} ({self.origin})"}


def normalize_with_map(text: str, form: Form) -> tuple[str, np.ndarray | None]:
    """(normalized text, raw byte offset for each normalized byte offset 0..len) or (text, None)."""
    if unicodedata.is_normalized(form, text):
        return text, None
    pieces, to_raw = [], []
    raw_at = 0
    for match in _CLUSTER.finditer(text):
        cluster = match.group()
        raw_len = len(cluster.encode("utf-8"))
        seen = unicodedata.normalize(form, cluster)
        seen_len = len(seen.encode("utf-8"))
        if seen == cluster:
            to_raw.append(np.arange(raw_at, raw_at + seen_len, dtype=np.int64))
        else:  # the cluster's start stays, any boundary inside it moves to its end
            to_raw.append(np.array([raw_at] + [raw_at + raw_len] * (seen_len - 1), dtype=np.int64))
        pieces.append(seen)
        raw_at += raw_len
    to_raw.append(np.array([raw_at], dtype=np.int64))
    return "".join(pieces), np.concatenate(to_raw)


def effective_form(tokenizer: Tokenizer, normalize: str | None) -> str | None:
    """The normalization `apply` puts in front of the tokenizer (nfc, nfkc), or None."""
    runtime = tokenizer.runtime_normalization
    form = normalize if normalize is not None else (runtime[0] if runtime is not None else None)
    return None if form in (None, "none") else form


def apply(tokenizer: Tokenizer, normalize: str | None) -> Tokenizer:
    """Put the runtime's normalization (or the user's `--normalize`) in front of a tokenizer."""
    runtime = tokenizer.runtime_normalization  # (form, reason) known by the backend
    if normalize is None:
        if runtime is None:
            return tokenizer
        return Normalized(tokenizer, runtime[0], f"runtime: {runtime[1]}")
    if runtime is None:
        origin = "--normalize; runtime normalization unknown"
    elif runtime[0] == normalize:
        origin = f"--normalize, as the runtime: {runtime[1]}"
    else:
        origin = f"--normalize, overriding the runtime: {runtime[1]}"
    return Normalized(tokenizer, None if normalize == "none" else normalize, origin)
