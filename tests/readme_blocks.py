"""Run the README's command blocks against an installed fertility, outside the checkout.

Every fenced block whose info string names a language a reader would run or copy (bash, sh,
console, python, toml, yaml, json) carries a marker comment on the line before its fence, and so
does every block of output the README shows:

    <!-- readme-test: run -->               run it with bash (set -euo pipefail); `run exit=1` when
                                            the block is meant to end with that exit code
    <!-- readme-test: python -->            run it with the installed Python
    <!-- readme-test: file NAME -->          write it to NAME in the work folder (a config example)
    <!-- readme-test: output COMMAND -->    its lines must appear, together and in order, in the
                                            standard output of COMMAND (ANSI styles removed)
    <!-- readme-test: skip REASON -->       not run, and why (network, big corpora, installs ...)

Blocks run in README order in one temporary folder outside the checkout, with COLUMNS=120,
NO_COLOR=1 and the given bin folder first on PATH. Standard library only: CI runs this with the
Python of a wheel installed in a fresh venv (`python tests/readme_blocks.py --bin VENV/bin`).
Exit 0 when every block passes, 1 otherwise; the last line counts them.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

MARKER = re.compile(r"^<!--\s*readme-test:\s*(\w+)\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(`{3,})\s*([\w-]*)\s*$")
NEEDS_MARKER = {"bash", "sh", "shell", "console", "python", "toml", "yaml", "json"}
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
KINDS = {"run", "python", "file", "output", "skip"}


@dataclass
class Block:
    line: int  # of the opening fence, 1-based
    lang: str
    text: str
    kind: str | None  # the marker's verb, None when unmarked
    argument: str


def blocks(readme: str) -> list[Block]:
    """The fenced blocks, each with the marker on the line before it (if any)."""
    lines = readme.splitlines()
    found, index = [], 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        fence, lang = opening.groups()
        end = next((i for i in range(index + 1, len(lines)) if lines[i].strip() == fence), len(lines))
        marker = MARKER.match(lines[index - 1]) if index else None
        found.append(Block(index + 1, lang, "\n".join(lines[index + 1:end]) + "\n",
                           marker.group(1) if marker else None, marker.group(2) if marker else ""))
        index = end + 1
    return found


def problems_of_markers(found: list[Block]) -> list[str]:
    """Blocks a reader would run but nobody said whether the test runs them."""
    out = []
    for block in found:
        if block.kind is None and block.lang in NEEDS_MARKER:
            out.append(f"{block.line}: a ```{block.lang} block without a <!-- readme-test: ... --> marker")
        elif block.kind is not None and block.kind not in KINDS:
            out.append(f"{block.line}: unknown marker {block.kind!r} (one of {', '.join(sorted(KINDS))})")
        elif block.kind in ("skip", "file", "output") and not block.argument:
            out.append(f"{block.line}: `{block.kind}` needs {'a reason' if block.kind == 'skip' else 'an argument'}")
    return out


class Runner:
    def __init__(self, work: Path, bin_dir: Path | None, timeout: float) -> None:
        self.work, self.timeout = work, timeout
        self.env = {**os.environ, "COLUMNS": "120", "NO_COLOR": "1", "FERTILITY_CACHE_DIR": str(work / ".cache")}
        for key in ("FERTILITY_FORMAT", "TTY_COMPATIBLE", "FORCE_COLOR", "PYTHONPATH"):
            self.env.pop(key, None)
        if bin_dir is not None:
            self.env["PATH"] = f"{bin_dir}{os.pathsep}{self.env.get('PATH', '')}"
            self.env["VIRTUAL_ENV"] = str(bin_dir.parent)
        self.python = str(bin_dir / "python") if bin_dir is not None else sys.executable
        self.outputs: dict[str, str] = {}

    def shell(self, script: str) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", "-c", f"set -euo pipefail\n{script}"], cwd=self.work, env=self.env,
                              capture_output=True, text=True, timeout=self.timeout, check=False)

    def check(self, block: Block) -> str | None:
        """None when the block holds; else what went wrong."""
        if block.kind == "file":
            (self.work / block.argument).write_text(block.text, encoding="utf-8")
            return None
        if block.kind == "python":
            done = subprocess.run([self.python, "-c", block.text], cwd=self.work, env=self.env,
                                  capture_output=True, text=True, timeout=self.timeout, check=False)
            return None if done.returncode == 0 else f"exit {done.returncode}\n{done.stderr[-2000:]}"
        if block.kind == "run":
            wanted = int(block.argument.removeprefix("exit=")) if block.argument.startswith("exit=") else 0
            done = self.shell(block.text)
            if done.returncode != wanted:
                return f"exit {done.returncode}, expected {wanted}\n{done.stderr[-2000:]}"
            return None
        assert block.kind == "output"
        if block.argument not in self.outputs:
            done = self.shell(block.argument)
            if done.returncode != 0:
                return f"`{block.argument}` exited {done.returncode}\n{done.stderr[-2000:]}"
            self.outputs[block.argument] = ANSI.sub("", done.stdout)
        return missing_lines(block.text, self.outputs[block.argument], block.argument)


def missing_lines(shown: str, real: str, command: str) -> str | None:
    """None when the shown lines are a run of consecutive lines of the real output (trailing
    spaces aside); else a diff against the closest run."""
    want = [line.rstrip() for line in shown.rstrip("\n").splitlines()]
    have = [line.rstrip() for line in real.splitlines()]
    for start in range(len(have) - len(want) + 1):
        if have[start:start + len(want)] == want:
            return None
    best = max(range(max(1, len(have) - len(want) + 1)),
               key=lambda s: difflib.SequenceMatcher(None, want, have[s:s + len(want)]).ratio(), default=0)
    diff = difflib.unified_diff(want, have[best:best + len(want)], "README", f"`{command}`", lineterm="")
    return "the README's lines are not in the real output:\n" + "\n".join(diff)


def run_readme(readme: Path, *, bin_dir: Path | None = None, timeout: float = 600,
               log=print) -> tuple[int, int, int]:
    """(passed, failed, skipped); every result and problem goes to `log`."""
    found = blocks(readme.read_text(encoding="utf-8"))
    passed = failed = skipped = 0
    for problem in problems_of_markers(found):
        log(f"{readme.name}:{problem}")
        failed += 1
    with tempfile.TemporaryDirectory(prefix="fertility-readme-") as folder:
        runner = Runner(Path(folder), bin_dir, timeout)
        for block in found:
            if block.kind is None or block.kind not in KINDS:
                continue
            where = f"{readme.name}:{block.line}"
            if block.kind == "skip":
                skipped += 1
                log(f"{where} skipped: {block.argument}")
                continue
            problem = runner.check(block)
            if problem is None:
                passed += 1
                log(f"{where} {block.kind} ok")
            else:
                failed += 1
                log(f"{where} {block.kind} FAILED: {problem}")
    log(f"{passed} passed, {failed} failed, {skipped} skipped")
    return passed, failed, skipped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("readme", nargs="?", type=Path, default=Path(__file__).resolve().parent.parent / "README.md")
    parser.add_argument("--bin", type=Path, help="bin folder of the venv fertility is installed in (first on PATH)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per block")
    args = parser.parse_args(argv)
    _, failed, _ = run_readme(args.readme, bin_dir=args.bin.resolve() if args.bin else None, timeout=args.timeout)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
