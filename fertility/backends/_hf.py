"""Hugging Face `tokenizers` backend: tokenizer.json files, folders, and the local hub cache.

Saved tokenizers may switch on padding and truncation (BERT exports often do): both would
silently change token counts, so they are switched off and the signature says so. Special
tokens are neither added nor recognised inside the text.
"""

from __future__ import annotations

import json
import os
from itertools import chain
from pathlib import Path

import numpy as np
import tokenizers

from fertility.errors import TokenizerError

from . import Encoded, PreTokenizer, Tokenizer, Tokens
from ._common import char_spans_to_bytes, display_name, exact_piece_spans, native_errors, sha256_file


def hub_cache_dir() -> Path:
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    home = Path(os.environ.get("HF_HOME", Path.home() / ".cache" / "huggingface"))
    return home / "hub"


def find_in_hub_cache(repo_id: str, filename: str = "tokenizer.json") -> Path | None:
    """The cached file of a hub model (refs/main), found by `huggingface_hub` itself, else None."""
    from huggingface_hub import try_to_load_from_cache

    try:
        found = try_to_load_from_cache(repo_id, filename, cache_dir=hub_cache_dir())
    except ValueError:  # not a valid repo id
        return None
    return Path(found) if isinstance(found, str) and Path(found).is_file() else None


def hub_snapshots(repo_id: str) -> list[Path]:
    """A cached hub model's snapshot folders as `huggingface_hub.scan_cache_dir` reports them:
    the one refs/main points to first, then newest first."""
    from huggingface_hub import scan_cache_dir

    try:
        cache = scan_cache_dir(hub_cache_dir())
    except Exception:  # noqa: BLE001 - CacheNotFound, or a cache it cannot read: nothing cached
        return []
    for repo in cache.repos:
        if repo.repo_id == repo_id and repo.repo_type == "model":
            revisions = sorted(repo.revisions, key=lambda r: ("main" not in r.refs, -r.last_modified))
            return [Path(r.snapshot_path) for r in revisions]
    return []


def find_folder_in_hub_cache(repo_id: str) -> tuple[str, Path] | None:
    """(scheme, file) of the tokenizer a cached snapshot holds (tokenizer.json or any other format)."""
    from . import folder_tokenizer

    for snapshot in hub_snapshots(repo_id):
        found = folder_tokenizer(snapshot)
        if found is not None:
            return found
    return None


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
    if reference.count("/") <= 1 and not reference.endswith(".json"):
        cached = find_in_hub_cache(reference)
        if cached is None and (found := find_folder_in_hub_cache(reference)) is not None:
            cached = found[1]
        if cached is None:
            raise TokenizerError(f"{reference}: hub model not in the local Hugging Face cache "
                                 f"({hub_cache_dir()}); we never download: run "
                                 f"`huggingface-cli download {reference} tokenizer.json` where "
                                 "there is a network, or pass a path to tokenizer.json")
        return cached
    raise TokenizerError(f"{reference}: no such file or directory")


class HFEncoding:
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
        try:
            tokenizer = built or tokenizers.Tokenizer.from_file(str(path))
        except Exception as err:  # noqa: BLE001 - the Rust side raises plain Exception with a parse message
            first = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise TokenizerError(f"{path}: not a valid Hugging Face tokenizer.json ({first})") from None
        config = json.loads(tokenizer.to_str())  # read once: a large vocabulary takes a second
        _check_unknown_token(path, tokenizer, config)
        self._had_padding = tokenizer.padding is not None
        self._had_truncation = tokenizer.truncation is not None
        tokenizer.no_padding()
        tokenizer.no_truncation()
        tokenizer.encode_special_tokens = True
        self._tokenizer = tokenizer
        self._unknown, self._byte, self._piece_bytes = _token_kinds(tokenizer, config)
        self.path = path
        self.name = name or display_name(path)

    @property
    def tokenizer(self) -> tokenizers.Tokenizer:
        return self._tokenizer

    def pre_tokenizer(self) -> PreTokenizer | None:
        pre, normalizer = self._tokenizer.pre_tokenizer, self._tokenizer.normalizer
        if pre is None:
            return None
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
        }


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


def _byte_level_alphabet() -> dict[str, int]:
    """GPT-2's printable stand-ins for the 256 bytes (as in `tokenizers`' ByteLevel)."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
                 *range(ord("®"), ord("ÿ") + 1)]
    chars, extra = {}, 0
    for byte in range(256):
        if byte in printable:
            chars[chr(byte)] = byte
        else:
            chars[chr(256 + extra)] = byte
            extra += 1
    return chars


def _token_kinds(tokenizer: tokenizers.Tokenizer, config: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per id: is it the unknown token; is it raw bytes (`<0xE0>` fallback, or a byte-level
    token that is not whole UTF-8 characters); and for those raw bytes, how many bytes of
    text it stands for (-1 for every other id)."""
    model = config.get("model") or {}
    vocab = tokenizer.get_vocab(with_added_tokens=True)
    size = max(vocab.values(), default=-1) + 1
    unknown, byte = np.zeros(size, dtype=bool), np.zeros(size, dtype=bool)
    piece_bytes = np.full(size, -1, dtype=np.int64)
    unk_token = model.get("unk_token")
    if isinstance(unk_token, str) and unk_token in vocab:
        unknown[vocab[unk_token]] = True
    if isinstance(model.get("unk_id"), int) and model["unk_id"] < size:
        unknown[model["unk_id"]] = True
    byte_level = "ByteLevel" in json.dumps(config.get("pre_tokenizer")) + json.dumps(config.get("decoder"))
    alphabet = _byte_level_alphabet() if byte_level else {}
    if "\u2581" in vocab and _prepends_metaspace(config):  # the "▁" put before the text: no byte of it
        piece_bytes[vocab["\u2581"]] = 0
    for token, index in vocab.items():
        if model.get("byte_fallback") and len(token) == 6 and token.startswith("<0x") and token.endswith(">"):
            byte[index] = True
            piece_bytes[index] = 1
        elif alphabet and all(c in alphabet for c in token):
            try:
                bytes(alphabet[c] for c in token).decode("utf-8")
            except UnicodeDecodeError:
                byte[index] = True
                piece_bytes[index] = len(token)  # one alphabet character per byte
    return unknown, byte, piece_bytes


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
    """A tokenizer.json (`pattern` ignored: it carries its own pre-tokenizer); a hub snapshot
    holding another format instead (tokenizer.model, tekken.json, .tiktoken) is loaded by
    that format's backend."""
    path = _locate(reference)
    if path.is_dir():
        return _from_vocab_and_merges(path)
    if path.name != "tokenizer.json" and not Path(reference).exists():  # found in the hub cache
        from . import BACKENDS, _resolve, sniff_format

        if path.name in ("vocab.json", "merges.txt"):
            return _from_vocab_and_merges(path.parent)
        if path.name == "tokenizer_config.json":
            return _resolve(BACKENDS["transformers"])(str(path.parent), pattern=pattern)
        return _resolve(BACKENDS[sniff_format(path)])(str(path), pattern=pattern)
    return HFTokenizer(path)


def _from_vocab_and_merges(folder: Path) -> HFTokenizer:
    """A GPT-2 style folder (vocab.json + merges.txt, no tokenizer.json) built as
    transformers' GPT2TokenizerFast converter builds it: byte-level BPE, its add_prefix_space
    from tokenizer_config.json (default off)."""
    from tokenizers import decoders, models, pre_tokenizers

    config: dict = {}
    try:
        loaded = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
        config = loaded if isinstance(loaded, dict) else {}
    except (OSError, ValueError, UnicodeDecodeError):
        pass
    vocab, merges = folder / "vocab.json", folder / "merges.txt"
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
