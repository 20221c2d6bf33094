"""Memory of the fast path's encode caches on gigabyte-scale streams, and of whole audits.

gigatoken caches the tokens of every pre-token it has seen; 0.10.0 never evicts, the fork
`gigatoken-cachefix` 0.10.1 wipes a worker's caches when they pass a byte budget
(`set_max_cache_bytes`, default 512 MiB; fertility sets FERTILITY_GIGATOKEN_CACHE_MB, see
backends/_gigatoken.py). Two inputs:

- `repeated`: the shared monolingual corpora of 22 languages (mono/ben, mono/eng, mono_extra),
  each repeated to about 1 GB in all (what README's 1 GB figure uses);
- `distinct`: text whose pre-tokens are nearly all new (random letter strings drawn from the
  alphabets of the same files): the worst case for a pre-token cache.

`encoder` streams a file through the fast path's encoder alone (512 KB batches, one process)
and prints the resident memory every 64 MB; `audit` runs `fertility audit` on it (a whole
process, --no-cache, with findings) and prints wall time and peak RSS of its largest process;
`compare` runs `fertility compare A B` and then `fertility audit -t A -t B` the same way.
The files are written under --folder (default /tmp/fertility-gb) and deleted at the end
unless --keep. Run the fork with `PYTHONPATH=DIR` where `pip install --target DIR
gigatoken-cachefix==0.10.1` put it.

Run: python benchmarks/bench_fastpath_memory.py encoder|audit|compare [--input repeated|distinct]
     [--size-mb 1000] [-t tiktoken:cl100k_base] [--second SPEC] [--jobs 2] [--keep]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from real_files import SHARED_CORPORA


def sources() -> dict[str, list[Path]]:
    out = {"ben_Beng": sorted((SHARED_CORPORA / "mono" / "ben").rglob("*.txt")),
           "eng_Latn": sorted((SHARED_CORPORA / "mono" / "eng").rglob("*.txt"))}
    for folder in sorted((SHARED_CORPORA / "mono_extra").iterdir()):
        if folder.is_dir():
            out[folder.name] = sorted(folder.rglob("*.txt"))
    return out


def build_repeated(folder: Path, size_mb: int) -> int:
    texts = {lang: b"".join(f.read_bytes().rstrip(b"\n") + b"\n" for f in files) for lang, files in sources().items()}
    base = sum(map(len, texts.values()))
    times = max(1, round(size_mb * 1e6 / base))
    folder.mkdir(parents=True, exist_ok=True)
    for lang, data in texts.items():
        with (folder / f"{lang}.txt").open("wb") as out:
            for _ in range(times):
                out.write(data)
    return base * times


def build_distinct(folder: Path, size_mb: int) -> int:
    """Random 'words' of 3-12 letters from each language's own letters, 12 words a line."""
    rng = random.Random(0)
    folder.mkdir(parents=True, exist_ok=True)
    per_lang = size_mb * 1_000_000 // len(sources())
    total = 0
    for lang, files in sources().items():
        sample = "".join(f.read_text(encoding="utf-8")[:200_000] for f in files[:3])
        letters = sorted({c for c in sample if c.isalpha()})
        written = 0
        with (folder / f"{lang}.txt").open("w", encoding="utf-8") as out:
            while written < per_lang:
                lines = []
                for _ in range(1000):
                    words = ("".join(rng.choices(letters, k=rng.randint(3, 12))) for _ in range(12))
                    lines.append(" ".join(words))
                block = "\n".join(lines) + "\n"
                out.write(block)
                written += len(block.encode("utf-8"))
        total += written
    return total


def mistral_v7() -> str:
    import mistral_common

    return str(Path(mistral_common.__file__).parent / "data" / "mistral_instruct_tokenizer_241114.model.v7")


def rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def encoder(folder: Path, spec: str) -> None:
    from fertility.backends import load_tokenizer
    from fertility.backends._gigatoken import version

    tokenizer = load_tokenizer(spec)
    ids = getattr(tokenizer, "_ids", None)
    if ids is None:
        raise SystemExit(f"{spec}: no fast path ({tokenizer.info().get('fast_path')})")
    print(f"{version()}; {spec}; RSS after loading {rss_mb():.0f} MB", flush=True)
    done, mark, start, tokens = 0, 0, time.perf_counter(), 0
    for path in sorted(folder.glob("*.txt")):
        batch, size = [], 0
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                line = line.rstrip("\n")
                if not line.strip():
                    continue
                batch.append(line)
                size += len(line.encode("utf-8"))
                if size >= 512 * 1024:
                    tokens += len(ids(batch)[1])
                    done, batch, size = done + size, [], 0
                    if done >= mark:
                        print(f"  {done / 1e6:7.0f} MB ({path.stem}): RSS {rss_mb():6.0f} MB, "
                              f"{time.perf_counter() - start:6.1f} s", flush=True)
                        mark += 64_000_000
        if batch:
            tokens += len(ids(batch)[1])
            done += size
    print(f"  {done / 1e6:7.0f} MB in all: RSS {rss_mb():.0f} MB at the end, {tokens:,} tokens, "
          f"{ids.rebuilds} rebuilds, "
          f"{time.perf_counter() - start:.1f} s", flush=True)


def audit(folder: Path, spec: str, jobs: str, extra: list[str]) -> None:
    whole_process([sys.executable, "-m", "fertility", "audit", str(folder), "-t", spec, "--no-cache", "-q",
                   "-f", "json", "-o", "/dev/null", "--jobs", jobs, *extra])


def compare(folder: Path, spec: str, second: str, jobs: str, extra: list[str]) -> None:
    """`compare A B` beside the one audit of both tokenizers it extends (per-document values for
    the paired bootstrap, word tallies over the findings sample, the bootstrap itself)."""
    import tempfile

    for command in (["compare", spec, second, str(folder)], ["audit", str(folder), "-t", spec, "-t", second]):
        with tempfile.TemporaryDirectory() as cache:  # compare has no --no-cache: an empty cache each
            whole_process([sys.executable, "-m", "fertility", *command, "-q", "-f", "json", "-o", "/dev/null",
                           "--force", "--jobs", jobs, *extra], env={**os.environ, "FERTILITY_CACHE_DIR": cache})


def whole_process(command: list[str], env: dict[str, str] | None = None) -> None:
    start = time.perf_counter()
    process = subprocess.Popen(command, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    stderr = process.stderr.read().decode() if process.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(command)}\n{stderr[-2000:]}")
    print(f"{' '.join(command[3:])}: {wall:.1f} s wall, peak RSS {usage.ru_maxrss / 1024:.0f} MB "
          "(largest of the process and its workers)", flush=True)
    if stderr.strip():
        print(stderr.strip(), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["encoder", "audit", "compare", "build"])
    parser.add_argument("--input", choices=["repeated", "distinct"], default="repeated")
    parser.add_argument("--size-mb", type=int, default=1000)
    parser.add_argument("-t", "--tokenizer", default="tiktoken:cl100k_base")
    parser.add_argument("--second", help="compare: tokenizer B (default: Mistral v7's SentencePiece model)")
    parser.add_argument("--jobs", default="2")
    parser.add_argument("--folder", default="/tmp/fertility-gb")
    parser.add_argument("--keep", action="store_true", help="keep the generated files (and reuse them)")
    parser.add_argument("--audit-args", default="", help="more arguments for the audit, e.g. '--no-findings'")
    options = parser.parse_args()
    folder = Path(options.folder) / options.input
    if not any(folder.glob("*.txt")):
        built = (build_repeated if options.input == "repeated" else build_distinct)(folder, options.size_mb)
        print(f"wrote {built / 1e6:.0f} MB of {options.input} text to {folder}", flush=True)
    try:
        if options.mode == "encoder":
            encoder(folder, options.tokenizer)
        elif options.mode == "audit":
            audit(folder, options.tokenizer, options.jobs, options.audit_args.split())
        elif options.mode == "compare":
            compare(folder, options.tokenizer, options.second or mistral_v7(), options.jobs, options.audit_args.split())
    finally:
        if not options.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
