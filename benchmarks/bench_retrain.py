"""Training time of `fertility retrain` against a plain `tokenizers` BpeTrainer run.

Same data (the monolingual Bangla + English corpora), same vocabulary size. The plain runs are
what a user would write by hand: a byte-level BPE fed the same lines, with the GPT-2
pre-tokenizer, and with our mark-aware split (whose longer Bengali pre-tokens make training
itself slower: that part is the price of the fix, not overhead). Ours reads the corpus strictly,
samples by language, saves tokenizer.json and a record. Goal: at most 1.5x. Run: python benchmarks/bench_retrain.py [MONO_DIR] [VOCAB]

`--parity [VOCAB]`: the 22-language parity data (NTREX-128 + FLORES-200 dev) instead, where
the cost of `--trainer parity` (tokenizers' ParityBpeTrainer against the FLORES dev set) is given as
a ratio against a plain BpeTrainer on the same lines with the same split, and against our own
`--trainer bpe` on the same data. Run: python benchmarks/bench_retrain.py --parity [VOCAB]
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

from fertility.train.bpe import MARKS
from fertility.train.retrain import retrain


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


def ours(mono: Path | list[Path], vocab_size: int, **options) -> float:
    """Training seconds as retrain records them (reading, sampling, training; no held-out audit)."""
    with tempfile.TemporaryDirectory() as tmp:
        paths = mono if isinstance(mono, list) else [mono]
        result = retrain(paths, output=Path(tmp) / "out", vocab_size=vocab_size, **options)
        return result.record["training_seconds"]


LANGS = ("amh", "arb", "ben", "deu", "eng", "fra", "hin", "jpn", "khm", "kor", "mya", "npi", "rus", "sin", "spa",
         "swh", "tam", "tel", "tha", "urd", "yor", "zho")


def parity_costs(vocab: int) -> None:
    """The parity data: 22 languages, NTREX-128 + FLORES-200 dev; one run each (they take minutes)."""
    corpora = SHARED_CORPORA
    dev = [p for p in sorted((corpora / "flores200" / "dev").glob("*.txt")) if p.stem.split("_")[0] in LANGS]
    train = [*sorted((corpora / "ntrex128").glob("*.txt")), *dev]
    devtest = corpora / "flores200" / "devtest"
    print(f"data: NTREX-128 + FLORES-200 dev, {len(LANGS)} languages "
          f"({sum(f.stat().st_size for f in train) / 1e6:.1f} MB), vocab {vocab:,}")
    plain = plain_bpe(train, vocab, MARKS)
    bpe = ours([corpora / "ntrex128", *dev], vocab, trainer="bpe", balance="natural", held_out=[devtest])
    parity = ours([corpora / "ntrex128", *dev], vocab, target_parity=corpora / "flores200" / "dev",
                  held_out=[devtest])
    print(f"{'run':60} {'seconds':>8} {'vs plain':>9}")
    print(f"{'plain BpeTrainer, our mark-aware split, same lines':60} {plain:8.1f} {1:9.2f}")
    print(f"{'retrain --trainer bpe --balance natural':60} {bpe:8.1f} {bpe / plain:9.2f}")
    print(f"{'retrain --target-parity FLORES dev (parity trainer)':60} {parity:8.1f} {parity / plain:9.2f}")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--parity":
        parity_costs(int(sys.argv[2]) if len(sys.argv) > 2 else 64_000)
        return
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
