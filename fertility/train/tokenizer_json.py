"""A tokenizer.json read and edited as a dict: its Split pre-tokenizers, its merges, a base for `extend`.

`tokenizers` offers no API to append merges or to change a split regex, so `extend` and the
superwords' second stage edit the saved JSON and load the result back. What they need to find
in it, and the checks that a file is the byte-level BPE they can edit, are here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from fertility.errors import TokenizerError, UsageError
from fertility.limits import MAX_TOKENIZER_FILE_BYTES, read_file_capped

if TYPE_CHECKING:
    import tokenizers


def mark_aware(pattern: str) -> str:
    r"""The same split with combining marks kept beside letters: `\p{L}` -> `[\p{L}\p{M}]`
    outside a class, `\p{L}\p{M}` inside one."""
    out, inside, i = [], False, 0
    while i < len(pattern):
        if pattern[i] == "\\":
            piece = pattern[i:i + 5]
            if piece == r"\p{L}":
                out.append(r"\p{L}\p{M}" if inside else r"[\p{L}\p{M}]")
                i += 5
                continue
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if pattern[i] == "[" and not inside:
            inside = True
        elif pattern[i] == "]" and inside:
            inside = False
        out.append(pattern[i])
        i += 1
    return "".join(out)


def split_nodes(node: object) -> list[dict]:
    """Every Split pre-tokenizer in a (possibly nested) pre_tokenizer description."""
    if isinstance(node, dict):
        found = [node] if node.get("type") == "Split" else []
        for child in node.get("pretokenizers") or []:
            found.extend(split_nodes(child))
        return found
    return []


def _is_byte_level(config: dict) -> bool:
    def has(node: object) -> bool:
        if isinstance(node, dict):
            return node.get("type") == "ByteLevel" or any(has(c) for c in node.get("pretokenizers") or [])
        return False
    return has(config.get("pre_tokenizer"))


def load_base(path: Path) -> dict:
    """The base tokenizer.json as a dict, refused unless it is a byte-level BPE."""
    data = read_file_capped(path, MAX_TOKENIZER_FILE_BYTES, "tokenizer.json")
    try:
        config = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise TokenizerError(f"{path}: not a tokenizer.json (not JSON); extend needs a byte-level "
                             "BPE tokenizer.json") from None
    except ValueError as err:  # an integer of over 4,300 digits, which Python will not convert
        raise TokenizerError(f"{path}: not a tokenizer.json ({err}); extend needs a byte-level "
                             "BPE tokenizer.json") from None
    model = config.get("model") if isinstance(config, dict) else None
    if not isinstance(model, dict) or model.get("type") != "BPE":
        kind = model.get("type") if isinstance(model, dict) else "no model"
        raise TokenizerError(f"{path}: is a {kind} tokenizer; extend needs a byte-level BPE tokenizer.json")
    if not _is_byte_level(config) or not isinstance(model.get("vocab"), dict) or \
            not isinstance(model.get("merges"), list):
        raise TokenizerError(f"{path}: is a BPE without a byte-level pre-tokenizer; extend needs a "
                             "byte-level BPE tokenizer.json (as GPT-2, Llama-3, Qwen)")
    import tokenizers
    try:
        tokenizers.Tokenizer.from_str(data.decode("utf-8"))
    except Exception as err:  # noqa: BLE001 (the Rust side raises plain Exception with a parse message)
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise TokenizerError(f"{path}: not a valid tokenizer.json ({first})") from None
    return config


def merge_pair(merge: object) -> tuple[str, str]:
    """A saved merge, written as "left right" or as [left, right]."""
    if isinstance(merge, str):
        left, _, right = merge.partition(" ")
        return left, right
    left, right = merge  # type: ignore[misc]
    return left, right


def measuring(config: dict) -> tokenizers.Tokenizer:
    """The tokenizer of `config` as extend measures with it: BPE dropout (a training-time setting
    that skips merges at random on every encode) off, so the lines it reports as changed are the
    merges' doing, not chance; the file written keeps the base's setting."""
    import tokenizers

    model = config.get("model") or {}
    if model.get("dropout"):
        config = {**config, "model": {**model, "dropout": None}}
    return tokenizers.Tokenizer.from_str(json.dumps(config))


def with_mark_aware_split(config: dict, base_path: Path) -> dict:
    """A copy of the config whose Split regexes keep combining marks with letters (`--split marks`)."""
    splits = split_nodes(config.get("pre_tokenizer"))
    patterns = [s.get("pattern", {}).get("Regex") for s in splits]
    if not patterns or not all(isinstance(p, str) and r"\p{L}" in p for p in patterns):
        raise UsageError(f"{base_path}: --split marks needs a Split pre-tokenizer whose regex uses "
                         r"\p{L}; this one has none")
    working = json.loads(json.dumps(config))
    for node in split_nodes(working["pre_tokenizer"]):
        node["pattern"]["Regex"] = mark_aware(node["pattern"]["Regex"])
    return working
