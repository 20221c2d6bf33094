"""Where an audit's time goes: reading, profile, encode, counts, evidence, merge, and the rest.

Runs `fertility.audit` in this process (`--jobs 1`, so every phase is seen) with a timer around
each stage of the pipeline, and prints each stage's own CPU seconds (time inside the stages it
calls is counted there, not twice) and its share. CPU time, not wall time, so that a busy
machine inflates the figures less; start-up (interpreter and imports) is timed apart, in a
fresh process each.

Data: as bench_audit.py (Bangla + English news, 6.8 MB), or --corpus PATH.
Run: python benchmarks/profile_audit.py [-t SPEC] [--no-findings] [--exact-library] [--corpus PATH]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

_own: dict[str, float] = defaultdict(float)
_calls: dict[str, int] = defaultdict(int)
_stack: list[list[float]] = []  # per open stage: [start, time spent in stages it called]


def _enter() -> None:
    _stack.append([time.process_time(), 0.0])


def _leave(name: str) -> None:
    start, inner = _stack.pop()
    spent = time.process_time() - start
    _own[name] += spent - inner
    _calls[name] += 1
    if _stack:
        _stack[-1][1] += spent


def timed(name: str, function):
    def wrapper(*args, **kwargs):
        _enter()
        try:
            return function(*args, **kwargs)
        finally:
            _leave(name)
    return wrapper


def timed_iterator(name: str, function):
    """A generator function whose every step is timed (reading and chunking are generators)."""
    def wrapper(*args, **kwargs):
        iterator = iter(function(*args, **kwargs))
        while True:
            _enter()
            try:
                item = next(iterator)
            except StopIteration:
                _leave(name)
                return
            _leave(name)
            yield item
    return wrapper


def patch(module, attribute: str, name: str, iterator: bool = False) -> None:
    setattr(module, attribute, (timed_iterator if iterator else timed)(name, getattr(module, attribute)))


def instrument() -> None:
    import importlib

    from fertility.backends import _gigatoken, _gigatoken_ids
    from fertility.engine import local as workers
    from fertility.engine import measure as engine
    from fertility.io import corpus

    audit = importlib.import_module("fertility.audit")  # the package's `audit` is the function
    patch(corpus.CorpusStream, "batches", "reading (decode, split lines)", iterator=True)
    patch(workers, "chunked", "chunking", iterator=True)
    patch(engine, "profile_texts", "profile (chars, clusters, words)")
    patch(engine, "_tokens", "encode")
    patch(_gigatoken.FastPath, "_library", "encode: library part of the check")
    patch(engine, "per_language", "counts: token lengths and ids")
    patch(workers, "measure_chunk", "counts (spans, words, cuts)")
    patch(_gigatoken_ids.GigatokenIds, "__call__", "encode: gigatoken ids")
    patch(_gigatoken, "difference", "encode: check comparison")  # where FastPath looks it up
    from fertility.backends import _spm, _tiktoken
    patch(_tiktoken.TiktokenTokenizer, "tokens_from_ids", "encode: spans from ids")
    patch(_spm.SPMTokenizer, "tokens_from_ids", "encode: spans from ids")
    patch(_gigatoken, "byte_level_tokens", "encode: spans from ids")
    for stage in ("offenders", "token_examples", "pretokens", "normalization", "normalized_texts"):
        patch(engine, stage, f"evidence: {stage}")  # measure.py calls them by these names
    patch(engine.ChunkResult, "absorb", "merge")  # what the executors call on each result
    patch(audit, "as_tokenizer", "load tokenizer")
    patch(audit, "assemble", "after: evidence assembly")
    patch(audit, "judge", "after: findings")
    patch(audit, "distributions", "after: token statistics")
    patch(audit._Meanwhile, "vocabularies", "after: vocabulary allocation")
    patch(audit, "build_signature", "after: signature")


def startup_seconds(code: str, repeat: int = 3) -> float:
    """CPU seconds (user + sys) of a fresh interpreter running `code`, the least of `repeat`."""
    best = float("inf")
    for _ in range(repeat):
        done = subprocess.run([sys.executable, "-c", (f"import os, time; {code}; t = os.times(); "
                               "print(t.user + t.system)")], capture_output=True, text=True, check=True)
        best = min(best, float(done.stdout.split()[-1]))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-t", "--tokenizer", default="tiktoken:cl100k_base")
    parser.add_argument("--no-findings", action="store_true")
    parser.add_argument("--exact-library", action="store_true")
    parser.add_argument("--corpus", default=None)
    options = parser.parse_args()
    bare = startup_seconds("pass")
    imports = startup_seconds("import fertility.cli, fertility.audit, numpy, regex")
    from bench_audit import build_corpus

    import fertility
    from fertility.engine.malloc import keep_freed_memory

    keep_freed_memory()  # as the command does
    instrument()
    with tempfile.TemporaryDirectory() as tmp:
        corpus = [options.corpus] if options.corpus else [str(p) for p in build_corpus(Path(tmp) / "x1")]
        wall, cpu = time.perf_counter(), time.process_time()
        result = fertility.audit([options.tokenizer], corpus, jobs=1, cache=False, diagnose=not options.no_findings,
                                 frames=False, exact_library=options.exact_library)
        _enter()
        text = json.dumps(result.to_dict())
        _leave("output: JSON")
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        size = sum(p.stat().st_size for c in corpus for p in ([Path(c)] if Path(c).is_file() else Path(c).rglob("*.txt")))
    rows = [("interpreter start", bare), ("imports (fertility, numpy, regex)", imports - bare)]
    rows += sorted(_own.items(), key=lambda item: -item[1])
    rows.append(("not in a stage above", cpu - sum(_own.values())))
    total = sum(seconds for _, seconds in rows)
    info = result.signature.tokenizers[result.tokenizers[0]]
    print(f"{options.tokenizer}, {'no findings' if options.no_findings else 'findings'}, "
          f"{info.get('fast_path', '')[:60]}; {size / 1e6:.1f} MB; audit {wall:.2f} s wall, {cpu:.2f} s CPU; "
          f"{len(text):,} bytes of JSON")
    print("| stage | CPU s | share | calls |\n|---|---:|---:|---:|")
    for name, seconds in rows:
        print(f"| {name} | {seconds:.3f} | {seconds / total:.0%} | {_calls.get(name, '')} |")
    print(f"| total | {total:.3f} | | |")


if __name__ == "__main__":
    main()
