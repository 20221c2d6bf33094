"""`--trainer parity`: `tokenizers`' ParityBpeTrainer, each merge to the language compressed worst.

The trainer reads one iterator per language and gives every merge to the language that a
parallel dev set (or, without one, target ratios: each language's byte premium) shows worst
compressed. This module runs it in either unit (bytes, or graphemes as graphemes.py describes),
and finds its targets: the dev lines of each training language, or byte premiums measured on
parallel text.
"""

from __future__ import annotations

from dataclasses import dataclass

import tokenizers
from tokenizers import pre_tokenizers, trainers

from fertility.choices import (
    DEFAULT_GLOBAL_MERGES,
    DEFAULT_PARITY_ALPHA,
    DEFAULT_PARITY_VARIANT,
    MAX_TOKEN_CLUSTERS,
    MIN_ATOM_COUNT,
    PARITY_VARIANTS,
)
from fertility.errors import FertilityError, UsageError
from fertility.io.corpus import Corpus, read_corpus
from fertility.io.numbers import MAX_COUNT, real, whole
from fertility.io.parallel import prove
from fertility.io.samples import samples_dir
from fertility.text.units import count_graphemes

from .bpe import byte_level_tokenizer, check_training_options
from .graphemes import SEPARATOR, GraphemeText, assemble, separator_tokenizer
from .languages import by_language, dev_texts, same_language, sample_documents

# The parity trainer's defaults with grapheme units, chosen by the 22-language acceptance run's
# FLORES devtest figures (benchmarks/bench_parity.py; the README has the table of what was tried):
# clusters or characters seen fewer than MIN_ATOM_COUNT times in training are not atoms (they fall
# back to bytes; 0, 3, 6, 8 gave 2.853, 2.906, 2.917 and, with the settings below, 3.00 chars/token),
# and no token is longer than MAX_TOKEN_CLUSTERS clusters (scripts written without spaces, Khmer
# above all, spend thousands of merges on whole phrases of the dev set; 8 cost 1.2% chars/token).
# (MIN_ATOM_COUNT and MAX_TOKEN_CLUSTERS live in choices.py, where the command line lists them.)


@dataclass(frozen=True)
class ParitySettings:
    """How `tokenizers`' ParityBpeTrainer is run (see README: the combination that was measured)."""

    variant: str = DEFAULT_PARITY_VARIANT  # "window" or "base"
    global_merges: float = DEFAULT_GLOBAL_MERGES  # share of the merges learned as plain BPE first
    window_size: int = 100
    alpha: float = DEFAULT_PARITY_ALPHA  # window variant
    min_atom_count: int = MIN_ATOM_COUNT  # units graphemes: rarer clusters/characters fall back to bytes
    max_token_clusters: int | None = MAX_TOKEN_CLUSTERS  # units graphemes: no longer tokens

    def fragment(self) -> dict:
        return {"variant": self.variant, "global_merges": self.global_merges,
                "window_size": self.window_size, "alpha": self.alpha, "min_atom_count": self.min_atom_count,
                "max_token_clusters": self.max_token_clusters}


DEFAULT_PARITY = ParitySettings()


def train_parity(train: dict[str, list[str]], *, dev: dict[str, list[str]] | None,
                 ratios: dict[str, float] | None, vocab_size: int, units: str, pattern: str,
                 min_frequency: int, settings: ParitySettings, show_progress: bool) -> tokenizers.Tokenizer:
    """Parity-aware BPE: each merge goes to the language the dev set (or the target ratios)
    shows compressed worst. `train`, `dev` and `ratios` are keyed by the same languages."""
    langs = list(train)
    if settings.variant not in PARITY_VARIANTS:
        raise UsageError(f"--parity-variant {settings.variant!r}: choose one of {', '.join(PARITY_VARIANTS)}")
    real(settings.global_merges, option="--global-merges", low=0.0, high=1.0, high_open=True)
    real(settings.alpha, option="--parity-alpha", low=0.0, low_open=True)
    whole(settings.min_atom_count, option="--min-atom-count", low=0, high=MAX_COUNT)
    if settings.max_token_clusters is not None:  # None: no cap (0 on the command line)
        whole(settings.max_token_clusters, option="--max-token-clusters", low=1, high=MAX_COUNT)

    def trainer(num_merges: int, **alphabet) -> trainers.ParityBpeTrainer:
        return trainers.ParityBpeTrainer(
            num_merges=num_merges, variant=settings.variant, min_frequency=min_frequency,
            global_merges=int(num_merges * settings.global_merges), window_size=settings.window_size,
            alpha=settings.alpha, show_progress=show_progress,
            max_token_length=settings.max_token_clusters if units == "graphemes" else None, **alphabet)

    ratio_list = [ratios[lang] for lang in langs] if ratios and dev is None else None
    if units == "graphemes":
        grapheme_text = GraphemeText(pattern, min_count=settings.min_atom_count)
        # distinct lines: balance sampling repeats a language's lines, which must not make its atoms common
        grapheme_text.count(text for lang in langs for text in dict.fromkeys(train[lang]))
        mapped = {lang: grapheme_text.map(train[lang]) for lang in langs}
        mapped_dev = {lang: grapheme_text.map(dev[lang], dev=True) for lang in langs} if dev is not None else None
        assembly, room = grapheme_text.room(vocab_size)
        trainer_tokenizer = separator_tokenizer()
        # the alphabet counts against the trainer's vocabulary: merges are what is left of room
        n_merges = max(1, room - len({c for texts in mapped.values() for t in texts for c in t} - {SEPARATOR}))
        trainer(n_merges).train_from_iterator(
            trainer_tokenizer, [iter(mapped[lang]) for lang in langs],
            dev_iterators=[iter(mapped_dev[lang]) for lang in langs] if mapped_dev is not None else None,
            ratio=ratio_list)
        return assemble(trainer_tokenizer, grapheme_text.clusters, assembly, pattern, grapheme_text.common)
    tokenizer = byte_level_tokenizer(pattern)
    trainer(vocab_size - 256, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()).train_from_iterator(
        tokenizer, [iter(train[lang]) for lang in langs],
        dev_iterators=[iter(dev[lang]) for lang in langs] if dev is not None else None, ratio=ratio_list)
    return tokenizer


def train_parity_on_corpus(corpus: Corpus, dev: Corpus | None, chosen: dict[str, float], *, units: str,
                           pattern: str, vocab_size: int, seed: int, min_frequency: int,
                           settings: ParitySettings, show_progress: bool) -> tuple[tokenizers.Tokenizer, dict]:
    """The parity trainer over a corpus, one iterator per language (sampled by the balance
    weights), aimed at the dev set or else at byte premiums; also what training.json records."""
    split = check_training_options(units=units, vocab_size=vocab_size, pattern=pattern)
    texts = by_language(sample_documents(corpus.documents, chosen, seed=seed))
    if len(texts) < 2:
        raise UsageError(f"--trainer parity balances languages: the corpus has only {', '.join(texts)}")
    record: dict = {}
    dev_lines, ratios = None, None
    if dev is not None:
        dev_lines, unused = dev_texts(corpus, dev, "--target-parity")
        record["dev_languages_unused"] = unused
    else:
        ratios, source = byte_premium_ratios(corpus, list(texts), units)
        record["parity_ratios"] = {"ratios": ratios, "from": source}
    tokenizer = train_parity(texts, dev=dev_lines, ratios=ratios, vocab_size=vocab_size, units=units,
                             pattern=split, min_frequency=min_frequency, settings=settings,
                             show_progress=show_progress)
    return tokenizer, record


def _unit_length(text: str, units: str) -> int:
    return count_graphemes(text) if units == "graphemes" else len(text.encode("utf-8"))


def byte_premium_ratios(corpus: Corpus, langs: list[str], units: str) -> tuple[dict[str, float], str]:
    """Target rates for the parity trainer without a dev set: each language's length in the
    trainer's units on parallel text (its byte premium), from the training corpus when it is
    parallel, else from the bundled parallel samples."""
    sources = [("training corpus", corpus)]
    try:
        sources.append(("bundled samples", read_corpus([samples_dir()])))
    except FertilityError:
        pass
    for name, source in sources:
        if not prove(source.layouts, "").parallel:  # lengths of different content: no byte premium
            continue
        lengths: dict[str, int] = {}
        for doc in source.documents:
            lengths[doc.lang] = lengths.get(doc.lang, 0) + _unit_length(doc.text, units)
        ratios = {}
        for lang in langs:
            match = [k for k in lengths if same_language(lang, k)]
            if match:
                ratios[lang] = lengths[match[0]]
        if len(ratios) == len(langs):
            smallest = min(ratios.values())
            return {lang: n / smallest for lang, n in ratios.items()}, name
    raise UsageError("--trainer parity needs a parallel dev set (--target-parity DEV) or byte premiums, "
                     "and neither the training corpus (not parallel) nor the bundled samples cover "
                     f"{', '.join(langs)}; give --target-parity")
