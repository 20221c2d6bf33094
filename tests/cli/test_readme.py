"""The README runs: every command block is marked (run, output, file, python, or skip with a
reason), and the runnable ones pass with the installed `fertility`, from a folder outside the
checkout. CI runs the same script with a wheel in a fresh venv (.ci/run)."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from readme_blocks import blocks, problems_of_markers, run_readme

README = Path(__file__).resolve().parents[2] / "README.md"


def test_every_command_block_is_marked():
    found = blocks(README.read_text(encoding="utf-8"))
    assert problems_of_markers(found) == []
    kinds = {block.kind for block in found}
    assert {"run", "output", "file", "python", "skip"} <= kinds
    assert all(block.argument for block in found if block.kind == "skip")  # a reason each


def test_readme_blocks_pass_with_the_installed_command():
    """The default table and signature, the findings excerpt, the Library snippet, the CI
    config with its baseline and check: run in a temporary folder outside the checkout."""
    bin_dir = Path(sys.executable).parent
    if shutil.which("fertility", path=str(bin_dir)) is None:
        pytest.skip(f"no installed fertility command in {bin_dir} (pip install -e .)")
    assert not Path(tempfile.gettempdir()).resolve().is_relative_to(README.parent)
    log: list[str] = []
    passed, failed, skipped = run_readme(README, bin_dir=bin_dir, log=log.append)
    assert failed == 0, "\n".join(log)
    assert passed >= 5 and skipped >= 1


def test_the_runner_fails_on_stale_output_wrong_exit_codes_and_unmarked_blocks(tmp_path):
    readme = tmp_path / "README.md"
    lines = [
        "<!-- readme-test: output printf 'a\\nb\\nc\\n' -->", "```", "b", "c", "```",
        "<!-- readme-test: output printf 'a\\nb\\n' -->", "```", "b", "stale", "```",
        "<!-- readme-test: run exit=3 -->", "```bash", "exit 3", "```",
        "<!-- readme-test: run -->", "```bash", "false", "echo never", "```",
        "<!-- readme-test: file conf.toml -->", "```toml", "x = 1", "```",
        "<!-- readme-test: run -->", "```bash", "grep -q 'x = 1' conf.toml", "```",
        "<!-- readme-test: skip needs the network -->", "```bash", "curl https://example.org", "```",
        "```bash", "echo unmarked", "```", ""]
    readme.write_text("\n".join(lines), encoding="utf-8")
    log: list[str] = []
    assert run_readme(readme, log=log.append) == (4, 3, 1)
    text = "\n".join(log)
    assert "README.md:7 output FAILED" in text and "+b\n-stale" not in text and "-stale" in text
    assert "README.md:16 run FAILED: exit 1, expected 0" in text
    assert "README.md:32: a ```bash block without a <!-- readme-test: ... --> marker" in text
    assert log[-1] == "4 passed, 3 failed, 1 skipped"
