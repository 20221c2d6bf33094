"""`fertility retrain`: train, balance languages, save atomically with a record, prove the fix.

One run: check every option before any corpus is read, sample the languages (languages.py),
train with plain BPE (reweighting.py) or the parity trainer (parity_trainer.py), optionally add
superwords (superwords.py), measure parity on held-out text (parity.py), and write the output
folder (output_folder.py) with `training.json` recording arguments, corpus hash, weights, seed
and library versions.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import tokenizers

from fertility.choices import TRAINERS
from fertility.errors import UsageError
from fertility.io.corpus import Corpus, read_corpus
from fertility.io.parallel import prove
from fertility.io.samples import samples_dir
from fertility.results import contract
from fertility.results.signature import library_versions
from fertility.version import __version__

from .bpe import TRAIN_PATTERNS, check_training_options
from .languages import (
    by_language,
    check_balance_options,
    dev_texts,
    language_chars,
    resolve_weights,
    sample_documents,
)
from .output_folder import check_output, write_folder
from .parity import ParityReport, check_not_evaluation, line_tokens, parity_report
from .parity_trainer import DEFAULT_PARITY, ParitySettings, train_parity_on_corpus
from .reweighting import train_reweighted
from .superword_report import superword_record
from .superwords import StageTwo, SuperwordSettings, add_superwords, check_superword_options


@dataclass(frozen=True)
class Retrained:
    output: Path
    weights: dict[str, float]
    record: dict
    parity_steps: list[dict] = field(default_factory=list)
    held_out_parity: ParityReport | None = None
    superwords: dict | None = None  # training.json's "superwords": both stages, and their held-out use


def retrain(corpus_paths: list[Path], *, output: Path, vocab_size: int, units: str | None = None,
            pattern: str = "marks", weights: dict[str, float] | None = None,
            temperature: float | None = None, balance: str = "equal", seed: int = 0,
            min_frequency: int = 2, target_parity: Path | None = None, reference: str = "eng_Latn",
            parity_steps: int = 4, force: bool = False, per_file: bool = False,
            trainer: str | None = None, parity: ParitySettings = DEFAULT_PARITY,
            held_out: list[Path] | None = None, superwords: SuperwordSettings | None = None,
            show_progress: bool = False) -> Retrained:
    """Train, save atomically with a record; with `held_out`, measure parity there with intervals.

    `trainer` defaults to parity when a `target_parity` dev set is given, plain BPE otherwise;
    `units` to graphemes with the parity trainer (the room byte-level BPE spends building
    characters goes to merges, and it trains about 3x faster), bytes otherwise. With
    `superwords`, stage one learns all but that share of the vocabulary and a second stage
    (superwords.py) learns the rest across the spaces between words, with the same trainer.
    """
    trainer = trainer or ("parity" if target_parity is not None else "bpe")
    units = units or ("graphemes" if trainer == "parity" else "bytes")
    check_training_options(units=units, vocab_size=vocab_size, pattern=pattern, min_frequency=min_frequency)
    check_balance_options(weights=weights, temperature=temperature)
    if trainer not in TRAINERS:
        raise UsageError(f"--trainer {trainer!r}: choose one of {', '.join(TRAINERS)}")
    first_size = vocab_size
    if superwords is not None:
        first_size = check_superword_options(superwords, vocab_size=vocab_size, pattern=pattern)
    check_output(output, force=force)
    dev = read_corpus([target_parity]) if target_parity is not None else None
    evaluation = read_corpus(list(held_out) if held_out else [samples_dir()])
    if dev is not None:
        check_not_evaluation(dev, evaluation, held_out_option="--held-out" if held_out else
                             "the default held-out set (the bundled samples; give --held-out)")
    corpus = read_corpus(corpus_paths, doc_mode="file" if per_file else "line")
    chosen = resolve_weights(corpus, weights=weights, temperature=temperature, balance=balance)
    steps: list[dict] = []
    parity_record: dict = {}
    started, started_cpu = time.perf_counter(), time.process_time()
    if trainer == "parity":
        tokenizer, parity_record = train_parity_on_corpus(
            corpus, dev, chosen, units=units, pattern=pattern, vocab_size=first_size, seed=seed,
            min_frequency=min_frequency, settings=parity, show_progress=show_progress)
    else:
        tokenizer, steps = train_reweighted(corpus, dev, chosen, units=units, pattern=pattern,
                                            vocab_size=first_size, seed=seed, min_frequency=min_frequency,
                                            reference=reference, parity_steps=parity_steps,
                                            show_progress=show_progress)
        if steps:
            chosen = steps[-1]["weights"]
    stage_two = None
    if superwords is not None:
        stage_two = _stage_two(tokenizer, corpus, dev, chosen, trainer=trainer, units=units, seed=seed,
                               vocab_size=vocab_size, parity_record=parity_record, settings=superwords,
                               parity=parity, min_frequency=min_frequency, show_progress=show_progress)
        tokenizer = stage_two.tokenizer
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - started_cpu
    dev_record = None if dev is None else {"files": list(dev.files), "sha256": dev.sha256,
                                           "unused_languages": parity_record.get("dev_languages_unused", [])}
    held_out_parallel = prove(evaluation.layouts, reference)
    report = parity_report(*line_tokens(tokenizer, evaluation), reference=reference) \
        if reference in evaluation.scripts and held_out_parallel.parallel else None
    superwords_used = superword_record(stage_two, tokenizer, evaluation, units) if stage_two else None
    record = contract.stamped("retrain", {
        "fertility_version": __version__,
        "arguments": {"corpus": [str(p) for p in corpus_paths], "vocab_size": vocab_size,
                      "units": units, "pattern": pattern, "balance": balance,
                      "weights": weights, "temperature": temperature, "seed": seed,
                      "min_frequency": min_frequency, "per_file": per_file,
                      "target_parity": str(target_parity) if target_parity else None,
                      "reference": reference, "trainer": trainer,
                      "parity": parity.fragment() if trainer == "parity" else None,
                      "superwords": superwords.fragment() if superwords else None,
                      "held_out": [str(p) for p in held_out] if held_out else None},
        "pattern_regex": TRAIN_PATTERNS.get(pattern, pattern),
        "corpus": {"sha256": corpus.sha256, "files": len(corpus.files),
                   "documents": len(corpus.documents), "chars": language_chars(corpus.documents)},
        "dev": dev_record,
        "held_out": {"files": list(evaluation.files), "sha256": evaluation.sha256,
                     "parity": report.to_dict() if report else None, "parallel": held_out_parallel.to_dict()},
        "weights_used": chosen,
        "parity_ratios": parity_record.get("parity_ratios"),
        "parity_steps": steps,
        "superwords": superwords_used,
        "vocab_size": tokenizer.get_vocab_size(),
        "training_seconds": round(seconds, 2),
        "training_cpu_seconds": round(cpu_seconds, 2),  # all threads: comparable on a busy machine
        "libraries": library_versions(),
    })
    write_folder(tokenizer.to_str(pretty=True), record, output, force=force)
    return Retrained(output, chosen, record, steps, report, superwords_used)


def _stage_two(tokenizer: tokenizers.Tokenizer, corpus: Corpus, dev: Corpus | None, chosen: dict[str, float], *,
               trainer: str, units: str, seed: int, vocab_size: int, parity_record: dict,
               settings: SuperwordSettings, parity: ParitySettings, min_frequency: int,
               show_progress: bool) -> StageTwo:
    """Superwords over the same sampled text as stage one, and with the parity trainer the same
    dev set (or target ratios), so each language's share of stage two follows the same rule."""
    texts = by_language(sample_documents(corpus.documents, chosen, seed=seed))
    dev_lines = dev_texts(corpus, dev, "--target-parity")[0] if trainer == "parity" and dev is not None else None
    ratios = (parity_record.get("parity_ratios") or {}).get("ratios") if trainer == "parity" else None
    return add_superwords(tokenizer, units=units, train=texts, add=vocab_size - tokenizer.get_vocab_size(),
                          trainer=trainer, dev=dev_lines, ratios=ratios, settings=settings, parity=parity,
                          min_frequency=min_frequency, show_progress=show_progress)

