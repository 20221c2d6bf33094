"""`retrain --superwords` on the README's default example: Bangla + English, 32k, FLORES devtest.

    fertility retrain ../shared/corpora/mono --vocab-size 32000 [--superwords FRACTION] -o DIR

Default options otherwise (plain BPE, byte units). For each fraction (0: no stage two) it prints
ben_Beng and eng_Latn chars/token on FLORES-200 devtest (counted by fertility's own audit), the
share of Bengali token boundaries that cut a grapheme cluster, the lines that do not round-trip
(recounted with the raw `tokenizers` library), and how stage two's entries split between
superwords (tokens across words) and longer pieces of words. Target: both languages >= 5.0.
Run: python benchmarks/bench_superwords.py [FRACTION ...]   (default: 0 0.1 0.2 0.4)
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import tokenizers

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from real_files import SHARED_CORPORA

from fertility.backends import load_tokenizer
from fertility.engine.count import count
from fertility.io.corpus import read_corpus
from fertility.train.retrain import retrain
from fertility.train.superwords import SuperwordSettings

TARGET = 5.0


def main() -> None:
    fractions = [float(f) for f in sys.argv[1:]] or [0.0, 0.1, 0.2, 0.4]
    devtest = [SHARED_CORPORA / "flores200" / "devtest" / f"{lang}.txt" for lang in ("ben_Beng", "eng_Latn")]
    corpus = read_corpus(devtest)
    print(f"{'fraction':>8} {'ben c/t':>8} {'eng c/t':>8} {'ben cuts':>9} {'broken':>6} "
          f"{'superwords':>10} {'within words':>12} {'seconds':>8}")
    missed = False
    with tempfile.TemporaryDirectory() as tmp:
        for fraction in fractions:
            out = Path(tmp) / f"tok{fraction}"
            started = time.perf_counter()
            retrain([SHARED_CORPORA / "mono"], output=out, vocab_size=32_000, held_out=devtest,
                    superwords=SuperwordSettings(fraction) if fraction else None)
            seconds = time.perf_counter() - started
            counts = count(load_tokenizer(str(out / "tokenizer.json")), corpus.documents)
            ratio = {lang: c.n_chars / c.n_tokens for lang, c in counts.items()}
            ben = counts["ben_Beng"]
            tokenizer = tokenizers.Tokenizer.from_file(str(out / "tokenizer.json"))
            broken = 0
            for doc in corpus.documents:
                broken += tokenizer.decode(tokenizer.encode(doc.text, add_special_tokens=False).ids) != doc.text
            words = json.loads((out / "training.json").read_text(encoding="utf-8"))["superwords"]
            vocabulary = words["vocabulary"] if words else {"superwords": 0, "within_words": 0}
            print(f"{fraction:8.3f} {ratio['ben_Beng']:8.3f} {ratio['eng_Latn']:8.3f} "
                  f"{ben.n_cut_boundaries / ben.n_boundaries:9.1%} {broken:6d} {vocabulary['superwords']:10,} "
                  f"{vocabulary['within_words']:12,} {seconds:8.0f}", flush=True)
            missed |= fraction > 0 and min(ratio.values()) < TARGET
    print(f"target (both >= {TARGET} with superwords): {'missed' if missed else 'met'}")
    sys.exit(1 if missed else 0)


if __name__ == "__main__":
    main()
