"""`audit --shard K/N` parts merged with `fertility merge` equal the whole audit (issue 10);
merge refuses parts from other settings, a shard twice, and names missing shards."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from real_files import shared

from fertility.cli import cli

LANGS = ("ben_Beng", "eng_Latn", "amh_Ethi")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    source = shared("flores200", "devtest")
    for lang in LANGS:
        lines = (source / f"{lang}.txt").read_text(encoding="utf-8").splitlines()[:50]
        (folder / f"{lang}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def run(*args):
    done = CliRunner().invoke(cli, list(map(str, args)))
    return done


@pytest.fixture(scope="module")
def parts(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("parts")
    paths = []
    for k in (1, 2, 3):
        path = out / f"part{k}.json"
        done = run("audit", corpus, "-t", "tiktoken:cl100k_base", "-t", "graphemes", "--no-cache", "--shard",
                   f"{k}/3", "-f", "json", "-o", path)
        assert done.exit_code == 0, done.stderr
        paths.append(path)
    return paths


def rows(text):
    return json.loads(text)["rows"]


def test_merged_parts_equal_the_whole(corpus, parts):
    whole = run("audit", corpus, "-t", "tiktoken:cl100k_base", "-t", "graphemes", "--no-cache", "--no-findings",
                "-f", "json")
    merged = run("merge", *parts, "-f", "json")
    assert merged.exit_code == 0, merged.stderr
    def without_renyi(text):  # Rényi efficiency needs id counts, which parts do not carry
        return [{k: v for k, v in row.items() if k != "renyi_efficiency"} for row in rows(text)]
    assert without_renyi(merged.stdout) == without_renyi(whole.stdout)  # token lengths included
    assert all(row["renyi_efficiency"] is None for row in rows(merged.stdout))
    data = json.loads(merged.stdout)
    assert data["signature"]["corpus"] == json.loads(whole.stdout)["signature"]["corpus"]
    assert data["signature"]["merged_shards"] == "3 of 3"
    assert "findings are not available after a merge" in merged.stderr
    # each part really holds a slice: its documents are fewer than the whole's
    one = rows(parts[0].read_text())
    assert 0 < one[-1]["n_bytes"] < rows(whole.stdout)[-1]["n_bytes"]


def test_missing_overlapping_and_foreign_parts_are_refused(corpus, parts, tmp_path):
    missing = run("merge", parts[0], parts[2])
    assert missing.exit_code == 2
    assert missing.stderr.startswith("fertility: error: shard 2 of 3 is missing (merge it too, or pass --partial "
                                     "for a merge of 2 of 3)")
    partial = run("merge", parts[0], parts[2], "--partial", "-f", "json")
    assert partial.exit_code == 0
    assert json.loads(partial.stdout)["signature"]["merged_shards"] == "2 of 3 (missing 2)"
    twice = run("merge", parts[0], parts[0], parts[1], parts[2])
    assert twice.exit_code == 2 and "shard 1/3 again" in twice.stderr
    other = tmp_path / "other.json"
    done = run("audit", corpus, "-t", "tiktoken:cl100k_base", "-t", "bytes", "--no-cache", "--shard", "2/3",
               "-f", "json", "-o", other)
    assert done.exit_code == 0, done.stderr
    foreign = run("merge", parts[0], other, parts[2])
    assert foreign.exit_code == 2 and "made with other tokenizers or settings" in foreign.stderr
    whole = tmp_path / "whole.json"
    run("audit", corpus, "-t", "bytes", "--no-cache", "--no-findings", "-f", "json", "-o", whole)
    not_part = run("merge", whole)
    assert not_part.exit_code == 2 and "not a shard part" in not_part.stderr


@pytest.mark.parametrize("bad", ["0/3", "4/3", "x", "1/0", "2"])
def test_bad_shard_spec(corpus, bad):
    done = run("audit", corpus, "-t", "bytes", "--shard", bad)
    assert done.exit_code == 2
    assert done.stderr.startswith(f"fertility: error: --shard {bad!r}: expected K/N")


def test_html_output_of_a_shard_is_the_page_of_its_json(corpus, tmp_path):
    """-f html draws the audit's JSON, so a shard's page is what `fertility report` draws of its part."""
    pytest.importorskip("vl_convert", reason="vl-convert-python (the report extra) is not installed")
    done = run("audit", corpus, "-t", "bytes", "--shard", "1/2", "-f", "html")
    assert done.exit_code == 0, done.stderr
    part = tmp_path / "part.json"
    assert run("audit", corpus, "-t", "bytes", "--shard", "1/2", "-f", "json", "-o", part).exit_code == 0
    rebuilt = run("report", part)
    assert rebuilt.exit_code == 0, rebuilt.stderr

    def specs(page: str) -> str:
        return page.split("const FERTILITY_SPECS = ")[1].split(";\n")[0]
    assert specs(done.stdout) == specs(rebuilt.stdout)
