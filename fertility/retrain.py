"""`fertility retrain`: train, balance languages, save atomically with a record, prove the fix.

The output folder gets `tokenizer.json` (loads with `tokenizers.Tokenizer.from_file` and
`transformers.PreTrainedTokenizerFast`) and `training.json` (arguments, corpus hash, weights,
seed, library versions). It is written in a hidden sibling folder and renamed into place, so an
interrupted run leaves nothing half-written; an existing output is never replaced without force.
"""

from __future__ import annotations

import json
import math
import os
import secrets
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import tokenizers

from .backends._hf import HFTokenizer
from .balance import premiums
from .choices import BALANCES
from .corpus import Corpus, read_corpus
from .errors import OutputError, UsageError
from .measure import count
from .output import check_folder_writable, folder_of, make_folder, replace_files
from .signature import library_versions
from .train import (
    TRAIN_PATTERNS,
    check_training_options,
    equal_weights,
    language_chars,
    temperature_weights,
    train_tokenizer,
)
from .version import __version__

TOKENIZER_FILE = "tokenizer.json"
RECORD_FILE = "training.json"
OUR_FILES = (TOKENIZER_FILE, RECORD_FILE)  # all that --force may replace in an output folder


@dataclass(frozen=True)
class Retrained:
    output: Path
    weights: dict[str, float]
    record: dict
    parity_steps: list[dict] = field(default_factory=list)


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
    counts = count(HFTokenizer(tokenizer_file), dev.documents)
    return premiums(counts, reference, parallel=True).values


def _write(tokenizer: tokenizers.Tokenizer, record: dict, output: Path, *, force: bool) -> None:
    """A new folder is filled under a hidden name and renamed into place; an existing one (only
    ever holding our two files, checked again now) gets each file replaced atomically."""
    text = json.dumps(record, ensure_ascii=False, indent=2) + "\n"
    files = [(TOKENIZER_FILE, lambda path: tokenizer.save(str(path))),
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


def retrain(corpus_paths: list[Path], *, output: Path, vocab_size: int, units: str = "bytes",
            pattern: str = "marks", weights: dict[str, float] | None = None,
            temperature: float | None = None, balance: str = "equal", seed: int = 0,
            min_frequency: int = 2, target_parity: Path | None = None, reference: str = "eng_Latn",
            parity_steps: int = 4, force: bool = False, per_file: bool = False,
            show_progress: bool = False) -> Retrained:
    check_training_options(units=units, vocab_size=vocab_size, pattern=pattern)
    check_output(output, force=force)
    corpus = read_corpus(corpus_paths, doc_mode="file" if per_file else "line")
    chosen = resolve_weights(corpus, weights=weights, temperature=temperature, balance=balance)
    dev = read_corpus([target_parity]) if target_parity is not None else None
    scratch = Path(tempfile.mkdtemp(prefix="fertility-retrain-"))  # parity measurements only
    try:
        started = time.perf_counter()
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
        record = {
            "fertility_version": __version__,
            "arguments": {"corpus": [str(p) for p in corpus_paths], "vocab_size": vocab_size,
                          "units": units, "pattern": pattern, "balance": balance,
                          "weights": weights, "temperature": temperature, "seed": seed,
                          "min_frequency": min_frequency, "per_file": per_file,
                          "target_parity": str(target_parity) if target_parity else None,
                          "reference": reference},
            "pattern_regex": TRAIN_PATTERNS.get(pattern, pattern),
            "corpus": {"sha256": corpus.sha256, "files": len(corpus.files),
                       "documents": len(corpus.documents), "chars": language_chars(corpus.documents)},
            "weights_used": chosen,
            "parity_steps": steps,
            "vocab_size": tokenizer.get_vocab_size(),
            "training_seconds": round(time.perf_counter() - started, 2),
            "libraries": library_versions(),
        }
        _write(tokenizer, record, output, force=force)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return Retrained(output, chosen, record, steps)


def _towards_parity(weights: dict[str, float], measured: dict[str, float]) -> dict[str, float]:
    """Scale each language's weight by its premium (more data for the languages that pay more)."""
    out = dict(weights)
    for lang, weight in weights.items():
        premium = next((p for dev_lang, p in measured.items() if same_language(lang, dev_lang)), None)
        if premium is not None and not math.isnan(premium):
            out[lang] = weight * premium ** 1.5
    return out
