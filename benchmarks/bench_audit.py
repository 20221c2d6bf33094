"""How much slower is a full audit than the raw library call on the same data?

Prints, per tokenizer, the wall time of `fertility.audit` against the bare encode call of the
library on FLORES-200 devtest, and the ratios: counts only (reading, unit profiles, token
spans, split words, grapheme cuts) and with findings (pre-tokens, examples, normalization). Run: python benchmarks/bench_audit.py [FLORES_DEVTEST_DIR]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from real_files import SHARED_CORPORA, mistral_file

from fertility import audit, load_tokenizer, read_corpus


def best_of(repeat: int, function) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def raw_call(tokenizer, texts: list[str]):
    """The one library call a user would write by hand to count tokens."""
    backend = type(tokenizer).__name__
    if backend == "TiktokenTokenizer":
        return lambda: tokenizer.encoding.encode_ordinary_batch(texts)
    if backend == "HFTokenizer":
        return lambda: tokenizer.tokenizer.encode_batch(texts, add_special_tokens=False)
    if backend == "SPMTokenizer":
        return lambda: tokenizer.processor.encode(texts)
    raise ValueError(backend)


def main() -> None:
    corpus_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else SHARED_CORPORA / "flores200" / "devtest"
    corpus = read_corpus([corpus_dir])
    texts = [d.text for d in corpus.documents]
    specs = ["tiktoken:cl100k_base", str(mistral_file("mistral_instruct_tokenizer_240323.model.v3"))]
    print(f"corpus: {corpus_dir} ({len(texts)} documents, {sum(map(len, texts)):,} chars)")
    print(f"{'tokenizer':44} {'raw s':>7} {'counts s':>9} {'ratio':>6} {'+findings s':>12} {'ratio':>6}")
    for spec in specs:
        tokenizer = load_tokenizer(spec)
        raw = best_of(3, raw_call(tokenizer, texts))
        counts = best_of(3, lambda: audit([tokenizer], [corpus_dir], diagnose=False))
        full = best_of(1, lambda: audit([tokenizer], [corpus_dir]))
        print(f"{tokenizer.name:44} {raw:7.2f} {counts:9.2f} {counts / raw:5.1f}x {full:12.2f} {full / raw:5.1f}x")


if __name__ == "__main__":
    main()
