"""Superword tokens: a second BPE stage whose merges may cross the space between words.

Stage one is an ordinary `fertility retrain` tokenizer: the mark-aware split (`bpe.MARKS`)
keeps words apart, so no token spans two words. Stage two continues from its vocabulary with a
split that joins words separated by one space (or, with grapheme units, a comma-like mark) into
one pre-token, never across sentence-final punctuation (`.` `।` `。` ...), other punctuation,
digits or any other whitespace (newlines above all), and learns a share of the vocabulary there.

`tokenizers` cannot continue training from merges, so stage two trains over stage one's own
tokens: every stage-one id stands as one private-use character, each joined pre-token is one
word of the trainer, and the merges it learns are written back as pairs of stage-one token
strings appended after every stage-one merge. The result is one plain BPE tokenizer.json whose
pre-tokenizer is the joining split, and it encodes exactly as the two stages claim:

1. the joining split only joins stage-one pre-tokens at boundaries where the left one ends in a
   letter, mark or comma and the right one starts with a space (or, graphemes only, a letter
   after a comma): a junction pair of characters no stage-one pre-token contains, so no
   stage-one token contains it either, and no stage-one merge can fire across the junction.
   Stage-one merges therefore build, inside each joined pre-token, exactly the tokens stage one
   builds word by word. (With byte units a non-ASCII space such as U+3000 followed by a space
   can leave a junction byte pair inside a whitespace token; the few stage-one merges that hold
   one are dropped before stage two and counted in training.json.)
2. stage-two merges rank after all stage-one merges, and none of them makes a string that is
   already a token: once one fires, no stage-one merge can fire again, so stage two is plain
   BPE with its own merges over the sequence of stage-one tokens of each joined pre-token.

tests/train/test_superwords.py checks both on real text, line by line, against an independent
re-implementation of the two stages. Parity carries over: with the parity trainer, each merge
of stage two goes to the language whose dev text is longest in tokens (its worst premium), with
the dev lengths estimated from how much each language's training text has shrunk (see
superword_text.parity_ratios), so stage two follows stage one's rule.

Here: the settings, their checks, and stage two itself. The joining split is superword_split.py,
the trainer's text superword_text.py, and the record of what stage two added superword_report.py.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fertility.choices import TRAIN_PATTERN_NAMES
from fertility.errors import UsageError

from .bpe import MARKS
from .parity_trainer import ParitySettings
from .superword_split import holds_junction, joining_pattern
from .superword_text import MAX_STAGE_ONE, SEPARATOR, StageTwoText, parity_ratios, stage_one_id
from .tokenizer_json import split_nodes

if TYPE_CHECKING:
    import tokenizers


@dataclass(frozen=True)
class SuperwordSettings:
    fraction: float  # share of the vocabulary learned in stage two

    def fragment(self) -> dict:
        return {"fraction": self.fraction}


def check_superword_options(settings: SuperwordSettings, *, vocab_size: int, pattern: str) -> int:
    """Refuse what stage two would refuse, before any corpus is read; return stage one's size."""
    if not 0 < settings.fraction < 1:
        raise UsageError(f"--superwords {settings.fraction}: give the share of the vocabulary learned "
                         "across words, between 0 and 1 (e.g. 0.2)")
    if pattern != TRAIN_PATTERN_NAMES[0]:
        raise UsageError(f"--superwords needs the default mark-aware split (--pattern {TRAIN_PATTERN_NAMES[0]}); "
                         f"it widens that split's words, and {pattern!r} is another one")
    first = vocab_size - round(vocab_size * settings.fraction)
    if first == vocab_size:
        raise UsageError(f"--superwords {settings.fraction} of --vocab-size {vocab_size} is not one token; "
                         "give a larger share")
    if first > MAX_STAGE_ONE:
        raise UsageError(f"--superwords trains stage two over stage one's ids, at most {MAX_STAGE_ONE:,} of "
                         f"them; --vocab-size {vocab_size} leaves stage one {first:,}")
    if first < 300:
        raise UsageError(f"--superwords {settings.fraction} leaves stage one {first} tokens of --vocab-size "
                         f"{vocab_size}; it needs at least 300 (256 bytes come first)")
    return first



@dataclass(frozen=True)
class StageTwo:
    tokenizer: tokenizers.Tokenizer
    first_id: int  # ids from here on are stage two's
    record: dict


def add_superwords(stage_one: tokenizers.Tokenizer, *, units: str, train: dict[str, list[str]],
                   add: int, trainer: str, dev: dict[str, list[str]] | None = None,
                   ratios: dict[str, float] | None = None, settings: SuperwordSettings,
                   parity: ParitySettings, min_frequency: int = 2, show_progress: bool = False) -> StageTwo:
    """Stage two: `add` tokens learned over stage one's tokens with the joining split.

    `train` (and `dev`, `ratios`) are keyed by language as for stage one; `trainer` is "parity"
    (stage one's rule, see superword_text.parity_ratios) or "bpe" (one pool, the most frequent pair first)."""
    import tokenizers
    from tokenizers import models, pre_tokenizers, trainers

    started = time.perf_counter()
    config = json.loads(stage_one.to_str())
    splits = split_nodes(config.get("pre_tokenizer"))
    if len(splits) != 1 or splits[0].get("pattern", {}).get("Regex") != MARKS:
        raise UsageError("--superwords continues a tokenizer split by the mark-aware pattern; this one is not")
    splits[0]["pattern"]["Regex"] = joining_pattern(units)
    model = config["model"]
    vocab: dict[str, int] = model["vocab"]
    n_first = len(vocab)
    if sorted(vocab.values()) != list(range(n_first)):
        raise RuntimeError("stage one's ids are not contiguous")
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ", 1)) for m in model["merges"]]
    kept = [m for m in merges if not holds_junction(m[0] + m[1], units)]
    dropped = len(merges) - len(kept)
    model["merges"] = [list(m) for m in kept]
    bridge = tokenizers.Tokenizer.from_str(json.dumps(config))

    byte_ids = frozenset(vocab[f"<0x{b:02X}>"] for b in range(256)) if model.get("byte_fallback") else frozenset()
    text = StageTwoText(bridge, byte_ids)
    langs = list(train)
    mapped = {lang: text.map(train[lang], lang) for lang in langs}
    targets = parity_ratios(text, train, dev, ratios, units) if trainer == "parity" else None
    encoded = time.perf_counter()

    separator = tokenizers.Tokenizer(models.BPE())
    separator.pre_tokenizer = pre_tokenizers.Split(SEPARATOR, behavior="removed")
    wanted = add + add // 50 + 50  # a few learned merges rebuild a string that is already a token
    if targets is not None:
        trainers.ParityBpeTrainer(
            num_merges=wanted, variant=parity.variant, min_frequency=min_frequency,
            global_merges=int(wanted * parity.global_merges), window_size=parity.window_size,
            alpha=parity.alpha, show_progress=show_progress,
        ).train_from_iterator(separator, [iter(mapped[lang]) for lang in langs],
                              ratio=[targets[lang] for lang in langs])
    else:
        alphabet = {c for texts in mapped.values() for t in texts for c in t} - {SEPARATOR}
        bpe = trainers.BpeTrainer(vocab_size=len(alphabet) + wanted, min_frequency=min_frequency,
                                  show_progress=show_progress)
        separator.train_from_iterator((t for lang in langs for t in mapped[lang]), bpe)
    learned = json.loads(separator.to_str())["model"]["merges"]
    trained = time.perf_counter()

    id_to_token = {i: t for t, i in vocab.items()}

    def text_of(symbols: str) -> str:
        return "".join(id_to_token[stage_one_id(c)] for c in symbols)

    new_merges: list[list[str]] = []
    collisions, longest = 0, 0
    for merge in learned:
        if len(new_merges) == add:
            break
        symbols = merge if isinstance(merge, list) else merge.split(" ", 1)
        left, right = (text_of(p) for p in symbols)
        if left not in vocab or right not in vocab:
            raise RuntimeError(f"stage two learned a merge of unknown tokens: {left!r} + {right!r}")
        token = left + right
        if token in vocab:  # stage-one merges could then fire again: the claim above would not hold
            collisions += 1
            continue
        vocab[token] = len(vocab)
        new_merges.append([left, right])
        longest = max(longest, len(symbols[0]) + len(symbols[1]))
    model["merges"].extend(new_merges)
    tokenizer = tokenizers.Tokenizer.from_str(json.dumps(config))
    record = {
        "fraction": settings.fraction, "trainer": trainer,
        "parity_targets": None if targets is None else
        {"from": "dev set" if dev is not None else "target ratios", "ratios": targets},
        "pattern_regex": joining_pattern(units),
        "stage_one": {"vocab_size": n_first, "merges": len(kept),
                      "merges_dropped_for_holding_a_junction": dropped},
        "stage_two": {"asked": add, "added_tokens": len(new_merges), "learned_merges": len(learned),
                      "merges_skipped_as_existing_tokens": collisions,
                      "longest_in_stage_one_tokens": longest,
                      "training_tokens": dict(text.n_tokens),
                      "seconds_encoding": round(encoded - started, 2),
                      "seconds_training": round(trained - encoded, 2)},
    }
    return StageTwo(tokenizer, n_first, record)
