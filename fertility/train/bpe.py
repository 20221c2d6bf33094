"""Plain BPE, trained so that any `tokenizers` install loads it as a plain tokenizer.json.

Two kinds of units:
- `bytes` (default): byte-level BPE whose split pattern keeps combining marks (`\\p{M}`) with
  their letters, so merges can span whole Bengali words; nothing is ever unknown.
- `graphemes`: BPE whose merges never cut an extended grapheme cluster (graphemes.py says how);
  unseen characters fall back to bytes (`<0xE0>`), losslessly.

The split patterns and the option checks here are shared by every trainer (parity_trainer.py,
superwords.py): they are what a saved tokenizer.json must be able to hold.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import regex
import tokenizers
from tokenizers import Regex, decoders, models, pre_tokenizers, trainers

from fertility.backends.patterns import GPT2
from fertility.choices import TRAIN_PATTERN_NAMES, UNITS
from fertility.errors import UsageError
from fertility.io.corpus import Document
from fertility.io.numbers import MAX_COUNT, MAX_VOCAB_SIZE, whole

from .graphemes import GraphemeText, assemble, separator_tokenizer
from .languages import sample_documents

# GPT-2's pattern with \p{M} beside \p{L}: vowel signs, virama and nukta stay in their word,
# and a word may keep the full stop, comma or danda written right after it (Bengali and Hindi
# end every sentence with ।). On FLORES devtest, 32k vocab, mono ben+eng: ben 4.16, eng 4.25
# chars/token, against 4.06 and 4.19 without the punctuation. The same holds for the full stops
# and commas of other scripts (Chinese/Japanese 。，、, Ethiopic ። ፣, Arabic ، ۔, Myanmar ။ ၊,
# Khmer ។): on 22 languages, 64k, the parity trainer's mean chars/token went from 2.980 to 2.995.
SENTENCE_PUNCTUATION = ".,।॥。，、።፣،۔။၊។"
MARKS = (r"""'(?:[sdmt]|ll|ve|re)| ?[\p{L}\p{M}]+[""" + SENTENCE_PUNCTUATION
         + r"""]?| ?\p{N}+| ?[^\s\p{L}\p{M}\p{N}]+|\s+(?!\S)|\s+""")
TRAIN_PATTERNS = dict(zip(TRAIN_PATTERN_NAMES, (MARKS, GPT2), strict=True))


def byte_level_tokenizer(pattern: str) -> tokenizers.Tokenizer:
    """The empty byte-level BPE that the plain and the parity trainer fill: split, then bytes."""
    tokenizer = tokenizers.Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tokenizer.decoder = decoders.ByteLevel()
    return tokenizer


def train_bytes(texts: Callable[[], Iterator[str]], *, vocab_size: int, pattern: str,
                min_frequency: int, show_progress: bool) -> tokenizers.Tokenizer:
    tokenizer = byte_level_tokenizer(pattern)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=show_progress)
    tokenizer.train_from_iterator(texts(), trainer)
    return tokenizer


def train_graphemes(texts: Callable[[], Iterator[str]], *, vocab_size: int, pattern: str,
                    min_frequency: int, show_progress: bool) -> tokenizers.Tokenizer:
    grapheme_text = GraphemeText(pattern)
    mapped = grapheme_text.map(texts())
    assembly, room = grapheme_text.room(vocab_size)
    trainer_tokenizer = separator_tokenizer()
    trainer = trainers.BpeTrainer(vocab_size=room, min_frequency=min_frequency,
                                  show_progress=show_progress)
    trainer_tokenizer.train_from_iterator(mapped, trainer)
    return assemble(trainer_tokenizer, grapheme_text.clusters, assembly, pattern)


def check_trainer_pattern(name: str, split: str) -> None:
    """The saved tokenizer splits with `tokenizers`' own engine (Oniguruma), which refuses some
    patterns Python's `regex` accepts (`\\p{Script=Bengali}`, `(?V1)` sets): check before training."""
    try:
        pre_tokenizers.Split(Regex(split), behavior="isolated")
    except Exception as err:  # noqa: BLE001 - tokenizers raises bare Exception ("Oniguruma error: ...")
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise UsageError(f"--pattern '{name}': Python's regex accepts it but the tokenizers library "
                         f"(Oniguruma) does not ({reason}); "
                         "write it without that construct, e.g. \\p{Bengali} for \\p{Script=Bengali}") from None


def check_training_options(*, units: str, vocab_size: int, pattern: str, min_frequency: int = 2) -> str:
    """Refuse what training would refuse (or the Rust trainer would abort on), before any corpus
    is read; return the split regex."""
    if units not in UNITS:
        raise UsageError(f"--units {units!r}: choose one of {', '.join(UNITS)}")
    if not isinstance(vocab_size, bool) and isinstance(vocab_size, int) and vocab_size < 300:
        raise UsageError(f"--vocab-size {vocab_size} is too small (at least 300: 256 bytes come first)")
    whole(vocab_size, option="--vocab-size", low=300, high=MAX_VOCAB_SIZE)
    whole(min_frequency, option="min_frequency", low=0, high=MAX_COUNT)
    split = TRAIN_PATTERNS.get(pattern, pattern)
    try:
        regex.compile(split)
    except regex.error as err:
        raise UsageError(f"pattern {pattern!r} is neither {' nor '.join(TRAIN_PATTERNS)} nor a regex ({err})")
    check_trainer_pattern(pattern, split)
    return split


def train_tokenizer(documents: Sequence[Document], *, vocab_size: int, units: str = "bytes",
                    pattern: str = "marks", weights: dict[str, float] | None = None,
                    seed: int = 0, min_frequency: int = 2, show_progress: bool = False) -> tokenizers.Tokenizer:
    """Train on `documents` (sampled by language `weights`) and return the tokenizer."""
    split = check_training_options(units=units, vocab_size=vocab_size, pattern=pattern, min_frequency=min_frequency)
    chosen = sample_documents(documents, weights, seed=seed)

    def texts() -> Iterator[str]:
        return (doc.text for doc in chosen)

    train = train_graphemes if units == "graphemes" else train_bytes
    return train(texts, vocab_size=vocab_size, pattern=split, min_frequency=min_frequency,
                 show_progress=show_progress)
