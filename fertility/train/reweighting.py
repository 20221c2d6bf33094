"""`--trainer bpe`: plain BPE, and with a dev set the older parity loop that moves sampling weights.

Without a dev set the plain trainer runs once. With one (`--trainer bpe --target-parity DEV`),
training repeats: after each run the dev set's premiums are measured and every language's weight
is scaled by its premium, until the premiums approach 1 or the steps run out. The parity trainer
(parity_trainer.py) does the same job inside one run, merge by merge.
"""

from __future__ import annotations

import math
import shutil
import tempfile
from pathlib import Path

import tokenizers

from fertility.backends import load_tokenizer
from fertility.engine.count import count
from fertility.io.corpus import Corpus
from fertility.io.parallel import stated
from fertility.metrics.balance import premiums

from .bpe import train_tokenizer
from .languages import same_language
from .output_folder import TOKENIZER_FILE


def parity_premiums(tokenizer_file: Path, dev: Corpus, reference: str) -> dict[str, float]:
    """Premiums on the dev set, which --target-parity states to be parallel (its counts must agree)."""
    counts = count(load_tokenizer(f"hf:{tokenizer_file}"), dev.documents)
    found = premiums(counts, reference, parallel=stated("--target-parity", {k: c.n_docs for k, c in counts.items()}))
    return found.values if found is not None else {}


def train_reweighted(corpus: Corpus, dev: Corpus | None, chosen: dict[str, float], *, units: str,
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


def _towards_parity(weights: dict[str, float], measured: dict[str, float]) -> dict[str, float]:
    """Scale each language's weight by its premium (more data for the languages that pay more)."""
    out = dict(weights)
    for lang, weight in weights.items():
        premium = next((p for dev_lang, p in measured.items() if same_language(lang, dev_lang)), None)
        if premium is not None and not math.isnan(premium):
            out[lang] = weight * premium ** 1.5
    return out
