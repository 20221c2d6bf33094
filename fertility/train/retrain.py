"""`fertility retrain`: train, balance languages, save atomically with a record, prove the fix.

The output folder gets `tokenizer.json` (loads with `tokenizers.Tokenizer.from_file` and
`transformers.PreTrainedTokenizerFast`) and `training.json` (arguments, corpus hash, weights,
seed, library versions). It is written in a hidden sibling folder and renamed into place, so an
interrupted run leaves nothing half-written; an existing output is never replaced without force.
"""

from __future__ import annotations

import math
import os
import secrets
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from fertility.backends import load_tokenizer
from fertility.choices import BALANCES, TRAINERS
from fertility.engine.count import count
from fertility.errors import FertilityError, OutputError, UsageError
from fertility.io.corpus import Corpus, read_corpus
from fertility.io.numbers import MAX_TEMPERATURE, MAX_WEIGHT, MIN_TEMPERATURE, real
from fertility.io.output import check_folder_writable, folder_of, make_folder, replace_files
from fertility.io.parallel import prove, stated
from fertility.io.samples import samples_dir
from fertility.metrics.balance import premiums
from fertility.results import contract
from fertility.results.signature import library_versions
from fertility.text.units import count_graphemes
from fertility.version import __version__

from .bpe import (
    DEFAULT_PARITY,
    TRAIN_PATTERNS,
    ParitySettings,
    check_training_options,
    equal_weights,
    language_chars,
    sample_documents,
    temperature_weights,
    train_parity,
    train_tokenizer,
)
from .parity import ParityReport, check_not_evaluation, line_tokens, parity_report

if TYPE_CHECKING:
    import tokenizers

    from .superwords import StageTwo, SuperwordSettings

TOKENIZER_FILE = "tokenizer.json"
RECORD_FILE = "training.json"
OUR_FILES = (TOKENIZER_FILE, RECORD_FILE)  # all that --force may replace in an output folder


@dataclass(frozen=True)
class Retrained:
    output: Path
    weights: dict[str, float]
    record: dict
    parity_steps: list[dict] = field(default_factory=list)
    held_out_parity: ParityReport | None = None
    superwords: dict | None = None  # training.json's "superwords": both stages, and their held-out use


def check_output(output: Path, *, force: bool) -> None:
    """Fail before hours of training, not after; `--force` replaces only what fertility wrote."""
    if output.exists() and not output.is_dir():
        raise OutputError(f"{output}: exists and is not a folder")
    if not output.is_dir():
        if output.is_symlink():
            raise OutputError(f"{output}: is a dangling link; give a folder")
        check_folder_writable(folder_of(output), what=output, role="parent folder")
        return
    try:
        entries = sorted(output.iterdir())
    except OSError as err:
        raise OutputError(f"{output}: cannot list the folder ({err.strerror})") from None
    foreign = [p.name for p in entries if p.name not in OUR_FILES or not p.is_file() or p.is_symlink()]
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise OutputError(f"{output}: holds files fertility did not write ({shown}); "
                          "it is never emptied: give a new or empty folder")
    if entries and not force:
        raise OutputError(f"{output}: already holds {', '.join(p.name for p in entries)}; "
                          "pass --force to replace them")
    if not os.access(output, os.W_OK | os.X_OK):
        raise OutputError(f"{output}: folder is not writable")


def check_balance_options(*, weights: dict[str, float] | None, temperature: float | None) -> None:
    """Sampling weights and temperature in their ranges, before any corpus is read (a weight
    repeats each document that many times; a tiny temperature divides by zero)."""
    for lang, weight in (weights or {}).items():
        real(weight, option=f"--weights {lang}", low=0.0, low_open=True, high=MAX_WEIGHT)
    if temperature is not None:
        real(temperature, option="--temperature", low=MIN_TEMPERATURE, high=MAX_TEMPERATURE)


def resolve_weights(corpus: Corpus, *, weights: dict[str, float] | None, temperature: float | None,
                    balance: str) -> dict[str, float]:
    """Explicit weights win, then temperature sampling, then the balance rule."""
    chars = language_chars(corpus.documents)
    if weights and temperature is not None:
        raise UsageError("give --weights or --temperature, not both")
    if weights:
        unknown = sorted(set(weights) - set(chars))
        if unknown:
            raise UsageError(f"--weights names languages not in the training corpus: "
                             f"{', '.join(unknown)} (corpus languages: {', '.join(sorted(chars))})")
        return {lang: weights.get(lang, 1.0) for lang in chars}
    if temperature is not None:
        return temperature_weights(chars, temperature)
    if balance not in BALANCES:
        raise UsageError(f"--balance {balance!r}: choose one of {', '.join(BALANCES)}")
    return equal_weights(chars) if balance == "equal" else {lang: 1.0 for lang in chars}


def same_language(train_lang: str, dev_lang: str) -> bool:
    """`ben` (a training folder) is `ben_Beng` (a FLORES file)."""
    return train_lang.split("_")[0] == dev_lang.split("_")[0]


def parity_premiums(tokenizer_file: Path, dev: Corpus, reference: str) -> dict[str, float]:
    """Premiums on the dev set, which --target-parity states to be parallel (its counts must agree)."""
    counts = count(load_tokenizer(f"hf:{tokenizer_file}"), dev.documents)
    found = premiums(counts, reference, parallel=stated("--target-parity", {k: c.n_docs for k, c in counts.items()}))
    return found.values if found is not None else {}


def write_folder(tokenizer_json: str, record: dict, output: Path, *, force: bool, schema: str = "retrain") -> None:
    """A new folder is filled under a hidden name and renamed into place; an existing one (only
    ever holding our two files, checked again now) gets each file replaced atomically.
    `record` is training.json, of the `schema` it is stamped with (retrain or extend)."""
    text = contract.dump(schema, record)
    files = [(TOKENIZER_FILE, lambda path: path.write_text(tokenizer_json, encoding="utf-8")),
             (RECORD_FILE, lambda path: path.write_text(text, encoding="utf-8"))]
    check_output(output, force=force)
    if output.is_dir():
        replace_files(output, files)
        return
    staging = folder_of(output) / f".{output.name}.{secrets.token_hex(4)}.tmp"
    make_folder(staging)
    try:
        replace_files(staging, files)
        _move_into_place(staging, output)
    finally:
        if staging.exists():
            shutil.rmtree(staging)


def _move_into_place(staging: Path, output: Path) -> None:
    try:
        staging.rename(output)  # fails if a folder appeared there meanwhile: nothing is replaced
    except OSError as err:
        raise OutputError(f"{output}: cannot move the new tokenizer into place ({err.strerror}); "
                          f"nothing was replaced") from None


def _dev_texts(corpus: Corpus, dev: Corpus, option: str) -> tuple[dict[str, list[str]], list[str]]:
    """Each training language's dev lines (`ben` takes `ben_Beng`), and the dev languages unused."""
    by_lang: dict[str, list[str]] = {}
    for doc in dev.documents:
        by_lang.setdefault(doc.lang, []).append(doc.text)
    out, used = {}, set()
    for lang in sorted({d.lang for d in corpus.documents}):
        match = [d for d in by_lang if same_language(lang, d)]
        if not match:
            raise UsageError(f"{option}: the dev set has no text for {lang} (dev languages: "
                             f"{', '.join(sorted(by_lang))}); give a parallel dev file for every training language")
        out[lang] = by_lang[match[0]]
        used.add(match[0])
    return out, sorted(set(by_lang) - used)


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
        from .superwords import check_superword_options
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
        tokenizer, parity_record = _train_parity(corpus, dev, chosen, units=units, pattern=pattern,
                                              vocab_size=first_size, seed=seed, min_frequency=min_frequency,
                                              settings=parity, show_progress=show_progress)
    else:
        tokenizer, steps = _train_reweighted(corpus, dev, chosen, units=units, pattern=pattern,
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
    superword_record = _superword_record(stage_two, tokenizer, evaluation, units) if stage_two else None
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
        "superwords": superword_record,
        "vocab_size": tokenizer.get_vocab_size(),
        "training_seconds": round(seconds, 2),
        "training_cpu_seconds": round(cpu_seconds, 2),  # all threads: comparable on a busy machine
        "libraries": library_versions(),
    })
    write_folder(tokenizer.to_str(pretty=True), record, output, force=force)
    return Retrained(output, chosen, record, steps, report, superword_record)


def _stage_two(tokenizer: tokenizers.Tokenizer, corpus: Corpus, dev: Corpus | None, chosen: dict[str, float], *,
               trainer: str, units: str, seed: int, vocab_size: int, parity_record: dict,
               settings: SuperwordSettings, parity: ParitySettings, min_frequency: int,
               show_progress: bool) -> StageTwo:
    """Superwords over the same sampled text as stage one, and with the parity trainer the same
    dev set (or target ratios), so each language's share of stage two follows the same rule."""
    from .superwords import add_superwords, by_language

    texts = by_language(sample_documents(corpus.documents, chosen, seed=seed))
    dev_texts = _dev_texts(corpus, dev, "--target-parity")[0] if trainer == "parity" and dev is not None else None
    ratios = (parity_record.get("parity_ratios") or {}).get("ratios") if trainer == "parity" else None
    return add_superwords(tokenizer, units=units, train=texts, add=vocab_size - tokenizer.get_vocab_size(),
                          trainer=trainer, dev=dev_texts, ratios=ratios, settings=settings, parity=parity,
                          min_frequency=min_frequency, show_progress=show_progress)


def _superword_record(stage_two: StageTwo, tokenizer: tokenizers.Tokenizer, evaluation: Corpus, units: str) -> dict:
    """Both stages as trained, and what stage two's tokens do on the held-out text."""
    from .superwords import by_language, superword_usage, vocabulary_share

    return {**stage_two.record,
            "vocabulary": vocabulary_share(tokenizer, first_id=stage_two.first_id, units=units),
            "held_out": superword_usage(tokenizer, by_language(evaluation.documents),
                                        first_id=stage_two.first_id, units=units)}


def _train_reweighted(corpus: Corpus, dev: Corpus | None, chosen: dict[str, float], *, units: str,
                      pattern: str, vocab_size: int, seed: int, min_frequency: int, reference: str,
                      parity_steps: int, show_progress: bool) -> tuple[tokenizers.Tokenizer, list[dict]]:
    """Plain BPE; with a dev set, retrained with weights moved until its premiums approach 1."""
    scratch = Path(tempfile.mkdtemp(prefix="fertility-retrain-"))  # parity measurements only
    try:
        steps: list[dict] = []
        for step in range(parity_steps if dev is not None else 1):
            tokenizer = train_tokenizer(corpus.documents, vocab_size=vocab_size, units=units,
                                        pattern=pattern, weights=chosen, seed=seed,
                                        min_frequency=min_frequency, show_progress=show_progress)
            if dev is None:
                break
            tokenizer.save(str(scratch / TOKENIZER_FILE))
            measured = parity_premiums(scratch / TOKENIZER_FILE, dev, reference)
            steps.append({"weights": dict(chosen), "premiums": measured})
            if all(abs(p - 1) < 0.02 for p in measured.values()) or step == parity_steps - 1:
                break
            chosen = _towards_parity(chosen, measured)
        return tokenizer, steps
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _train_parity(corpus: Corpus, dev: Corpus | None, chosen: dict[str, float], *, units: str,
                  pattern: str, vocab_size: int, seed: int, min_frequency: int, settings: ParitySettings,
                  show_progress: bool) -> tuple[tokenizers.Tokenizer, dict]:
    """`tokenizers`' ParityBpeTrainer, one iterator per language (sampled by the balance weights)."""
    split = check_training_options(units=units, vocab_size=vocab_size, pattern=pattern)
    texts: dict[str, list[str]] = {}
    for doc in sample_documents(corpus.documents, chosen, seed=seed):
        texts.setdefault(doc.lang, []).append(doc.text)
    if len(texts) < 2:
        raise UsageError(f"--trainer parity balances languages: the corpus has only {', '.join(texts)}")
    record: dict = {}
    dev_texts, ratios = None, None
    if dev is not None:
        dev_texts, unused = _dev_texts(corpus, dev, "--target-parity")
        record["dev_languages_unused"] = unused
    else:
        ratios, source = byte_premium_ratios(corpus, list(texts), units)
        record["parity_ratios"] = {"ratios": ratios, "from": source}
    tokenizer = train_parity(texts, dev=dev_texts, ratios=ratios, vocab_size=vocab_size, units=units,
                             pattern=split, min_frequency=min_frequency, settings=settings,
                             show_progress=show_progress)
    return tokenizer, record


def _towards_parity(weights: dict[str, float], measured: dict[str, float]) -> dict[str, float]:
    """Scale each language's weight by its premium (more data for the languages that pay more)."""
    out = dict(weights)
    for lang, weight in weights.items():
        premium = next((p for dev_lang, p in measured.items() if same_language(lang, dev_lang)), None)
        if premium is not None and not math.isnan(premium):
            out[lang] = weight * premium ** 1.5
    return out
