"""Normalization evidence, measured on one chunk's sampled texts: how characters and tokens move
when the text is NFC or NFKC normalized first, and how many characters could change. A tokenizer
trained on normalized text but fed raw text (or the reverse) loses compression silently; these
counts let a finding say so with the size of the effect.
"""

from __future__ import annotations

import unicodedata
from collections import Counter

import numpy as np

from fertility.backends import Tokenizer
from fertility.diagnose.normalization import FORMS, JOINERS, NormalizationCounts, nfc_changes

from .chunks import Chunk
from .profiles import ChunkProfile
from .result import ChunkResult


def normalized_texts(texts: list[str], sampled: np.ndarray) -> dict[str, dict[int, str]]:
    """Per form, the sampled texts it changes, normalized (shared by every tokenizer)."""
    out: dict[str, dict[int, str]] = {}
    for form in FORMS:
        changed = {}
        for i in np.flatnonzero(sampled).tolist():
            if unicodedata.is_normalized(form, texts[i]):  # type: ignore[arg-type]  # a quick check, mostly
                continue
            text = unicodedata.normalize(form, texts[i])  # type: ignore[arg-type]
            if text != texts[i]:
                changed[i] = text
        out[form] = changed
    return out


def normalization(result: ChunkResult, t: int, tokenizer: Tokenizer, chunk: Chunk, prof: ChunkProfile,
                   doc_tokens: np.ndarray, sampled: np.ndarray, normalized: dict[str, dict[int, str]]) -> None:
    """How chars and tokens of the sampled texts move under NFC and NFKC."""
    chosen = np.flatnonzero(sampled)
    if not len(chosen):
        return
    totals: dict[str, Counter] = {}
    for i in chosen.tolist():
        entry = totals.setdefault(chunk.langs[i], Counter())
        entry["n_chars"] += int(prof.doc_chars[i])
        entry["n_tokens"] += int(doc_tokens[i])
    char_doc = np.repeat(np.arange(len(chunk.texts)), prof.doc_chars)
    in_sample = sampled[char_doc]
    langs = list(dict.fromkeys(chunk.langs))
    position = {lang: i for i, lang in enumerate(langs)}
    lang_of_doc = np.array([position[lang] for lang in chunk.langs], dtype=np.int64)
    codes = prof.codes[in_sample].astype(np.int64)
    interesting = (codes > 0xFF)
    keys, amounts = np.unique(lang_of_doc[char_doc[in_sample][interesting]] * 0x110000 + codes[interesting],
                              return_counts=True)
    for key, amount in zip(keys.tolist(), amounts.tolist()):
        char = chr(key % 0x110000)
        entry = totals[langs[key // 0x110000]]
        if nfc_changes(char):
            entry["n_decomposable"] += amount
        if char in JOINERS:
            entry["n_joiners"] += amount
    known: dict[int, tuple[str, int]] = {}  # a text NFKC leaves as NFC did is not encoded twice
    for form in FORMS:
        changed = normalized[form]
        indices = list(changed)
        fresh = [i for i in indices if i not in known or known[i][0] != changed[i]]
        counted = dict(zip(fresh, tokenizer.count_tokens([changed[i] for i in fresh]) if fresh else []))
        new_tokens = [counted[i] if i in counted else known[i][1] for i in indices]
        known.update((i, (changed[i], n)) for i, n in zip(indices, new_tokens))
        for i, tokens in zip(indices, new_tokens):
            entry = totals[chunk.langs[i]]
            suffix = form.lower()
            entry[f"d_chars_{suffix}"] += len(changed[i]) - len(chunk.texts[i])
            entry[f"d_tokens_{suffix}"] += tokens - int(doc_tokens[i])
            if form == "NFC":
                entry["n_docs_changed_nfc"] += 1
    for lang, entry in totals.items():
        counts = NormalizationCounts(
            n_chars=entry["n_chars"], n_chars_nfc=entry["n_chars"] + entry["d_chars_nfc"],
            n_chars_nfkc=entry["n_chars"] + entry["d_chars_nfkc"], n_tokens=entry["n_tokens"],
            n_tokens_nfc=entry["n_tokens"] + entry["d_tokens_nfc"],
            n_tokens_nfkc=entry["n_tokens"] + entry["d_tokens_nfkc"],
            n_docs_changed_nfc=entry["n_docs_changed_nfc"], n_decomposable=entry["n_decomposable"],
            n_joiners=entry["n_joiners"])
        key = (t, lang)
        result.normalization[key] = result.normalization[key] + counts if key in result.normalization else counts
