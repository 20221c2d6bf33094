"""Sampling per language (issue 10): hash-based, deterministic with --seed, consistent across
shards; every ratio carries a 95% interval over documents that covers the full-corpus value."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from real_files import shared

import fertility
from fertility.cli import cli
from fertility.io.sampling import Sample, parse_size

LANGS = ("ben_Beng", "eng_Latn", "tha_Thai")


def files():
    folder = shared("flores200", "devtest")
    return [str(folder / f"{lang}.txt") for lang in LANGS]


@pytest.fixture(scope="module")
def full():
    return fertility.audit(["tiktoken:cl100k_base"], files(), jobs=1, cache=False, diagnose=False).to_frame()


@pytest.fixture(scope="module")
def sampled():
    return fertility.audit(["tiktoken:cl100k_base"], files(), jobs=1, cache=False, diagnose=False,
                           sample=Sample(docs=150, seed=7))


def test_intervals_cover_the_full_corpus_value(full, sampled):
    frame = sampled.to_frame()
    for lang in LANGS:
        found = sampled.intervals["cl100k_base"][lang]
        assert found["n_documents"] == 150
        for ratio in ("chars_per_token", "bytes_per_token"):
            estimate = frame[frame.lang == lang][ratio].iloc[0]
            truth = full[full.lang == lang][ratio].iloc[0]
            half = found[ratio]
            assert 0 < half < 0.1 * truth  # a real, narrow interval
            assert estimate - half <= truth <= estimate + half
            assert estimate != truth  # it is a sample, not the whole


def test_sample_is_deterministic_per_seed_and_holds_n_documents(sampled):
    again = fertility.audit(["tiktoken:cl100k_base"], files(), jobs=2, cache=False, diagnose=False,
                            sample=Sample(docs=150, seed=7))
    other = fertility.audit(["tiktoken:cl100k_base"], files(), jobs=1, cache=False, diagnose=False,
                            sample=Sample(docs=150, seed=8))
    assert again.counts == sampled.counts
    assert other.counts != sampled.counts
    assert "150 documents per language, seed 7" in sampled.signature.extra["sample"]


def test_sample_bytes_reaches_the_size_with_the_fewest_documents():
    """Text that is not parallel (Bengali of dev, English and Thai of devtest): each language
    keeps the fewest smallest keys whose bytes reach the size."""
    dev, devtest = shared("flores200", "dev"), shared("flores200", "devtest")
    unaligned = [str(dev / "ben_Beng.txt"), str(devtest / "eng_Latn.txt"), str(devtest / "tha_Thai.txt")]
    result = fertility.audit(["bytes"], unaligned, jobs=1, cache=False, diagnose=False,
                             sample=Sample(bytes=parse_size("20k"), seed=1))
    assert not result.parallel.parallel
    for lang in LANGS:
        n_bytes = result.counts[("bytes", lang)].n_bytes
        assert n_bytes >= 20_000
        assert n_bytes < 20_000 + 2_000  # one FLORES line at most past the size


def test_sample_bytes_of_parallel_text_keeps_the_same_lines_in_every_language():
    """FLORES devtest proves itself parallel: every language keeps the lines the language with
    the most bytes per line needs to reach the size, so premiums stay over the same content."""
    result = fertility.audit(["bytes"], files(), jobs=1, cache=False, diagnose=False,
                             sample=Sample(bytes=parse_size("20k"), seed=1))
    assert result.parallel.established == "proven"
    counts = {lang: result.counts[("bytes", lang)] for lang in LANGS}
    assert len({c.n_docs for c in counts.values()}) == 1
    heaviest = max(counts.values(), key=lambda c: c.n_bytes)
    assert 20_000 <= heaviest.n_bytes < 20_000 + 2_000
    assert counts["eng_Latn"].n_bytes < 20_000  # English writes the same lines in fewer bytes


def test_cli_sampling_json_table_and_shards(tmp_path):
    args = ["audit", *files(), "-t", "graphemes", "--no-cache", "--sample-docs", "40", "--seed", "3"]
    runner = CliRunner()
    whole = runner.invoke(cli, [*args, "--no-findings", "-f", "json"])
    assert whole.exit_code == 0, whole.stderr
    data = json.loads(whole.stdout)
    assert set(data["intervals"]["graphemes"]) == set(LANGS)
    table = runner.invoke(cli, [*args, "--no-findings", "-f", "table"])
    assert "±" in table.stdout and "95% intervals over sampled documents" in table.stdout
    parts = []
    for k in (1, 2):
        path = tmp_path / f"p{k}.json"
        done = runner.invoke(cli, [*args, "--shard", f"{k}/2", "-f", "json", "-o", str(path)])
        assert done.exit_code == 0, done.stderr
        parts.append(str(path))
    merged = runner.invoke(cli, ["merge", *parts, "-f", "json"])
    assert merged.exit_code == 0, merged.stderr
    merged_rows = json.loads(merged.stdout)["rows"]
    assert [{k: v for k, v in row.items() if k != "renyi_efficiency"} for row in merged_rows] == \
        [{k: v for k, v in row.items() if k != "renyi_efficiency"} for row in data["rows"]]
    assert all(row["renyi_efficiency"] is None for row in merged_rows)  # parts carry no id counts


@pytest.mark.parametrize("bad", ["abc", "0", "-5MB"])
def test_bad_sample_size(bad):
    done = CliRunner().invoke(cli, ["audit", *files(), "-t", "bytes", "--sample-bytes", bad])
    assert done.exit_code == 2
    assert done.stderr.startswith(f"fertility: error: --sample-bytes {bad!r}: expected a size")
