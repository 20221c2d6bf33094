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

tests/test_superwords.py checks both on real text, line by line, against an independent
re-implementation of the two stages. Parity carries over: with the parity trainer, each merge
of stage two goes to the language whose dev text is longest in tokens (its worst premium), with
the dev lengths estimated from how much each language's training text has shrunk (see
_parity_ratios), so stage two follows stage one's rule.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import regex

from ..errors import UsageError
from ..text.units import count_graphemes
from .bpe import MARKS, SENTENCE_PUNCTUATION, TRAIN_PATTERN_NAMES, ParitySettings
from .extend import split_nodes, token_bytes

if TYPE_CHECKING:
    import tokenizers

# The sentence punctuation a word keeps (bpe.SENTENCE_PUNCTUATION), split by what it ends:
# a sentence (superwords never cross it) or a clause (they may).
FINAL_PUNCTUATION = ".।॥。።۔။។"
PAUSE_PUNCTUATION = ",，、፣،၊"
_WORD = r" ?[\p{L}\p{M}]+[" + SENTENCE_PUNCTUATION + "]?"  # the word alternative of MARKS
_SEPARATOR = "\x1f"  # between joined pre-tokens in the trainer's text
_BYTE_WHITESPACE = frozenset(b"\t\n\v\f\r\x1c\x1d\x1e\x1f ")
_MAX_STAGE_ONE = 2 * 0xFFFE  # stage-one ids stand as private-use characters of planes 15 and 16


def joining_pattern(units: str) -> str:
    """MARKS with its word alternative widened to a run of words joined by single spaces (or,
    with grapheme units, by a comma-like mark with or without a space); everything else, and
    the order of the alternatives, exactly as MARKS, so a joined pre-token is always a run of
    whole MARKS pre-tokens."""
    joint = f"(?:[{PAUSE_PUNCTUATION}] ?| )" if units == "graphemes" else f"[{PAUSE_PUNCTUATION}]? "
    words = r" ?[\p{L}\p{M}]+(?:" + joint + r"[\p{L}\p{M}]+)*[" + SENTENCE_PUNCTUATION + "]?"
    return MARKS.replace(_WORD, words, 1)


_JUNCTION_CHARS = regex.compile(r"\S |[" + PAUSE_PUNCTUATION + r"][\p{L}\p{M}]")


def holds_junction(token: str, units: str) -> bool:
    """Whether a stage-one token could be built across a boundary the joining split opens:
    it holds a non-space followed by a space, or (graphemes) a comma-like mark then a letter.
    No stage-one pre-token holds either, so with grapheme units this is never true; with
    byte units the bytes of a non-ASCII space can precede a space inside a whitespace token."""
    if units == "graphemes":
        return _JUNCTION_CHARS.search(token) is not None
    data = token_bytes(token)
    if data is None:
        return False
    return any(data[i + 1] == 0x20 and data[i] not in _BYTE_WHITESPACE for i in range(len(data) - 1))


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
    if first > _MAX_STAGE_ONE:
        raise UsageError(f"--superwords trains stage two over stage one's ids, at most {_MAX_STAGE_ONE:,} of "
                         f"them; --vocab-size {vocab_size} leaves stage one {first:,}")
    if first < 300:
        raise UsageError(f"--superwords {settings.fraction} leaves stage one {first} tokens of --vocab-size "
                         f"{vocab_size}; it needs at least 300 (256 bytes come first)")
    return first


def _char(token_id: int) -> str:
    """Stage-one id -> one private-use character (planes 15 and 16: 131,068 ids)."""
    if token_id < 0xFFFE:
        return chr(0xF0000 + token_id)
    if token_id < _MAX_STAGE_ONE:
        return chr(0x100000 + token_id - 0xFFFE)
    raise UsageError(f"--superwords supports stage-one vocabularies of up to {_MAX_STAGE_ONE:,} tokens")


def _id(char: str) -> int:
    code = ord(char)
    return code - 0xF0000 if code < 0x100000 else code - 0x100000 + 0xFFFE


class _StageTwoText:
    """Lines encoded by stage one with the joining split, written as the trainer's text: one
    private-use character per stage-one token, the separator between joined pre-tokens.
    Byte-fallback tokens stand alone (a merge of two of them would not decode)."""

    def __init__(self, bridge: tokenizers.Tokenizer, byte_ids: frozenset[int]):
        self.bridge = bridge
        self.byte_ids = byte_ids
        self.cache: dict[str, str] = {}
        self.n_tokens: Counter[str] = Counter()  # stage-one tokens of each language's training text

    def _symbols(self, ids: Sequence[int], words: Sequence[int | None]) -> str:
        out: list[str] = []
        previous: tuple[int | None, bool] = (None, False)
        for token_id, word in zip(ids, words):
            alone = token_id in self.byte_ids
            if out and (alone or previous[1] or word != previous[0]):
                out.append(_SEPARATOR)
            out.append(_char(token_id))
            previous = (word, alone)
        return "".join(out)

    def map(self, lines: Sequence[str], lang: str | None = None) -> list[str]:
        new = [line for line in dict.fromkeys(lines) if line not in self.cache]
        for line, encoding in zip(new, self.bridge.encode_batch(new, add_special_tokens=False)):
            self.cache[line] = self._symbols(encoding.ids, encoding.word_ids)
        mapped = [self.cache[line] for line in lines]
        if lang is not None:
            self.n_tokens[lang] += sum(len(text) - text.count(_SEPARATOR) for text in mapped)
        return mapped


def _parity_ratios(text: _StageTwoText, train: dict[str, list[str]], dev: dict[str, list[str]] | None,
                   ratios: dict[str, float] | None, units: str) -> dict[str, float]:
    """The parity trainer's targets for stage two, whose text counts stage-one tokens.

    The trainer gives each merge to the language whose (initial / current length of its
    training text) / ratio is lowest. With a dev set, each ratio is the language's dev length
    in stage-one tokens: the language picked is then the one whose dev length, scaled by how much
    stage two has shortened its training text so far, is longest. That is stage one's rule (the
    longest dev text, i.e. the worst premium, gets the merge) with the dev lengths estimated
    instead of recounted after every merge: the trainer's recount re-applies every merge to the
    dev text, whose joined pre-tokens (whole clauses) make that the bulk of stage two's time.
    Without a dev set: stage one's targets (lengths on parallel text in text units) converted to
    stage-one tokens."""
    if dev is not None:
        return {lang: float(sum(len(t) - t.count(_SEPARATOR) for t in text.map(dev[lang]))) for lang in train}
    if not ratios:
        raise UsageError("--trainer parity needs a dev set or target ratios for stage two")
    out = {}
    for lang, lines in train.items():
        length = sum(count_graphemes(t) if units == "graphemes" else len(t.encode("utf-8")) for t in lines)
        out[lang] = ratios[lang] * text.n_tokens[lang] / length
    return out


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
    (stage one's rule, see _parity_ratios) or "bpe" (one pool, the most frequent pair first)."""
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
    text = _StageTwoText(bridge, byte_ids)
    langs = list(train)
    mapped = {lang: text.map(train[lang], lang) for lang in langs}
    targets = _parity_ratios(text, train, dev, ratios, units) if trainer == "parity" else None
    encoded = time.perf_counter()

    separator = tokenizers.Tokenizer(models.BPE())
    separator.pre_tokenizer = pre_tokenizers.Split(_SEPARATOR, behavior="removed")
    wanted = add + add // 50 + 50  # a few learned merges rebuild a string that is already a token
    if targets is not None:
        trainers.ParityBpeTrainer(
            num_merges=wanted, variant=parity.variant, min_frequency=min_frequency,
            global_merges=int(wanted * parity.global_merges), window_size=parity.window_size,
            alpha=parity.alpha, show_progress=show_progress,
        ).train_from_iterator(separator, [iter(mapped[lang]) for lang in langs],
                              ratio=[targets[lang] for lang in langs])
    else:
        alphabet = {c for texts in mapped.values() for t in texts for c in t} - {_SEPARATOR}
        bpe = trainers.BpeTrainer(vocab_size=len(alphabet) + wanted, min_frequency=min_frequency,
                                  show_progress=show_progress)
        separator.train_from_iterator((t for lang in langs for t in mapped[lang]), bpe)
    learned = json.loads(separator.to_str())["model"]["merges"]
    trained = time.perf_counter()

    id_to_token = {i: t for t, i in vocab.items()}

    def text_of(symbols: str) -> str:
        return "".join(id_to_token[_id(c)] for c in symbols)

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


def superword_usage(tokenizer: tokenizers.Tokenizer, texts: dict[str, list[str]], *, first_id: int,
                    units: str, examples: int = 5) -> dict[str, dict]:
    """Per language: tokens, how many are stage-two tokens and superwords, the commonest ones."""
    vocab = tokenizer.get_vocab()
    stage_two = {i: t for t, i in vocab.items() if i >= first_id}
    superword_ids = {i for i, t in stage_two.items() if holds_junction(t, units)}
    out: dict[str, dict] = {}
    for lang, lines in sorted(texts.items()):
        ids = [i for e in tokenizer.encode_batch(lines, add_special_tokens=False) for i in e.ids]
        counts = Counter(i for i in ids if i in superword_ids)
        out[lang] = {
            "n_tokens": len(ids),
            "n_stage_two_tokens": sum(i >= first_id for i in ids),
            "n_superword_tokens": sum(counts.values()),
            "examples": [tokenizer.decode([i]) for i, _ in counts.most_common(examples)],
        }
    return out


def vocabulary_share(tokenizer: tokenizers.Tokenizer, *, first_id: int, units: str) -> dict[str, int]:
    """How stage two's entries split: superwords (across words) and longer pieces of words."""
    stage_two = [t for t, i in tokenizer.get_vocab().items() if i >= first_id]
    n_super = sum(holds_junction(t, units) for t in stage_two)
    return {"stage_two": len(stage_two), "superwords": n_super, "within_words": len(stage_two) - n_super}


def render_superwords(record: dict) -> str:
    """What stage two added, per language of the held-out text (markdown, readable as text)."""
    two, vocabulary = record["stage_two"], record["vocabulary"]
    lines = [(f"Superwords: stage two added {two['added_tokens']:,} tokens after stage one's "
              f"{record['stage_one']['vocab_size']:,}; {vocabulary['superwords']:,} of them span words, "
              f"{vocabulary['within_words']:,} are longer pieces of words"), "",
             "| lang | tokens | stage-two tokens | superword tokens | commonest superwords |",
             "|---|---:|---:|---:|---|"]
    for lang, row in record["held_out"].items():
        n = row["n_tokens"] or 1
        shown = ", ".join(json.dumps(e, ensure_ascii=False) for e in row["examples"])
        lines.append(f"| {lang} | {row['n_tokens']:,} | {row['n_stage_two_tokens'] / n:.1%} | "
                     f"{row['n_superword_tokens'] / n:.1%} | {shown} |")
    return "\n".join(lines) + "\n"


def by_language(documents: Iterable) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for doc in documents:
        out.setdefault(doc.lang, []).append(doc.text)
    return out
