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
import json
import os
import re
import unicodedata
from pathlib import Path
from typing import Any

import numpy as np
import tokenizers
from tokenizers import AddedToken, Regex, decoders, models, normalizers, pre_tokenizers

from fertility.errors import TokenizerError

from . import PreTokenizer
from ._common import display_name, native_errors
from ._gguf_read import read_metadata
from ._hf import HFEncoding

# llama.cpp token types (gguf.TokenType)
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6

# The regexes of llama.cpp's llm_tokenizer_bpe, as it writes them (its "adapted" forms, which
# is what it really runs), applied one after the other, each splitting the previous pieces.
_CONTRACTIONS = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"
LLAMA3 = (_CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
          r"|\s+(?!\S)|\s+")
QWEN2 = (_CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
         r"|\s+(?!\S)|\s+")
QWEN35 = (_CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*"
          r"|\s*[\r\n]+|\s+(?!\S)|\s+")
GPT4O = (r"[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+" + _CONTRACTIONS + "?"
         r"|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*" + _CONTRACTIONS + "?"
         r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
TEKKEN = (r"[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+"
          r"|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*"
          r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
# Written as escapes: an editor's NFC would turn U+1F7D into U+03CE and empty the ranges.
_DEEPSEEK_LETTERS = (
    "A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af"
    "\u0370-\u0373\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1"
    "\u03a3-\u03f5\u03f7-\u0481\u048a-\u052f\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd"
    "\u1c90-\u1cba\u1cbd-\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d"
    "\u1f20-\u1f45\u1f48-\u1f4d\u1f50-\u1f57\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4"
    "\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6-\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec"
    "\u1ff2-\u1ff4\u1ff6-\u1ffc\u2102\u2107\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128"
    "\u212a-\u212d\u212f-\u2134\u2139\u213c-\u213f\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b"
    "\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3\ua640-\ua66d\ua680-\ua69b\ua722-\ua76f\ua771-\ua787"
    "\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17\uff21-\uff3a\uff41-\uff5a"
    "\U00010400-\U0001044f\U000104b0-\U000104d3\U000104d8-\U000104fb\U00010c80-\U00010cb2"
    "\U00010cc0-\U00010cf2\U000118a0-\U000118df\U0001e900-\U0001e943")
_DEEPSEEK_PUNCT = "!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002"
_CJK = "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+"
_BLOOM = " ?[^(\\s|.,!?\u2026\u3002\uff0c\u3001\u0964\u06d4\u060c)]+"

PRE_REGEXES: dict[str, list[str]] = {
    "default": [r"[\p{P}\$\+<=>\^~\|]+", GPT2, r"\p{N}+", "[0-9][0-9][0-9]"],
    "llama3": [LLAMA3],
    "dbrx": [LLAMA3],
    "chatglm4": [LLAMA3],
    "deepseek-llm": ["[\r\n]", "\\s?[" + _DEEPSEEK_LETTERS + "]+", "\\s?[" + _DEEPSEEK_PUNCT + "]+",
                     r"\s+\z", _CJK, r"\p{N}+"],
    "deepseek-coder": ["[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", _CJK, r"\p{N}"],
    "falcon": [r"[\p{P}\$\+<=>\^~\|`]+", GPT2, "[0-9][0-9][0-9]"],
    "starcoder": [r"\p{N}", GPT2],
    "gpt2": [GPT2],
    "qwen2": [QWEN2],
    "qwen35": [QWEN35],
    "bloom": [_BLOOM],
    "viking": [_BLOOM, r"\p{N}"],
    "tekken": [TEKKEN],
    "gpt4o": [GPT4O],
}
# `tokenizer.ggml.pre` names -> (regex family, ignore_merges), as llama_vocab::impl::load maps them.
PRE_NAMES: dict[str, tuple[str, bool]] = {
    "default": ("default", False),
    **dict.fromkeys(["llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0",
                     "lfm2"], ("llama3", True)),
    "deepseek-llm": ("deepseek-llm", False),
    "deepseek-coder": ("deepseek-coder", False),
    "falcon": ("falcon", False),
    **dict.fromkeys(["mpt", "olmo", "jais", "trillion", "granite-docling", "gpt-2", "phi-2", "jina-es",
                     "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum",
                     "modern-bert", "jina-v1-en", "jina-v2-code", "roberta-bpe", "exaone4"], ("gpt2", False)),
    **dict.fromkeys(["starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b"],
                    ("starcoder", False)),
    **dict.fromkeys(["qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "megrez", "stablelm2"], ("qwen2", False)),
    "qwen35": ("qwen35", False),
    **dict.fromkeys(["dbrx", "smaug-bpe"], ("dbrx", False)),
    "chatglm-bpe": ("chatglm4", False),
    **dict.fromkeys(["glm4", "glm5"], ("chatglm4", True)),
    **dict.fromkeys(["poro-chat", "bloom", "gpt3-finnish"], ("bloom", False)),
    "viking": ("viking", False),
    "tekken": ("tekken", True),
    **dict.fromkeys(["gpt-4o", "llama4", "kanana2", "talkie"], ("gpt4o", False)),
}


def _strings(meta: dict[str, Any], key: str, path: Path) -> list[str]:
    value = meta.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TokenizerError(f"{path}: GGUF file without {key} (a list of strings); not a tokenizer")
    return value


def _array(meta: dict[str, Any], key: str, path: Path, size: int, default: float | None) -> np.ndarray:
    value = meta.get(key)
    if value is None and default is not None:
        return np.full(size, default)
    if not isinstance(value, np.ndarray) or len(value) != size:
        raise TokenizerError(f"{path}: GGUF {key} missing or not one number per token ({size} tokens)")
    return value


def _token_id(meta: dict[str, Any], key: str, default: int, tokens: list[str], path: Path) -> int | None:
    """A token id from the metadata, None when it names no token."""
    value = meta.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TokenizerError(f"{path}: GGUF {key} is {value!r}, not a token id")
    return int(value) if 0 <= value < len(tokens) else None


def _added_tokens(tokens: list[str], types: np.ndarray) -> list[AddedToken]:
    """User-defined tokens are cut out of the text before tokenizing, even with special-token
    parsing off; control tokens are not."""
    return [AddedToken(tokens[i], special=False, normalized=False)
            for i in np.flatnonzero(types == USER_DEFINED) if tokens[i]]


def _merges(meta: dict[str, Any], path: Path) -> list[tuple[str, str]]:
    merges = []
    for number, merge in enumerate(_strings(meta, "tokenizer.ggml.merges", path)):
        left, sep, right = merge.partition(" ")
        if not sep or not left or not right:
            raise TokenizerError(f"{path}: GGUF merge {number} ({merge!r}) is not two tokens joined by a space")
        merges.append((left, right))
    return merges


def _bpe(path: Path, meta: dict[str, Any], tokens: list[str], types: np.ndarray) -> tuple[tokenizers.Tokenizer, str]:
    pre_name = meta.get("tokenizer.ggml.pre")
    if pre_name is None or pre_name == "":
        pre_name = "default"  # llama.cpp warns and uses its default regexes
    if not isinstance(pre_name, str) or pre_name not in PRE_NAMES:
        raise TokenizerError(f"{path}: GGUF pre-tokenizer {pre_name!r} is not supported (fertility counts "
                             f"only what it can count exactly as llama.cpp; known: {', '.join(sorted(PRE_NAMES))})")
    family, ignore_merges = PRE_NAMES[pre_name]
    merges = _merges(meta, path)
    vocab = {token: index for index, token in enumerate(tokens)}
    with native_errors(path):
        tokenizer = tokenizers.Tokenizer(models.BPE(vocab=vocab, merges=merges, ignore_merges=ignore_merges))
    splits = [pre_tokenizers.Split(Regex(expr), behavior="isolated") for expr in PRE_REGEXES[family]]
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [*splits, pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False, trim_offsets=False)])
    tokenizer.decoder = decoders.ByteLevel()
    return tokenizer, f"bpe, pre {pre_name} ({family} regexes{', ignore_merges' if ignore_merges else ''})"


# Characters sliced while deriving SentencePiece merges: a 262,144-token vocabulary needs about
# 2 * 10**7; a vocabulary asking for more than ten times that is refused before the work.
MAX_SPM_MERGE_WORK = 1 << 28


def _split_lengths(path: Path, tokens: list[str]):
    """length -> the cut positions worth trying on a token of that length (both sides' lengths
    are lengths of some token), in increasing order; refuses a vocabulary whose cuts would
    cost more than MAX_SPM_MERGE_WORK characters of slicing."""
    lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
    distinct = np.unique(lengths)
    work = int((np.searchsorted(distinct, lengths) * lengths).sum())  # cuts below each length, each slicing it
    if work > MAX_SPM_MERGE_WORK:
        raise TokenizerError(f"{path}: SentencePiece vocabulary too costly to rebuild as llama.cpp merges it "
                             f"({work:,} characters to compare; tokens up to {int(lengths.max()):,} characters "
                             f"long, of {len(distinct):,} different lengths; real vocabularies need under "
                             f"{MAX_SPM_MERGE_WORK // 10:,})")
    present = set(distinct.tolist())
    cache: dict[int, list[int]] = {}

    def cuts(length: int) -> list[int]:
        if length not in cache:
            below = distinct[:int(np.searchsorted(distinct, length))].tolist()
            cache[length] = [cut for cut in below if cut and length - cut in present]
        return cache[length]
    return cuts


def _spm(path: Path, meta: dict[str, Any], tokens: list[str], types: np.ndarray) -> tuple[tokenizers.Tokenizer, str]:
    scores = _array(meta, "tokenizer.ggml.scores", path, len(tokens), None).astype(np.float64)
    vocab: dict[str, int] = {}
    for index, token in enumerate(tokens):
        vocab.setdefault(token, index)
    # llama.cpp merges any adjacent pair whose joined text is a token, highest score first (ties:
    # leftmost): as BPE merges, every split of every token into two tokens, ranked by score. Only
    # cuts whose two sides have lengths some token has can split a token into tokens, so a token
    # of length L costs a slice of L per such cut, not per character (a 3 MB token among short
    # ones was quadratic: minutes); the whole cost is bounded before any of it is spent.
    ranked = sorted(range(len(tokens)), key=lambda i: (-scores[i], i))
    cuts = _split_lengths(path, tokens)
    merges = []
    for index in ranked:
        token = tokens[index]
        if types[index] == BYTE or len(token) < 2 or vocab[token] != index:
            continue
        for cut in cuts(len(token)):
            left, right = token[:cut], token[cut:]
            if left in vocab and right in vocab:
                merges.append((left, right))
    unk_id = _token_id(meta, "tokenizer.ggml.unknown_token_id", 0, tokens, path)
    unk = tokens[unk_id] if unk_id is not None else None
    with native_errors(path):
        tokenizer = tokenizers.Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token=unk, byte_fallback=True,
                                                    fuse_unk=False))
    add_prefix = bool(meta.get("tokenizer.ggml.add_space_prefix", True))
    steps: list[Any] = [normalizers.Prepend("▁")] if add_prefix else []
    tokenizer.normalizer = normalizers.Sequence([*steps, normalizers.Replace(" ", "▁")])
    return tokenizer, f"spm (score merges, byte fallback, space prefix {'on' if add_prefix else 'off'})"


class _WPMNormalizer:
    """llama.cpp's WPM preprocessing, one code point at a time (llm_tokenizer_wpm_session::
    preprocess): each code point becomes the first code point of its NFD (Hangul syllables keep
    only their leading jamo), controls, U+0000, U+FFFD and marks (Mn, Mc, Me) are dropped, the
    rest lowercased by the simple 1:1 mapping. Alignments stay, so spans map to the raw text."""

    def __init__(self, *, lowercase: bool, strip_accents: bool):
        self.lowercase, self.strip_accents = lowercase, strip_accents

    def _map(self, char: str) -> str:
        if self.strip_accents:
            char = unicodedata.normalize("NFD", char)[0]
        return char.lower()[0] if self.lowercase and char.lower() else char

    def _keep(self, char: str) -> bool:
        category = unicodedata.category(char)
        if char in ("\x00", "\ufffd") or category in ("Cc", "Cf", "Co", "Cs"):
            return char in _WHITESPACE  # tab, newline...: word breaks, not dropped
        return not (self.strip_accents and category.startswith("M"))

    def normalize(self, normalized) -> None:
        normalized.map(self._map)
        normalized.filter(self._keep)


# White_Space, as llama.cpp's table lists it
_WHITESPACE = frozenset(chr(c) for c in [*range(0x09, 0x0E), 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B),
                                         0x2028, 0x2029, 0x202F, 0x205F, 0x3000])
# BERT's (and llama.cpp's is_chinese_char) CJK blocks: each character its own word
_CHINESE = ("[\u4e00-\u9fff\u3400-\u4dbf\U00020000-\U0002a6df\U0002a700-\U0002b73f\U0002b740-\U0002b81f"
            "\U0002b820-\U0002ceaf\uf900-\ufaff\U0002f800-\U0002fa1f]")


def _wpm(path: Path, meta: dict[str, Any], tokens: list[str], types: np.ndarray) -> tuple[tokenizers.Tokenizer, str]:
    # llama.cpp stores word-initial pieces with a "▁" prefix and continuations bare (no "##")
    vocab: dict[str, int] = {}
    for index, token in enumerate(tokens):
        if types[index] == CONTROL:
            key = token
        elif token.startswith("▁"):
            key = token[1:]
        else:
            key = "##" + token
        vocab.setdefault(key, index)
    unk_id = _token_id(meta, "tokenizer.ggml.unknown_token_id", 100, tokens, path)
    if unk_id is None:
        raise TokenizerError(f"{path}: WordPiece vocabulary without its unknown token (tokenizer.ggml.unknown_token_id)")
    unk = tokens[unk_id]
    lowercase = bool(meta.get("tokenizer.ggml.normalizer.lowercase", True))
    strip_accents = bool(meta.get("tokenizer.ggml.normalizer.strip_accents", lowercase))
    with native_errors(path):  # llama.cpp has no per-word length limit
        tokenizer = tokenizers.Tokenizer(models.WordPiece(vocab=vocab, unk_token=unk, max_input_chars_per_word=1 << 30))
    tokenizer.normalizer = normalizers.Normalizer.custom(_WPMNormalizer(lowercase=lowercase,
                                                                        strip_accents=strip_accents))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation("isolated"),
        pre_tokenizers.Split(Regex(_CHINESE), behavior="isolated")])
    return tokenizer, (f"wpm (llama.cpp preprocessing: lowercase {'on' if lowercase else 'off'}, strip accents "
                       f"{'on' if strip_accents else 'off'}; greedy longest match)")


def _gemma4(path: Path, meta: dict[str, Any], tokens: list[str], types: np.ndarray) -> tuple[tokenizers.Tokenizer, str]:
    """Gemma 4: BPE over raw UTF-8 with "▁" for spaces, split only at newlines, byte fallback."""
    merges = _merges(meta, path)
    vocab: dict[str, int] = {}
    for index, token in enumerate(tokens):
        vocab.setdefault(token, index)
    with native_errors(path):
        tokenizer = tokenizers.Tokenizer(models.BPE(vocab=vocab, merges=merges, byte_fallback=True))
    tokenizer.normalizer = normalizers.Replace(" ", "▁")
    tokenizer.pre_tokenizer = pre_tokenizers.Split(Regex("[^\n]+|[\n]+"), behavior="isolated")
    return tokenizer, "gemma4 (BPE on raw UTF-8, \"▁\" for spaces, newline split, byte fallback)"


_MODELS = {"gpt2": _bpe, "llama": _spm, "bert": _wpm, "gemma4": _gemma4}


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
        self._listing: tuple | None = None  # vocabulary(), once listed
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

    def vocabulary(self) -> list[tuple[int, bytes | None, str]]:
        """(id, bytes, kind) per token, kinds from the file's token types (as vocab.entries
        lists other backends): control tokens are special, as llama.cpp treats them; the
        rebuilt `tokenizers` object alone would call them ordinary."""
        from fertility.backends import vocab as listing

        from ._hf import _byte_level_alphabet

        if self._listing is not None:
            return list(self._listing)
        alphabet = _byte_level_alphabet() if self.model == "gpt2" else {}
        kinds = {CONTROL: listing.SPECIAL, UNKNOWN: listing.UNKNOWN, UNUSED: listing.UNUSED}
        out: list[tuple[int, bytes | None, str]] = []
        for index, (token, kind) in enumerate(zip(self._tokens, self._types.tolist())):
            if index == self._unk_id:
                out.append((index, None, listing.UNKNOWN))
            elif kind in kinds:
                out.append((index, None, kinds[kind]))
            elif kind == BYTE and len(token) == 6 and token.startswith("<0x") and token.endswith(">"):
                out.append((index, bytes([int(token[3:5], 16)]), listing.BYTE))
            elif alphabet and all(c in alphabet for c in token):
                out.append((index, bytes(alphabet[c] for c in token), listing.NORMAL))
            else:
                out.append((index, token.replace("\u2581", " ").encode("utf-8"), listing.NORMAL))
        self._listing = tuple(out)
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
    from ._hf import _byte_level_alphabet

    alphabet = _byte_level_alphabet()
    partial = np.zeros(len(tokens), dtype=bool)
    for index, token in enumerate(tokens):
        if token and all(c in alphabet for c in token):
            try:
                bytes(alphabet[c] for c in token).decode("utf-8")
            except UnicodeDecodeError:
                partial[index] = True
    return partial


def load(reference: str, *, pattern: str | None = None) -> GGUFTokenizer:
    """A .gguf model file (`pattern` ignored: the file names its pre-tokenizer)."""
    path = Path(reference)
    if not path.is_file():
        raise TokenizerError(f"{reference}: no such file")
    return GGUFTokenizer(path)


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
