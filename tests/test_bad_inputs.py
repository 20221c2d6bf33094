"""Every bad or hostile input, as a table: the command, the exit code, the first words on stderr.

Each row runs a real command through click's CliRunner in a fresh folder prepared by its
`setup` (files, folders, links); afterwards every file that existed before the run must be
byte-identical and keep its mode, so no bad input ever costs a user a file. Exit 1 is only
ever a failed threshold; input and usage problems are 2; no row may print a traceback.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner

from fertility.cli import cli

ENG = "The river market opens at dawn.\nBoats arrive.\n"
BEN = "নদীর বাজার ভোরে খোলে।\nনৌকা আসে।\n"


@dataclass(frozen=True)
class Case:
    """One bad input: `setup(tmp)` prepares the folder, `args` may use {tmp} for its path."""

    id: str
    args: tuple[str, ...]
    exit_code: int
    stderr_starts: str  # the first words of stderr, after "fertility: error: " / "check failed: "
    setup: Callable[[Path], None] = lambda tmp: None
    stdin: str | None = None
    env: dict[str, str] = field(default_factory=dict)


def tiny_corpus(tmp: Path) -> None:
    (tmp / "corpus").mkdir(exist_ok=True)
    (tmp / "corpus" / "eng_Latn.txt").write_text(ENG, encoding="utf-8")
    (tmp / "corpus" / "ben_Beng.txt").write_text(BEN, encoding="utf-8")


def snapshot(root: Path) -> dict[str, tuple[bytes | str, int]]:
    """Every existing entry's content (or link target) and mode, to prove nothing changed."""
    seen: dict[str, tuple[bytes | str, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                seen[str(path)] = (os.readlink(path), info.st_mode)
            elif stat.S_ISREG(info.st_mode):
                seen[str(path)] = (path.read_bytes(), info.st_mode)
            else:
                seen[str(path)] = ("", info.st_mode)
    return seen


# Sections are kept apart so that each concern adds its rows in its own place.

# --- outputs: -o, --force, retrain folders, paths checked before any work -------------------
OUTPUT_CASES: list[Case] = [
]


# --- inputs: corpora, tokenizer files, native-library panics, saved audits -----------------
INPUT_CASES: list[Case] = [
]


# --- options, rendering and numbers --------------------------------------------------------
OPTION_CASES: list[Case] = [
]


# --- the engine: long documents, progress, jobs ----------------------------------------------
def cache_dir_is_a_file(tmp: Path) -> None:
    tiny_corpus(tmp)
    (tmp / "not-a-folder").write_text("a user's file, not a cache\n", encoding="utf-8")


def one_long_line(tmp: Path, *, spaces: bool) -> None:
    (tmp / "corpus").mkdir()
    words = ("নদীর বাজার ভোরে খোলে। The river market opens at dawn. " * 40_000) if spaces \
        else "নদীরবাজারভোরেখোলে।" * 60_000
    (tmp / "corpus" / "ben_Beng.txt").write_text(words + "\n", encoding="utf-8")


ENGINE_CASES: list[Case] = [
    Case("jobs-zero", ("audit", "corpus", "-t", "bytes", "--jobs", "0"), 2, "Usage:", setup=tiny_corpus),
    Case("jobs-not-a-number", ("audit", "corpus", "-t", "bytes", "--jobs", "many"), 2, "Usage:",
         setup=tiny_corpus),
    # an unusable cache folder only costs time: the audit runs and the file is left alone
    Case("cache-dir-is-a-file", ("audit", "corpus", "-t", "bytes", "-f", "csv"), 0, "",
         setup=cache_dir_is_a_file, env={"FERTILITY_CACHE_DIR": "not-a-folder"}),
    # one 3 MB line: measured in pieces cut at spaces, with findings, on two workers
    Case("one-long-line", ("audit", "corpus", "-t", "tiktoken:cl100k_base", "-f", "csv", "--jobs", "2"), 0, "",
         setup=lambda tmp: one_long_line(tmp, spaces=True)),
    # one 3 MB line with no whitespace to cut at: measured whole
    Case("one-long-word", ("audit", "corpus", "-t", "bytes", "-f", "csv", "--no-findings"), 0, "",
         setup=lambda tmp: one_long_line(tmp, spaces=False)),
]


CASES = OUTPUT_CASES + INPUT_CASES + OPTION_CASES + ENGINE_CASES


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    case.setup(tmp_path)
    before = snapshot(tmp_path)
    args = [a.format(tmp=tmp_path) for a in case.args]
    result = CliRunner().invoke(cli, args, input=case.stdin,
                                env={"COLUMNS": "120", "NO_COLOR": "1", **case.env})
    assert result.exit_code == case.exit_code, (result.exit_code, result.stderr, result.stdout)
    first = result.stderr.strip().splitlines()[0] if result.stderr.strip() else ""
    message = first.removeprefix("fertility: error: ").removeprefix("fertility: check failed: ")
    assert message.startswith(case.stderr_starts.format(tmp=tmp_path)), result.stderr
    assert "Traceback" not in result.stderr
    after = snapshot(tmp_path)
    for path, (content, mode) in before.items():
        assert path in after, f"{path} was removed"
        assert after[path] == (content, mode), f"{path} was changed"


def test_the_table_covers_at_least_forty_inputs() -> None:
    assert len(CASES) >= 40
    assert len({c.id for c in CASES}) == len(CASES)
