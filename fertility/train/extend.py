"""`fertility extend`: add tokens for under-served languages to an existing byte-level BPE.

What people ask of Llama-3 and friends when the model's vocabulary cannot be retrained: new
tokens appended after every existing id (special tokens included), new merges appended after
every existing merge. BPE applies merges lowest rank first, so on any text the old merges all
fire first exactly as before; a new merge can then only fire where its two halves meet. Every
new token carries at least one UTF-8 lead pair that only the corpus's own scripts use (e.g.
E0 A6 / E0 A7 for Bengali), so text without those scripts encodes to the same ids as before;
the report proves it on held-out text, line by line.

How merges are learned: the corpus is pre-tokenized with the base tokenizer's own pre-tokenizer,
each pre-token encoded by the base model, and each base id stood in for by one supplementary
plane character; a plain `tokenizers` BpeTrainer then learns merges over those ids, which are
written back as byte-level strings. `--split marks` first switches the base pre-tokenizer's
split to keep combining marks with their letters (what else that changes is reported).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fertility.choices import EXTEND_SPLITS as SPLITS
from fertility.errors import TokenizerError, UsageError
from fertility.hashing import sha256_file
from fertility.io.corpus import read_corpus
from fertility.io.numbers import MAX_COUNT, MAX_VOCAB_SIZE, whole
from fertility.io.samples import samples_dir
from fertility.results import contract
from fertility.results.signature import library_versions
from fertility.version import __version__

from .byte_level import holds_lead_pair, script_lead_pairs
from .languages import by_language
from .output_folder import check_output, write_folder
from .tokenizer_json import load_base, measuring, merge_pair, split_nodes, with_mark_aware_split

_OFFSET = 0x10000  # base id i trains as chr(0x10000 + i): no surrogates, no separators


@dataclass(frozen=True)
class Extended:
    output: Path
    added: int
    record: dict
    changed_lines: dict[str, tuple[int, int]] = field(default_factory=dict)  # lang -> (changed, lines)


def learn_merges(base, texts: Iterable[str], *, add: int, pairs: frozenset[bytes],
                 vocab: dict[str, int], min_frequency: int = 2,
                 show_progress: bool = False) -> list[tuple[str, str]]:
    """Merges over the base model's tokens that add up to `add` new tokens of these scripts."""
    from tokenizers import Tokenizer, models, trainers

    words: Counter[str] = Counter()
    for text in texts:
        for piece, _ in base.pre_tokenizer.pre_tokenize_str(text):
            if holds_lead_pair(piece, pairs):
                words[piece] += 1
    id_to_token = {i: t for t, i in vocab.items()}
    mapped: Counter[str] = Counter()
    for word, n in words.items():
        ids = [tok.id for tok in base.model.tokenize(word)]
        if len(ids) > 1:
            mapped["".join(chr(_OFFSET + i) for i in ids)] += n
    alphabet = {c for word in mapped for c in word}

    def decode(piece: str) -> str:
        return "".join(id_to_token[ord(c) - _OFFSET] for c in piece)

    wanted = add
    for _ in range(6):  # some learned merges rebuild existing tokens or mix scripts: ask for more
        trainer_tokenizer = Tokenizer(models.BPE())
        trainer = trainers.BpeTrainer(vocab_size=len(alphabet) + wanted + 64, min_frequency=min_frequency,
                                      show_progress=show_progress)
        batch = [word for word, n in mapped.items() for _ in range(n)]
        trainer_tokenizer.train_from_iterator(batch, trainer)
        learned = json.loads(trainer_tokenizer.to_str())["model"]["merges"]
        known, chosen, new = set(vocab), [], 0
        for merge in learned:
            left, right = (decode(p) for p in merge_pair(merge))
            token = left + right
            if left not in known or right not in known or not holds_lead_pair(token, pairs):
                continue
            chosen.append((left, right))
            if token not in known:
                known.add(token)
                new += 1
                if new == add:
                    return chosen
        if len(learned) < wanted:  # the corpus has no more pairs seen min_frequency times
            return chosen
        wanted = min(int(wanted * 1.5) + 100, MAX_VOCAB_SIZE)  # the trainer reserves room for all
    return chosen


def extended_config(config: dict, merges: Sequence[tuple[str, str]]) -> tuple[dict, int]:
    """The base config with new tokens after every existing id and new merges after the old."""
    out = json.loads(json.dumps(config))
    model = out["model"]
    vocab: dict[str, int] = model["vocab"]
    # `tokenizers` numbers added tokens from the model's vocabulary size, not by their saved
    # ids: with new ids after them they would shift, unless the model's vocabulary holds them.
    for special in out.get("added_tokens") or []:
        vocab.setdefault(special["content"], special["id"])
    next_id = max(vocab.values()) + 1
    if sorted(vocab.values()) != list(range(next_id)):
        raise TokenizerError("the base tokenizer's ids are not contiguous (or two tokens share an id); "
                             "extend can only append after a contiguous vocabulary")
    added = 0
    as_strings = bool(model["merges"]) and isinstance(model["merges"][0], str)
    if any(" " in part for merge in merges for part in merge):
        as_strings = False
        model["merges"] = [list(merge_pair(m)) for m in model["merges"]]
    for left, right in merges:
        token = left + right
        if token not in vocab:
            vocab[token] = next_id
            next_id += 1
            added += 1
        model["merges"].append(f"{left} {right}" if as_strings else [left, right])
    return out, added


def changed_lines(before, after, documents) -> dict[str, tuple[int, int]]:
    """Per language: how many lines encode to different ids, out of how many."""
    out = {}
    for lang, texts in by_language(documents).items():
        old = before.encode_batch(texts, add_special_tokens=False)
        new = after.encode_batch(texts, add_special_tokens=False)
        out[lang] = (sum(a.ids != b.ids for a, b in zip(old, new)), len(texts))
    return out


def check_old_ids(before, after, n_ids: int) -> None:
    """Every base id decodes to the same text in the extended tokenizer (else a bug of ours)."""
    ids = list(range(n_ids))
    old = before.decode_batch([[i] for i in ids], skip_special_tokens=False)
    new = after.decode_batch([[i] for i in ids], skip_special_tokens=False)
    wrong = [i for i, a, b in zip(ids, old, new) if a != b]
    if wrong:
        raise RuntimeError(f"{len(wrong)} base ids decode differently after extending (first: {wrong[0]})")


def extend(base_path: Path, corpus_paths: list[Path], *, add: int, output: Path, split: str = "keep",
           check_corpus: list[Path] | None = None, min_frequency: int = 2, force: bool = False,
           show_progress: bool = False) -> Extended:
    whole(add, option="--add", low=1, high=MAX_VOCAB_SIZE)
    whole(min_frequency, option="min_frequency", low=0, high=MAX_COUNT)
    if split not in SPLITS:
        raise UsageError(f"--split {split!r}: choose one of {', '.join(SPLITS)}")
    check_output(output, force=force)
    config = load_base(base_path)
    corpus = read_corpus(corpus_paths)
    started = time.perf_counter()
    base = measuring(config)
    working = with_mark_aware_split(config, base_path) if split == "marks" else config
    resplit = measuring(working)
    n_base = base.get_vocab_size(with_added_tokens=True)
    if n_base + add > MAX_VOCAB_SIZE:  # the trainer below reserves room for that many up front
        raise UsageError(f"--add {add:,}: {base_path} already has {n_base:,} ids, and a vocabulary holds at "
                         f"most {MAX_VOCAB_SIZE:,}")
    scripts = sorted(set(corpus.scripts.values()))
    pairs = script_lead_pairs(scripts)
    if not pairs:
        raise UsageError(f"{', '.join(map(str, corpus_paths))}: no script of this corpus "
                         f"({', '.join(scripts)}) has UTF-8 bytes of its own; extend adds tokens for "
                         "scripts other than Latin/Common text")
    merges = learn_merges(resplit, (d.text for d in corpus.documents), add=add, pairs=pairs,
                          vocab=working["model"]["vocab"], min_frequency=min_frequency,
                          show_progress=show_progress)
    new_config, added = extended_config(working, merges)
    text = json.dumps(new_config, ensure_ascii=False, indent=2)
    extended = measuring(new_config)
    n_old = base.get_vocab_size(with_added_tokens=True)
    check_old_ids(base, extended, n_old)
    held = read_corpus(check_corpus or [samples_dir()])
    changes = changed_lines(base, extended, held.documents)
    split_changes = changed_lines(base, resplit, held.documents) if split == "marks" else {}
    record = contract.stamped("extend", {
        "fertility_version": __version__,
        "command": "extend",
        "arguments": {"base": str(base_path), "corpus": [str(p) for p in corpus_paths], "add": add,
                      "split": split, "min_frequency": min_frequency,
                      "held_out": [str(p) for p in check_corpus or []] or "bundled samples"},
        "base": {"sha256": sha256_file(str(base_path)), "ids": n_old,
                 "merges": len(config["model"]["merges"])},
        "corpus": {"sha256": corpus.sha256, "files": len(corpus.files), "documents": len(corpus.documents),
                   "scripts": scripts},
        "added_tokens": added,
        "first_new_id": n_old if added else None,
        "added_merges": len(merges),
        "split_pattern": [s["pattern"]["Regex"] for s in split_nodes(working.get("pre_tokenizer"))],
        "held_out_changed_lines": {lang: {"changed": c, "lines": n} for lang, (c, n) in changes.items()},
        "split_alone_changed_lines": {lang: {"changed": c, "lines": n} for lang, (c, n) in split_changes.items()},
        "seconds": round(time.perf_counter() - started, 2),
        "libraries": library_versions(),
    })
    write_folder(text, record, output, force=force, schema="extend")
    return Extended(output, added, record, changes)
