"""Hugging Face `tokenizers` backend: tokenizer.json files and folders (hub snapshots are folders too).

Saved tokenizers may switch on padding and truncation (BERT exports often do), or BPE dropout:
each would silently change token counts (dropout at random, on every run), so they are switched
off and the signature says so. Special
tokens are neither added nor recognised inside the text.
"""

from __future__ import annotations

import json
from itertools import chain
from pathlib import Path

import numpy as np
import tokenizers

from fertility.errors import TokenizerError
from fertility.hashing import sha256_file
from fertility.limits import MAX_TOKEN_ID, MAX_TOKENIZER_FILE_BYTES, check_file_size, check_token_id, read_file_capped

from . import Encoded, PreTokenizer, Tokenizer, TokenizerBase, Tokens
from ._common import display_name, native_errors
from .spans import char_spans_to_bytes, exact_piece_spans
from .vocabularies import HFVocabulary, byte_level_alphabet, byte_level_spelling


def _locate(reference: str) -> Path:
    path = Path(reference)
    if path.is_dir():
        if (path / "tokenizer.json").is_file():
            return path / "tokenizer.json"
        if (path / "vocab.json").is_file() and (path / "merges.txt").is_file():
            return path
        raise TokenizerError(f"{path}: directory holds no tokenizer.json (nor vocab.json + merges.txt)")
    if path.is_file():
        return path
    raise TokenizerError(f"{reference}: no such file or directory")  # hub ids: hub.py, before this


class HFEncoding(TokenizerBase):
    """Encoding through a `tokenizers.Tokenizer` (`_tokenizer`), with per-id kinds (`_unknown`,
    `_byte`), the bytes of text each byte token stands for (`_piece_bytes`, -1 for tokens of
    whole characters) and the file named in errors (`path`): shared by tokenizer.json and GGUF
    files."""

    _tokenizer: tokenizers.Tokenizer
    _unknown: np.ndarray
    _byte: np.ndarray
    _piece_bytes: np.ndarray
    path: Path

    def encode(self, texts: list[str]) -> list[Encoded]:
        """Byte spans: the library's character offsets, then each byte piece's own bytes."""
        out = []
        with native_errors(self.path):
            batch = self._tokenizer.encode_batch(texts, add_special_tokens=False)
        for text, enc in zip(texts, batch):
            starts, ends = char_spans_to_bytes(text, enc.offsets)
            ids = np.asarray(enc.ids, dtype=np.int64)
            starts, ends = exact_piece_spans(starts, ends, self._piece_bytes[ids])
            out.append(Encoded(starts, ends, self._unknown[ids], self._byte[ids], ids))
        return out

    def encode_many(self, texts: list[str]) -> Tokens:
        """Character spans in the texts' concatenation; the engine turns them into bytes with
        the character table its unit profile already holds, then gives byte pieces their own
        bytes (`piece_bytes`)."""
        with native_errors(self.path):
            encodings = self._tokenizer.encode_batch(texts, add_special_tokens=False)
        counts = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(encodings))
        total = int(counts.sum())
        ids = np.fromiter(chain.from_iterable(e.ids for e in encodings), dtype=np.int64, count=total)
        offsets = np.fromiter(chain.from_iterable(chain.from_iterable(e.offsets for e in encodings)),
                              dtype=np.int64, count=2 * total).reshape(-1, 2)
        sizes = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        offsets += np.repeat(np.cumsum(sizes) - sizes, counts)[:, None]
        return Tokens(counts, offsets[:, 0], offsets[:, 1], self._unknown[ids], self._byte[ids], in_chars=True,
                      ids=ids, piece_bytes=self._piece_bytes[ids])

    def count_tokens(self, texts: list[str]) -> list[int]:
        with native_errors(self.path):
            return [len(e.ids) for e in self._tokenizer.encode_batch(texts, add_special_tokens=False)]


class HFTokenizer(HFEncoding):
    def __init__(self, path: Path, *, name: str | None = None, built: tokenizers.Tokenizer | None = None):
        if built is None:
            check_file_size(path, MAX_TOKENIZER_FILE_BYTES, "tokenizer.json", TokenizerError)
        try:
            tokenizer = built or tokenizers.Tokenizer.from_file(str(path))
        except Exception as err:  # noqa: BLE001 - the Rust side raises plain Exception with a parse message
            first = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise TokenizerError(f"{path}: not a valid Hugging Face tokenizer.json ({first})") from None
        vocab = tokenizer.get_vocab(with_added_tokens=True)  # once: 128k entries take 0.27 s
        _check_ids(path, vocab)
        config = (file_config(path) if built is None else None) or json.loads(tokenizer.to_str())  # after the id check
        _check_unknown_token(path, tokenizer, config)
        _check_byte_alphabet(path, vocab, config)
        self._had_padding = tokenizer.padding is not None
        self._had_truncation = tokenizer.truncation is not None
        tokenizer.no_padding()
        tokenizer.no_truncation()
        self._had_dropout = _switch_off_dropout(tokenizer)
        tokenizer.encode_special_tokens = True
        self._tokenizer = tokenizer
        self._unknown, self._byte, self._piece_bytes = _token_kinds(vocab, config)
        self._ids = np.sort(np.fromiter(vocab.values(), dtype=np.int64, count=len(vocab)))  # a second listing: 0.2 s
        self._byte_level = is_byte_level(config)  # for the vocabulary's listing, read from the config once
        self.path = path
        self.name = name or display_name(path)

    @property
    def tokenizer(self) -> tokenizers.Tokenizer:
        return self._tokenizer

    def vocabulary(self) -> HFVocabulary:
        return HFVocabulary(self._tokenizer, byte_level=self._byte_level, ids=self._ids)

    def pre_tokenizer(self) -> PreTokenizer | None:
        pre, normalizer = self._tokenizer.pre_tokenizer, self._tokenizer.normalizer
        if pre is None:
            return None
        try:  # the section alone: the whole file's serialization takes 0.7 s for Llama-3
            described = json.loads(pre.__getstate__()) or {}
        except Exception:  # noqa: BLE001 - a component that cannot serialize itself alone
            described = json.loads(self._tokenizer.to_str()).get("pre_tokenizer") or {}

        def split(text: str) -> tuple[str, list[tuple[int, int]]]:
            seen = normalizer.normalize_str(text) if normalizer is not None else text
            return seen, [offsets for _, offsets in pre.pre_tokenize_str(seen)]
        return PreTokenizer(_describe(described), split)

    def info(self) -> dict[str, str]:
        model = type(self._tokenizer.model).__name__
        return {
            "backend": "hf",
            "source": str(self.path),
            "sha256": sha256_file(str(self.path)),
            "model": model,
            "vocab_size": str(self._tokenizer.get_vocab_size(with_added_tokens=True)),
            "padding": "disabled" if self._had_padding else "off",
            "truncation": "disabled" if self._had_truncation else "off",
            "special_tokens": "not added, not recognised in text",
            "library": f"tokenizers {tokenizers.__version__}",
            **self.dropout_info(),
        }

    def dropout_info(self) -> dict[str, str]:
        """The signature's word on BPE dropout, only when the file switched it on."""
        return {"dropout": f"disabled (the file sets {self._had_dropout:.3g})"} if self._had_dropout else {}


def _switch_off_dropout(tokenizer: tokenizers.Tokenizer) -> float | None:
    """BPE dropout is a training-time regularizer: when a saved file sets it, the library skips
    each merge at random on every encode, so counts change from run to run (and the fast path,
    which has no dropout, disagrees with the library). It is switched off, as padding is; the
    rate the file set is returned for the signature (None when there was none)."""
    model = tokenizer.model
    rate = getattr(model, "dropout", None) if isinstance(model, tokenizers.models.BPE) else None
    if rate is None:
        return None
    model.dropout = None
    return float(rate) or None


def file_config(path: Path) -> dict | None:
    """The tokenizer.json as its file holds it: parsing it costs a quarter of serializing the
    loaded tokenizer again and parsing that (0.15 s against 0.7 s for Llama-3). None when it is
    not a JSON object with a typed model section: then ask the library."""
    try:
        data = json.loads(Path(path).read_bytes())
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("model"), dict) and "type" in data["model"] else None


def _check_ids(path: Path, vocab: dict[str, int]) -> None:
    """Refuse a token id past MAX_TOKEN_ID before anything is sized by ids: serializing a
    WordLevel vocabulary (`to_str`) alone allocates 16 bytes per id up to the largest, so one id
    of 2**32 asked for 64 GB; our per-id tables would want gigabytes more."""
    largest = max(vocab.values(), default=-1)
    if largest >= MAX_TOKEN_ID:
        token = next(t for t, i in vocab.items() if i == largest)
        check_token_id(path, largest, f"the id of token {token[:40]!r}", TokenizerError)


def _check_unknown_token(path: Path, tokenizer: tokenizers.Tokenizer, config: dict) -> None:
    """WordPiece and WordLevel need their unknown token in the vocabulary: without it the
    library fails on the first word it cannot spell, in the middle of an audit."""
    model = config.get("model") or {}
    kind = model.get("type") or type(tokenizer.model).__name__
    if kind not in ("WordPiece", "WordLevel"):
        return
    unk = model.get("unk_token")
    if not isinstance(unk, str) or tokenizer.token_to_id(unk) is None:
        raise TokenizerError(f"{path}: {kind} tokenizer without its unknown token ({unk!r} is not "
                             "in the vocabulary); add it to model.vocab")


# Bytes a byte-level vocabulary may leave out without losing text anyone writes: those UTF-8
# never holds (overlong leads C0 C1, leads past U+10FFFF F5-FF), the leads of planes 4-11, where
# nothing is assigned (F1 F2: StarCoder's vocabulary lacks F1), and the C0 controls other than
# tab, line feed and carriage return (Falcon's lacks 15 of them). Refusing a vocabulary for
# these would refuse real, correct tokenizers.
NOT_IN_TEXT = frozenset({*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F,
                         0xC0, 0xC1, 0xF1, 0xF2, *range(0xF5, 0x100)})


def _check_byte_alphabet(path: Path, vocab: dict[str, int], config: dict) -> None:
    """A byte-level BPE with neither an unknown token nor byte fallback must spell every byte
    written text holds (NOT_IN_TEXT aside): the library drops a byte missing from the
    vocabulary without a token (a BpeTrainer without `initial_alphabet` keeps only the bytes of
    its training text), so the text holding it would count short, and a script never seen in
    training would look better served than English (Bengali: 4 tokens for 82 bytes)."""
    model = config.get("model") or {}
    unk = model.get("unk_token")
    if model.get("type") != "BPE" or model.get("byte_fallback") or (isinstance(unk, str) and unk in vocab):
        return
    if "ByteLevel" not in json.dumps(config.get("pre_tokenizer")):
        return
    missing = sorted(b for symbol, b in byte_level_alphabet().items() if symbol not in vocab and b not in NOT_IN_TEXT)
    if missing:
        shown = " ".join(f"{b:02x}" for b in missing[:8]) + (" ..." if len(missing) > 8 else "")
        raise TokenizerError(f"{path}: byte-level BPE without {len(missing)} of the bytes UTF-8 text is made of "
                             f"(bytes {shown}) and without an unknown token or byte fallback: the library drops "
                             "those bytes without a token, so text holding them would count short (train with "
                             "initial_alphabet=pre_tokenizers.ByteLevel.alphabet())")


def _token_kinds(vocab: dict[str, int], config: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per id: is it the unknown token; is it raw bytes (`<0xE0>` fallback, or a byte-level
    token that is not whole UTF-8 characters); and for those raw bytes, how many bytes of
    text it stands for (-1 for every other id). The tables are sized by the largest id (checked
    on load, by `_check_ids`)."""
    model = config.get("model") or {}
    largest = max(vocab.values(), default=-1)
    size = largest + 1
    unknown, byte = np.zeros(size, dtype=bool), np.zeros(size, dtype=bool)
    piece_bytes = np.full(size, -1, dtype=np.int64)
    unk_token = model.get("unk_token")
    if isinstance(unk_token, str) and unk_token in vocab:
        unknown[vocab[unk_token]] = True
    if isinstance(model.get("unk_id"), int) and model["unk_id"] < size:
        unknown[model["unk_id"]] = True
    spelling = byte_level_spelling() if is_byte_level(config) else None
    if "\u2581" in vocab and _prepends_metaspace(config):  # the "▁" put before the text: no byte of it
        piece_bytes[vocab["\u2581"]] = 0
    for token, index in vocab.items():
        if model.get("byte_fallback") and len(token) == 6 and token.startswith("<0x") and token.endswith(">"):
            byte[index] = True
            piece_bytes[index] = 1
        elif spelling is not None and (raw := spelling.bytes_of(token)) is not None:
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                byte[index] = True
                piece_bytes[index] = len(raw)  # one alphabet character per byte
    return unknown, byte, piece_bytes


def is_byte_level(config: dict) -> bool:
    """Whether the pre-tokenizer or the decoder is (or holds) ByteLevel: the vocabulary then
    spells bytes in GPT-2's alphabet."""
    return "ByteLevel" in json.dumps(config.get("pre_tokenizer")) + json.dumps(config.get("decoder"))


def _prepends_metaspace(config: dict) -> bool:
    """Whether the tokenizer puts a "▁" in front of the text (a Metaspace pre-tokenizer that
    prepends, or a Prepend normalizer): that "▁" alone is a token standing for no byte of it."""
    def found(part) -> bool:
        if isinstance(part, dict):
            if part.get("type") == "Metaspace" and (part.get("prepend_scheme", "always") != "never"
                                                    and part.get("add_prefix_space", True)):
                return True
            if part.get("type") == "Prepend" and part.get("prepend") == "\u2581":
                return True
            return any(found(value) for value in part.values())
        if isinstance(part, list):
            return any(found(value) for value in part)
        return False
    return found(config.get("pre_tokenizer")) or found(config.get("normalizer"))


def _describe(pre_tokenizer: dict) -> str:
    """`Sequence[Split, ByteLevel]` from a tokenizer.json pre_tokenizer section."""
    kind = pre_tokenizer.get("type", "?")
    if kind == "Sequence":
        return "Sequence[" + ", ".join(_describe(p) for p in pre_tokenizer["pretokenizers"]) + "]"
    return kind


def load(reference: str, *, pattern: str | None = None) -> Tokenizer:
    """A tokenizer.json, or a folder holding one or vocab.json + merges.txt (`pattern` ignored:
    it carries its own pre-tokenizer)."""
    path = _locate(reference)
    if path.is_dir():
        return _from_vocab_and_merges(path)
    return HFTokenizer(path)


def _from_vocab_and_merges(folder: Path) -> HFTokenizer:
    """A GPT-2 style folder (vocab.json + merges.txt, no tokenizer.json) built as
    transformers' GPT2TokenizerFast converter builds it: byte-level BPE, its add_prefix_space
    from tokenizer_config.json (default off)."""
    from tokenizers import decoders, models, pre_tokenizers

    config: dict = {}
    try:
        loaded = json.loads(read_file_capped(folder / "tokenizer_config.json", MAX_TOKENIZER_FILE_BYTES,
                                             "tokenizer_config.json", TokenizerError))
        config = loaded if isinstance(loaded, dict) else {}
    except (TokenizerError, ValueError, RecursionError):
        pass
    vocab, merges = folder / "vocab.json", folder / "merges.txt"
    for file in (vocab, merges):
        check_file_size(file, MAX_TOKENIZER_FILE_BYTES, file.name, TokenizerError)
    try:
        with native_errors(folder):
            bpe = models.BPE.from_file(str(vocab), str(merges))
    except TokenizerError:
        raise TokenizerError(f"{folder}: vocab.json + merges.txt do not form a BPE vocabulary "
                             "(corrupt or mismatched files)") from None
    except Exception as err:  # noqa: BLE001 - tokenizers raises plain Exception on bad files
        raise TokenizerError(f"{folder}: vocab.json + merges.txt do not load ({err})") from None
    tokenizer = tokenizers.Tokenizer(bpe)
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=bool(config.get("add_prefix_space", False)))
    tokenizer.decoder = decoders.ByteLevel()
    return HFTokenizer(vocab, name=display_name(folder / "tokenizer.json"), built=tokenizer)
