"""Stage two's training text: stage-one tokens as private-use characters, and the parity targets over it.

`tokenizers` cannot continue training from merges, so superwords' stage two trains over stage
one's own tokens: every stage-one id stands as one private-use character and each joined
pre-token is one word of the trainer. Lengths of this text are counted in stage-one tokens,
which is also what the parity trainer's targets for stage two must be measured in.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from fertility.errors import UsageError
from fertility.text.units import count_graphemes

if TYPE_CHECKING:
    import tokenizers

SEPARATOR = "\x1f"  # between joined pre-tokens in the trainer's text
MAX_STAGE_ONE = 2 * 0xFFFE  # stage-one ids stand as private-use characters of planes 15 and 16


def stand_in(token_id: int) -> str:
    """Stage-one id -> one private-use character (planes 15 and 16: 131,068 ids)."""
    if token_id < 0xFFFE:
        return chr(0xF0000 + token_id)
    if token_id < MAX_STAGE_ONE:
        return chr(0x100000 + token_id - 0xFFFE)
    raise UsageError(f"--superwords supports stage-one vocabularies of up to {MAX_STAGE_ONE:,} tokens")


def stage_one_id(char: str) -> int:
    """The stage-one id a stand-in character stands for."""
    code = ord(char)
    return code - 0xF0000 if code < 0x100000 else code - 0x100000 + 0xFFFE


class StageTwoText:
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
                out.append(SEPARATOR)
            out.append(stand_in(token_id))
            previous = (word, alone)
        return "".join(out)

    def map(self, lines: Sequence[str], lang: str | None = None) -> list[str]:
        new = [line for line in dict.fromkeys(lines) if line not in self.cache]
        for line, encoding in zip(new, self.bridge.encode_batch(new, add_special_tokens=False)):
            self.cache[line] = self._symbols(encoding.ids, encoding.word_ids)
        mapped = [self.cache[line] for line in lines]
        if lang is not None:
            self.n_tokens[lang] += sum(len(text) - text.count(SEPARATOR) for text in mapped)
        return mapped


def parity_ratios(text: StageTwoText, train: dict[str, list[str]], dev: dict[str, list[str]] | None,
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
        return {lang: float(sum(len(t) - t.count(SEPARATOR) for t in text.map(dev[lang]))) for lang in train}
    if not ratios:
        raise UsageError("--trainer parity needs a dev set or target ratios for stage two")
    out = {}
    for lang, lines in train.items():
        length = sum(count_graphemes(t) if units == "graphemes" else len(t.encode("utf-8")) for t in lines)
        out[lang] = ratios[lang] * text.n_tokens[lang] / length
    return out
