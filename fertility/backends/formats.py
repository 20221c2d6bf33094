"""Which format a tokenizer file or model folder holds, told from its content, never its name.

A user points at `tokenizer.json`, `model.gguf` or a downloaded snapshot; the loader must pick
the backend before it can parse anything, and a misnamed file (a GGUF saved as `.bin`, a
tokenizer.json without its name) must still load. Reading a few kilobytes answers it.
"""

from __future__ import annotations

import json
from pathlib import Path

from fertility.errors import TokenizerError

# What a model folder (or hub snapshot) may hold, in the order we use it: scheme, file patterns.
FOLDER_FILES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("hf", ("tokenizer.json",)),
    ("hf", ("vocab.json", "merges.txt")),  # GPT-2 style byte-level BPE, before tokenizer.json existed
    ("tekken", ("tekken.json",)),
    ("spm", ("tokenizer.model",)), ("spm", ("spiece.model",)), ("spm", ("sentencepiece.bpe.model",)),
    ("spm", ("*.model",)), ("spm", ("*.model.v*",)),
    ("tiktoken", ("*.tiktoken",)),
    ("gguf", ("*.gguf",)),
    ("transformers", ("tokenizer_config.json",)),  # vocab.txt (BERT) and other slow-only folders
)


def folder_tokenizer(path: Path) -> tuple[str, Path] | None:
    """(scheme, file or folder to load) for a model folder, else None."""
    for scheme, patterns in FOLDER_FILES:
        found = [sorted(p for p in path.glob(pattern) if p.is_file()) for pattern in patterns]
        if all(found):
            return scheme, (found[0][0] if len(patterns) == 1 else path)
    return None


def sniff_format(path: Path) -> str:
    """Tell a tokenizer file's format from its content, not its name."""
    if path.is_dir():
        found = folder_tokenizer(path)
        if found is None:
            raise TokenizerError(f"{path}: directory holds no tokenizer file (tokenizer.json, vocab.json + "
                                 "merges.txt, a SentencePiece .model, tekken.json, .tiktoken, .gguf or tokenizer_config.json)")
        return found[0]
    try:
        with path.open("rb") as handle:
            head = handle.read(4096)
    except OSError as err:
        raise TokenizerError(f"{path}: cannot read ({err.strerror})") from None
    if not head:
        raise TokenizerError(f"{path}: empty file, not a tokenizer")
    if head[:4] == b"GGUF":  # llama.cpp model files, whatever their name
        return "gguf"
    stripped = head.lstrip()
    if stripped.startswith(b"{"):
        return _sniff_json(path)
    first_line = head.split(b"\n", 1)[0].split()
    if len(first_line) == 2 and first_line[1].isdigit():
        return "tiktoken"
    if head[:1] == b"\x0a":  # protobuf field 1 (pieces), as every SentencePiece model starts
        return "spm"
    raise TokenizerError(f"{path}: unknown tokenizer format (expected a Hugging Face "
                         "tokenizer.json, a SentencePiece .model, a .tiktoken ranks file or "
                         "a Tekken JSON or a GGUF model file)")


def _sniff_json(path: Path) -> str:
    with path.open("rb") as handle:
        head = handle.read(4096)
    if b'"config"' in head and b'"pattern"' in head:  # Tekken writes its config first
        return "tekken"
    if b'"truncation"' in head or b'"added_tokens"' in head:  # tokenizers writes these first
        return "hf"
    from fertility.limits import MAX_TOKENIZER_FILE_BYTES, read_file_capped

    try:
        data = json.loads(read_file_capped(path, MAX_TOKENIZER_FILE_BYTES, "tokenizer file", TokenizerError))
    except (ValueError, UnicodeDecodeError) as err:
        raise TokenizerError(f"{path}: corrupt JSON ({err})") from None
    except RecursionError:
        raise TokenizerError(f"{path}: corrupt JSON (nested too deeply to read)") from None
    if isinstance(data, dict) and "model" in data and "pre_tokenizer" in data:
        return "hf"
    if isinstance(data, dict) and "config" in data and "vocab" in data:
        return "tekken"
    raise TokenizerError(f"{path}: JSON file is neither a Hugging Face tokenizer.json "
                         "(needs 'model') nor a Tekken tokenizer (needs 'config' and 'vocab')")
