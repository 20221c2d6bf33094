"""Do `compare`, `audit -f html`, a sampled audit and `check` use every core?

Each command runs as a whole process (start-up, loading and writing included) with `--jobs 1`
and with `--jobs N`, in alternating pairs (1, N, 1, N, ...); printed: the median wall time of
each and the median, min and max of the pairs' ratios (N over 1; below 1 means the workers
help). Then `compare A B` against the two audits it replaces (`audit -t A` + `audit -t B`,
both with `--jobs N`), the same way. The outputs of `--jobs 1` and `--jobs N` are compared
byte for byte on the first pair.

Data: the Bangla + English news of bench_audit.py (about 6.8 MB, 36k lines).
Run: python benchmarks/bench_jobs.py [--repeat 5] [--jobs 2] [--only compare,html,sample,check]
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_audit import ROOT, build_corpus, timed


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "fertility", *args]


def same_output(one: list[str], many: list[str]) -> bool:
    outputs = [subprocess.run(c, capture_output=True, check=True).stdout for c in (one, many)]
    return outputs[0] == outputs[1]


def pairs(first: list[list[str]], second: list[list[str]], repeat: int) -> tuple[float, float, float, float, float]:
    """Median seconds of `first` and `second` (each a list of commands run one after the other)
    and the median, min and max of second/first over alternating pairs."""
    firsts, seconds, ratios = [], [], []
    for _ in range(repeat):
        a = sum(timed(c)[0] for c in first)
        b = sum(timed(c)[0] for c in second)
        firsts.append(a)
        seconds.append(b)
        ratios.append(b / a)
    return (statistics.median(firsts), statistics.median(seconds), statistics.median(ratios), min(ratios),
            max(ratios))


def main() -> None:
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode as after `pip install` (see bench_audit.py)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "fertility")], check=True)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--jobs", default="2")
    parser.add_argument("--only", default="compare,html,sample,check", help="which of compare,html,sample,check")
    options = parser.parse_args()
    import mistral_common

    spm_model = str(Path(mistral_common.__file__).parent / "data" / "mistral_instruct_tokenizer_241114.model.v7")
    wanted = set(options.only.split(","))
    with tempfile.TemporaryDirectory() as tmp:
        files = [str(f) for f in build_corpus(Path(tmp) / "x1")]
        os.environ["FERTILITY_CACHE_DIR"] = str(Path(tmp) / "cache")
        size = sum(Path(f).stat().st_size for f in files)
        print(f"corpus: {size / 1e6:.1f} MB; --jobs 1 against --jobs {options.jobs}; {options.repeat} alternating "
              f"pairs; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average before: "
              f"{os.getloadavg()[0]:.1f}")
        cases = {
            "compare": ("compare cl100k mistral-v7 -f json",
                        ["compare", "-q", "-f", "json", "tiktoken:cl100k_base", spm_model, *files]),
            "html": ("audit cl100k -f html (findings)", ["audit", "-q", "-f", "html", "-t", "tiktoken:cl100k_base",
                                                         *files]),
            "sample": ("audit cl100k --sample-docs 8000 -f json",
                       ["audit", "-q", "-f", "json", "-t", "tiktoken:cl100k_base", "--sample-docs", "8000", *files]),
            "check": ("check cl100k --min-chars-per-token 0.3 -f json",
                      ["check", "-f", "json", "-t", "tiktoken:cl100k_base", "--min-chars-per-token", "0.3",
                       *files]),
        }
        print(f"{'command':44} {'jobs 1 s':>9} {'jobs ' + options.jobs + ' s':>9} {'median':>7} {'min':>6} "
              f"{'max':>6}  same output")
        for key, (label, args) in cases.items():
            if key not in wanted:
                continue
            one, many = command(*args, "--jobs", "1"), command(*args, "--jobs", options.jobs)
            timed(one)  # the profile cache warm for both
            same = same_output(one, many)
            first, second, median, low, high = pairs([one], [many], options.repeat)
            print(f"{label:44} {first:9.2f} {second:9.2f} {median:6.2f}x {low:5.2f}x {high:5.2f}x  {same}", flush=True)
        if "compare" in wanted:
            audits = [command("audit", "-q", "-f", "json", "-t", spec, *files, "--jobs", options.jobs)
                      for spec in ("tiktoken:cl100k_base", spm_model)]
            compare = command(*cases["compare"][1], "--jobs", options.jobs)
            first, second, median, low, high = pairs(audits, [compare], options.repeat)
            print(f"{'compare A B over audit A + audit B':44} {first:9.2f} {second:9.2f} {median:6.2f}x {low:5.2f}x "
                  f"{high:5.2f}x  (both --jobs {options.jobs})")
        print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
