"""Saved audits counted on different documents of one corpus (a shard part, a merge that lacks
shards, another sample) share the corpus hash; compare, check --baseline and leaderboard must
refuse them rather than report the difference in documents as a difference in tokenizers."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from fertility.cli import cli


def run(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


def one_line_error(result) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


@pytest.fixture(scope="module")
def saved(small, tmp_path_factory):
    folder = tmp_path_factory.mktemp("saved")
    made = {"whole": ("-t", "bytes"), "part1": ("-t", "bytes", "--shard", "1/2"),
            "part2": ("-t", "bytes", "--shard", "2/2"), "chars": ("-t", "chars")}
    for name, options in made.items():
        done = run("audit", "-q", *options, "-f", "json", "-o", folder / f"{name}.json", small)
        assert done.exit_code == 0, done.output
    for name, parts in {"merged": ("part1", "part2"), "partial": ("part1",)}.items():
        done = run("merge", *(["--partial"] if len(parts) == 1 else []), *(folder / f"{p}.json" for p in parts),
                   "-f", "json", "-o", folder / f"{name}.json")
        assert done.exit_code == 0, done.output
    return folder


@pytest.mark.parametrize("a, b, differing", [
    ("part1", "whole", "shard"), ("part1", "part2", "shard"), ("partial", "whole", "merged_shards"),
])
def test_compare_refuses_audits_of_other_documents(saved, a, b, differing):
    message = one_line_error(run("compare", saved / f"{a}.json", saved / f"{b}.json"))
    assert "refusing to compare" in message and f"{differing}:" in message
    assert "fertility merge" in message


@pytest.mark.parametrize("baseline", ["part1", "partial"])
def test_check_refuses_a_baseline_of_part_of_the_corpus(saved, small, baseline):
    """Before, a shard part as baseline passed (exit 0) with regressions of up to 1.4% that were
    only the other documents (the bundled samples)."""
    message = one_line_error(run("check", small, "-t", "bytes", "--baseline", saved / f"{baseline}.json",
                                 "--max-regression", "0"))
    assert "refusing to check against the baseline" in message


def test_leaderboard_refuses_a_partial_merge(saved):
    message = one_line_error(run("leaderboard", saved / "partial.json", saved / "chars.json"))
    assert "merged_shards" in message


def test_a_complete_merge_stands_for_the_whole_audit(saved, small):
    compared = run("compare", saved / "merged.json", saved / "whole.json", "-f", "json")
    assert compared.exit_code == 0, compared.output
    rows = json.loads(compared.stdout)["rows"]
    assert rows and all(row["n_tokens_a"] == row["n_tokens_b"] for row in rows)
    checked = run("check", small, "-t", "bytes", "--baseline", saved / "merged.json", "--max-regression", "0")
    assert checked.exit_code == 0, checked.output
    ranked = run("leaderboard", saved / "merged.json", saved / "chars.json")
    assert ranked.exit_code == 0, ranked.output
