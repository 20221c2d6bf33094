"""The four tokenizer models a GGUF file can hold (BPE, SentencePiece-style, WordPiece,
Gemma 4), rebuilt as `tokenizers` objects from the file's vocabulary, merges and scores."""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Any

import numpy as np
import tokenizers
from tokenizers import AddedToken, Regex, decoders, models, normalizers, pre_tokenizers

from fertility.errors import TokenizerError

from ._common import native_errors
from ._gguf_patterns import BYTE, CONTROL, PRE_NAMES, PRE_REGEXES, USER_DEFINED


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
