"""Which tokenizers get a fast path, and gigatoken's encoder for each.

A tokenizer gets one only where gigatoken is built from the very vocabulary the library uses and
with the split the library applies (tiktoken ranks, byte-level BPE tokenizer.json, SentencePiece
BPE with byte fallback); anything else raises Unsupported, whose message the signature shows.
Each builder also returns what turning ids into spans needs (token byte lengths for Hugging
Face byte-level BPE) and a guard for text the library must encode itself (added tokens).
"""

from __future__ import annotations

import base64
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ._gigatoken_ids import GigatokenIds

# The split patterns (as fertility's backends hold them) whose gigatoken scheme splits text the
# same way; each pair is tested on random text with a vocabulary whose merges cross every place
# the patterns could disagree (tests/backends/test_fastpath.py), and on FLORES (the matrix).
_TEKKEN = (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
           r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
           r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")


def _schemes() -> dict[str, str]:
    from ._tiktoken import QWEN
    from .patterns import CL100K, GPT2, O200K
    return {GPT2: "gpt2", CL100K: "gpt4", O200K: "o200k", QWEN: "qwen2", _TEKKEN: "nemotron"}


class Unsupported(Exception):
    """This tokenizer has no exact fast path; the message says why."""


def _without_special_tokens(data: dict) -> tuple[str, list[str]]:
    """tokenizer.json text for gigatoken without the added tokens, and the contents of the
    non-special ones. The library never recognises special tokens in text (tiktoken's
    encode_ordinary, `encode_special_tokens`, SentencePiece control pieces) but gigatoken
    would cut them out; the non-special ones both cut out, so a batch holding one goes to the
    library (their matching rules are subtle), which `_guard` sees."""
    kept = [str(a.get("content", "")) for a in data.get("added_tokens") or [] if not a.get("special")]
    data = {**data, "added_tokens": [], "post_processor": None, "truncation": None, "padding": None}
    return json.dumps(data, ensure_ascii=False), [k for k in kept if k]


def _guard(contents: list[str]):
    """A test for batches holding any of `contents` (None when there are none); a cheap
    two-character prefilter on the joined text first."""
    if not contents:
        return None
    heads = sorted({c[:2] for c in contents})

    def holds(texts: list[str]) -> bool:
        joined = "\0".join(texts)
        return any(h in joined for h in heads) and any(c in joined for c in contents)
    return holds


def _build_tiktoken(inner: Any) -> tuple[GigatokenIds, Any]:
    import gigatoken

    scheme = _schemes().get(inner.pattern)
    if scheme is None:
        raise Unsupported(f"split pattern {inner.pattern_name} is none of gigatoken's schemes")
    ranks = getattr(inner.encoding, "_mergeable_ranks", None)
    if not isinstance(ranks, dict):
        raise Unsupported("tiktoken does not expose the encoding's ranks")
    source = Path(inner.source)
    if inner.backend == "tiktoken" and source.is_file():
        def from_file():  # the very file the library read (its hash is in the signature)
            return gigatoken.Tokenizer.from_tiktoken(source, pretokenizer=scheme, special_tokens={}).backend
        try:
            return GigatokenIds(from_file, f"{source.name} with the {scheme} split"), None
        except (ValueError, RuntimeError):  # e.g. Whisper's padded base64: write the ranks out plainly
            pass

    def from_ranks():
        handle, name = tempfile.mkstemp(suffix=".tiktoken")
        try:
            with os.fdopen(handle, "w", encoding="ascii") as out:
                out.writelines(f"{base64.b64encode(token).decode()} {rank}\n"
                               for token, rank in sorted(ranks.items(), key=lambda item: item[1]))
            return gigatoken.Tokenizer.from_tiktoken(name, pretokenizer=scheme, special_tokens={}).backend
        finally:
            Path(name).unlink(missing_ok=True)
    return GigatokenIds(from_ranks, f"the library's {len(ranks)} ranks with the {scheme} split"), None


def _build_hf(inner: Any) -> tuple[GigatokenIds, Any]:
    import gigatoken

    data = _tokenizer_json(inner)
    model = data.get("model") or {}
    pre = json.dumps(data.get("pre_tokenizer"))
    if model.get("type") != "BPE" or model.get("byte_fallback"):
        raise Unsupported(f"{model.get('type')} model{' with byte fallback' if model.get('byte_fallback') else ''}: "
                          "the fast path takes byte-level BPE tokenizer.json files")
    if data.get("normalizer") is not None or '"ByteLevel"' not in pre or '"add_prefix_space": true' in pre \
            or model.get("continuing_subword_prefix") or model.get("end_of_word_suffix"):
        raise Unsupported("not a plain byte-level BPE (a normalizer, a prefix space or word affixes), "
                          "so token offsets cannot be derived from token bytes")
    text, kept = _without_special_tokens(data)
    try:
        ids = GigatokenIds(lambda: gigatoken.Tokenizer.from_json(text).backend,
                           "tokenizer.json without its added tokens")
    except (ValueError, RuntimeError) as err:
        raise Unsupported(f"gigatoken refuses it ({str(err).splitlines()[0]})") from None
    from .vocabularies import byte_level_spelling

    vocab = model.get("vocab")  # what the library's model holds (without added tokens), already parsed
    if not isinstance(vocab, dict):
        raise Unsupported("the model's vocab is not a token -> id table")
    strange = set("".join(vocab)) - byte_level_spelling().letters
    if strange:
        raise Unsupported(f"vocabulary entries hold {''.join(sorted(strange))[:10]!r}: not byte-level text")
    lengths = np.zeros(max(vocab.values(), default=-1) + 1, dtype=np.int64)
    lengths[np.fromiter(vocab.values(), dtype=np.int64, count=len(vocab))] = \
        np.fromiter(map(len, vocab), dtype=np.int64, count=len(vocab))  # one alphabet character a byte
    return ids, (lengths, _guard(kept))


def _tokenizer_json(inner: Any) -> dict:
    """The tokenizer.json the library loaded, read from its file (a large vocabulary takes a
    second to serialize again), or serialized when it was built in memory (vocab.json + merges)."""
    from ._hf import file_config

    path = Path(inner.path)
    return (file_config(path) if path.name != "vocab.json" else None) or json.loads(inner.tokenizer.to_str())


def _build_spm(inner: Any) -> tuple[GigatokenIds, Any]:
    import gigatoken

    if inner._piece_bytes is None:
        raise Unsupported("the model's normalizer rewrites text, so spans need the library's offsets")
    try:
        data = spm_tokenizer_json(inner.processor.serialized_model_proto())
    except (ImportError, ValueError) as err:
        raise Unsupported(f"gigatoken refuses it ({str(err).splitlines()[0] if str(err) else type(err).__name__})") from None
    text, kept = _without_special_tokens(data)
    return GigatokenIds(lambda: gigatoken.Tokenizer.from_json(text).backend,
                        "the .model converted by gigatoken, without its control pieces"), (None, _guard(kept))


# SentencePiece's enum values (sentencepiece_model.proto)
_BPE, _CONTROL, _USER_DEFINED = 2, 3, 4


def spm_tokenizer_json(proto: bytes) -> dict:
    """The tokenizer.json gigatoken makes of a SentencePiece model
    (`gigatoken._load.sentencepiece.sentencepiece_to_tokenizer_json`: the same checks, fields
    and merges, the merges from its own function), but read with protobuf's parser rather
    than its pure-Python one, and handed on as a dict rather than JSON text to parse again:
    0.8 s of serial start-up for Mistral v7's 32k pieces became about 0.4, most of it the
    merges. tests/backends/test_fastpath.py compares the two on every model at hand."""
    from gigatoken._load.sentencepiece import _generate_merges
    from sentencepiece import sentencepiece_model_pb2

    model = sentencepiece_model_pb2.ModelProto()  # type: ignore[attr-defined]
    model.ParseFromString(proto)
    pieces = [(piece.piece, piece.score, piece.type) for piece in model.pieces]
    trainer, spec = model.trainer_spec, model.normalizer_spec
    if not pieces:
        raise ValueError("not a sentencepiece model: no pieces found")
    if trainer.model_type != _BPE:
        kind = {1: "unigram", 2: "BPE", 3: "word", 4: "char"}.get(trainer.model_type, trainer.model_type)
        raise ValueError(f"only BPE sentencepiece models are supported, got model_type {kind!r}")
    if not trainer.byte_fallback:
        raise ValueError("only byte_fallback sentencepiece models are supported")
    if not spec.escape_whitespaces:
        raise ValueError("sentencepiece models with escape_whitespaces=false are not supported")
    if trainer.treat_whitespace_as_suffix:
        raise ValueError("sentencepiece models with treat_whitespace_as_suffix are not supported")
    vocab = {piece: i for i, (piece, _, _) in enumerate(pieces)}
    scores = {piece: score for piece, score, _ in pieces}
    normalizers: list[dict[str, Any]] = []
    if spec.precompiled_charsmap:
        normalizers.append({"type": "Precompiled",
                            "precompiled_charsmap": base64.b64encode(spec.precompiled_charsmap).decode("ascii")})
    if spec.remove_extra_whitespaces:
        normalizers.append({"type": "Strip", "strip_left": True, "strip_right": True})
        normalizers.append({"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "})
    if spec.add_dummy_prefix:
        normalizers.append({"type": "Prepend", "prepend": "\u2581"})
    normalizers.append({"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"})
    added_tokens = [{"id": i, "content": piece, "single_word": False, "lstrip": False, "rstrip": False,
                     "normalized": False, "special": kind == _CONTROL}
                    for i, (piece, _, kind) in enumerate(pieces) if kind in (_CONTROL, _USER_DEFINED)]
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added_tokens,
        "normalizer": {"type": "Sequence", "normalizers": normalizers},
        "pre_tokenizer": None, "post_processor": None, "decoder": None,
        "model": {"type": "BPE", "dropout": None, "unk_token": trainer.unk_piece, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
                  "vocab": vocab, "merges": _generate_merges(vocab, scores)},
    }


def build_encoder(inner: Any) -> tuple[GigatokenIds, Any]:
    """gigatoken's encoder for `inner` and what the spans need, or Unsupported."""
    from ._hf import HFTokenizer
    from ._spm import SPMTokenizer
    from ._tiktoken import TiktokenTokenizer

    if isinstance(inner, TiktokenTokenizer):
        return _build_tiktoken(inner)
    if type(inner) is HFTokenizer:
        return _build_hf(inner)
    if isinstance(inner, SPMTokenizer):
        return _build_spm(inner)
    backend = inner.info().get("backend", type(inner).__name__) if hasattr(inner, "info") else type(inner).__name__
    raise Unsupported(f"no fast path for the {backend} backend")
