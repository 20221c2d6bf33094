"""fertility's other JSON outputs handed where a saved audit belongs (report, leaderboard,
merge, compare, check --baseline) are named as what they are. A retrain training.json carries
schema_version 2 and was refused as an audit 'written by a newer fertility (pip install -U)'."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from fertility.cli import cli


def run(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def outputs(small, tmp_path_factory):
    folder = tmp_path_factory.mktemp("outputs")
    steps = [("audit", "-q", "-t", "bytes", "-f", "json", "-o", folder / "bytes.json", small),
             ("audit", "-q", "-t", "chars", "-f", "json", "-o", folder / "chars.json", small),
             ("compare", folder / "bytes.json", folder / "chars.json", "-f", "json", "-o", folder / "compare.json"),
             ("check", small, "-t", "bytes", "--min-chars-per-token", "*=0.1", "-f", "json",
              "-o", folder / "verdict.json"),
             ("retrain", small, "--vocab-size", "300", "-q", "-o", folder / "retrained")]
    for step in steps:
        done = run(*step)
        assert done.exit_code == 0, (step, done.output)
    return folder


@pytest.mark.parametrize("name, what", [
    ("compare.json", "a comparison (fertility compare -f json)"),
    ("verdict.json", "the verdict of fertility check -f json"),
    ("retrained/training.json", "training.json of fertility retrain"),
])
@pytest.mark.parametrize("command", ["report", "leaderboard", "merge", "compare", "check"])
def test_another_output_is_named_not_taken_for_an_audit(outputs, small, name, what, command):
    path = outputs / name
    args = {"report": ("report", path, "-o", outputs / "page.html"), "leaderboard": ("leaderboard", path),
            "merge": ("merge", path), "compare": ("compare", outputs / "bytes.json", path),
            "check": ("check", small, "-t", "bytes", "--baseline", path, "--max-regression", "0")}[command]
    result = run(*args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert lines == [f"fertility: error: {path}: not a fertility audit JSON: this is {what}, not an audit"]
    assert not (outputs / "page.html").exists()
