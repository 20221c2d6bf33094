"""`fertility retrain`: train, balance languages, save atomically with a record, prove the fix.

The output folder gets `tokenizer.json` (loads with `tokenizers.Tokenizer.from_file` and
`transformers.PreTrainedTokenizerFast`) and `training.json` (arguments, corpus hash, weights,
seed, library versions). It is written in a hidden sibling folder and renamed into place, so an
interrupted run leaves nothing half-written; an existing output is never replaced without force.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import tokenizers

from .backends._hf import HFTokenizer
from .balance import premiums
from .corpus import Corpus, read_corpus
from .errors import OutputError, UsageError
from .measure import count
from .signature import library_versions
from .train import BALANCES, TRAIN_PATTERNS, UNITS, equal_weights, language_chars, temperature_weights, train_tokenizer
from .version import __version__

TOKENIZER_FILE = "tokenizer.json"
RECORD_FILE = "training.json"


@dataclass(frozen=True)
class Retrained:
    output: Path
    weights: dict[str, float]
    record: dict
    parity_steps: list[dict] = field(default_factory=list)


def check_output(output: Path, *, force: bool) -> None:
    """Fail before hours of training, not after."""
    if output.exists() and not output.is_dir():
        raise OutputError(f"{output}: exists and is not a folder")
    if output.is_dir() and any(output.iterdir()) and not force:
        raise OutputError(f"{output}: already exists and is not empty; pass --force to replace it")
    if not output.parent.is_dir():
        raise OutputError(f"{output}: parent folder {output.parent} does not exist")


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


def _write(tokenizer: tokenizers.Tokenizer, record: dict, folder: Path) -> None:
    tokenizer.save(str(folder / TOKENIZER_FILE))
    (folder / RECORD_FILE).write_text(json.dumps(record, ensure_ascii=False, indent=2) + "\n",
                                      encoding="utf-8")


def _move_into_place(staging: Path, output: Path) -> None:
    if output.exists():
        old = Path(tempfile.mkdtemp(dir=output.parent, prefix=f".{output.name}.old-"))
        output.rename(old / output.name)
        staging.rename(output)
        shutil.rmtree(old)
    else:
        staging.rename(output)


def retrain(corpus_paths: list[Path], *, output: Path, vocab_size: int, units: str = "bytes",
            pattern: str = "marks", weights: dict[str, float] | None = None,
            temperature: float | None = None, balance: str = "equal", seed: int = 0,
            min_frequency: int = 2, target_parity: Path | None = None, reference: str = "eng_Latn",
            parity_steps: int = 4, force: bool = False, per_file: bool = False,
            show_progress: bool = False) -> Retrained:
    if units not in UNITS:
        raise UsageError(f"--units {units!r}: choose one of {', '.join(UNITS)}")
    check_output(output, force=force)
    corpus = read_corpus(corpus_paths, doc_mode="file" if per_file else "line")
    chosen = resolve_weights(corpus, weights=weights, temperature=temperature, balance=balance)
    dev = read_corpus([target_parity]) if target_parity is not None else None
    staging = Path(tempfile.mkdtemp(dir=output.parent, prefix=f".{output.name}.tmp-"))
    try:
        started = time.perf_counter()
        steps: list[dict] = []
        for step in range(parity_steps if dev is not None else 1):
            tokenizer = train_tokenizer(corpus.documents, vocab_size=vocab_size, units=units,
                                        pattern=pattern, weights=chosen, seed=seed,
                                        min_frequency=min_frequency, show_progress=show_progress)
            if dev is None:
                break
            tokenizer.save(str(staging / TOKENIZER_FILE))
            measured = parity_premiums(staging / TOKENIZER_FILE, dev, reference)
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
        _write(tokenizer, record, staging)
        _move_into_place(staging, output)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return Retrained(output, chosen, record, steps)


def _towards_parity(weights: dict[str, float], measured: dict[str, float]) -> dict[str, float]:
    """Scale each language's weight by its premium (more data for the languages that pay more)."""
    out = dict(weights)
    for lang in weights:
        premium = next((p for dev_lang, p in measured.items() if same_language(lang, dev_lang)), None)
        if premium is not None and premium == premium:  # skip NaN
            out[lang] = weights[lang] * premium ** 1.5
    return out
