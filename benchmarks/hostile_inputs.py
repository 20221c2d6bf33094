"""Peak memory and time of `fertility` on every hostile input of tests/hostile.py.

Each case is built in a temporary folder and run as a whole process (through a launcher that
reports the command's own ru_maxrss), with a watchdog that kills it past --timeout seconds or
--kill-above MB of RSS. `--tree DIR` runs another copy of fertility (for example an export of
an older commit: `git archive OLD | tar -x -C /tmp/old`) through `python -m fertility` with
PYTHONPATH=DIR, so that the same inputs measure before and after a change.

Run: python benchmarks/hostile_inputs.py [--tree DIR] [--only ID,ID] [--timeout 60] [--kill-above 2500]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import hostile


def outcome(case: hostile.Hostile, measured: hostile.Measured) -> str:
    """What happened, in a few words: the expected result, or what went wrong instead."""
    if measured.killed:
        return measured.killed
    lines = measured.stderr.strip().splitlines()
    if "Traceback" in measured.stderr:
        return f"exit {measured.exit_code}, traceback ({lines[-1][:60] if lines else ''})"
    if measured.exit_code == 0:
        try:
            good = case.check is None or case.check(json.loads(measured.stdout), measured.stderr)
        except (ValueError, KeyError, StopIteration):
            good = False
        return "exit 0, correct result" if good else "exit 0, WRONG result"
    first = lines[0].removeprefix("fertility: error: ") if lines else ""
    expected = bool(case.error) and case.error in first
    return f"exit {measured.exit_code}, {'the expected one line' if expected else repr(first[:70])}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, help="a copy of fertility to run instead of the installed one")
    parser.add_argument("--only", help="comma-separated case ids")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--kill-above", type=float, default=2500.0, help="MB of RSS")
    args = parser.parse_args()
    prefix = [sys.executable, "-m", "fertility"] if args.tree else None
    env = {"PYTHONPATH": str(args.tree.resolve())} if args.tree else None
    wanted = set(args.only.split(",")) if args.only else None
    print("| case | input | peak RSS | time | outcome |")
    print("|---|---|---:|---:|---|")
    with tempfile.TemporaryDirectory(prefix="hostile-") as tmp:
        for case in hostile.CASES:
            if wanted and case.id not in wanted:
                continue
            measured = hostile.run(case, Path(tmp) / case.id, timeout=args.timeout, kill_above_mb=args.kill_above,
                                   prefix=prefix, env=env)
            peak = f">{args.kill_above:.0f} MB" if "above" in measured.killed else f"{measured.peak_rss_mb:.0f} MB"
            print(f"| {case.id} | {case.reader} | {peak} | {measured.seconds:.1f} s | {outcome(case, measured)} |",
                  flush=True)


if __name__ == "__main__":
    main()
