"""Training time of `fertility retrain` against a plain `tokenizers` BpeTrainer run.

Same data (the monolingual Bangla + English corpora), same vocabulary size. The plain runs are
what a user would write by hand: a byte-level BPE fed the same lines, with the GPT-2
pre-tokenizer, and with our mark-aware split (whose longer Bengali pre-tokens make training
itself slower: that part is the price of the fix, not overhead). Ours reads the corpus strictly,
samples by language, saves tokenizer.json and a record. Goal: at most 1.5x. Run: python benchmarks/bench_retrain.py [MONO_DIR] [VOCAB]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import tokenizers
from tokenizers import decoders, models, pre_tokenizers, trainers

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from real_files import SHARED_CORPORA

from fertility.retrain import retrain
from fertility.train import MARKS


def plain_bpe(files: list[Path], vocab_size: int, split: str | None = None) -> float:
    """By hand: GPT-2 byte level, or (with `split`) the same Split regex our retrain uses."""
    start = time.perf_counter()
    tokenizer = tokenizers.Tokenizer(models.BPE())
    if split is None:
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    else:
        tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(tokenizers.Regex(split), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())

    def lines():
        for file in files:
            with file.open(encoding="utf-8") as handle:
                for line in handle:
                    if line.strip():
                        yield line.rstrip("\n")
    tokenizer.train_from_iterator(lines(), trainer)
    with tempfile.TemporaryDirectory() as tmp:
        tokenizer.save(str(Path(tmp) / "tokenizer.json"))
    return time.perf_counter() - start


def ours(mono: Path, vocab_size: int, **options) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        retrain([mono], output=Path(tmp) / "out", vocab_size=vocab_size, **options)
        return time.perf_counter() - start


def main() -> None:
    mono = Path(sys.argv[1]) if len(sys.argv) > 1 else SHARED_CORPORA / "mono"
    vocab = int(sys.argv[2]) if len(sys.argv) > 2 else 32_000
    files = sorted(mono.rglob("*.txt"))
    print(f"data: {mono} ({len(files)} files, {sum(f.stat().st_size for f in files) / 1e6:.1f} MB), vocab {vocab:,}")
    plain = min(plain_bpe(files, vocab) for _ in range(2))
    same_split = min(plain_bpe(files, vocab, MARKS) for _ in range(2))
    print(f"{'run':52} {'seconds':>8} {'vs GPT-2':>9} {'vs same split':>14}")
    print(f"{'plain BpeTrainer, GPT-2 byte level':52} {plain:8.1f} {1:9.2f} {plain / same_split:14.2f}")
    print(f"{'plain BpeTrainer, our mark-aware split':52} {same_split:8.1f} {same_split / plain:9.2f} {1:14.2f}")
    for label, options in [("retrain, same data (--balance natural)", {"balance": "natural"}),
                           ("retrain, defaults (equal balance: ben x1.53)", {}),
                           ("retrain --units graphemes --balance natural", {"units": "graphemes", "balance": "natural"})]:
        seconds = min(ours(mono, vocab, **options) for _ in range(2))
        print(f"{label:52} {seconds:8.1f} {seconds / plain:9.2f} {seconds / same_split:14.2f}")


if __name__ == "__main__":
    main()
