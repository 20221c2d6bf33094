"""The gate cannot be passed by NaN: every threshold is a finite number in its range, checked
when the config is read, from the file or from the command line; a measured NaN fails.

`max_regression = nan` once passed a large regression with exit 0 (every comparison with NaN
is false, and the check asked "is the loss above the tolerance?").
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

import fertility
from fertility.cli import cli
from fertility.errors import UsageError
from fertility.gate import _regressions
from fertility.gate.config import KEYS, PER_LANGUAGE, THRESHOLD_RANGES, GateConfig, load_config, parse_config
from fertility.metrics.counts import Counts
from fertility.results.model import AuditResult

ENG = "The river market opens at dawn.\nBoats arrive.\n"
BEN = "নদীর বাজার ভোরে খোলে।\nনৌকা আসে।\n"


def _in_range(key: str, value: float) -> bool:
    low, high, low_open, high_open, _ = THRESHOLD_RANGES[key]
    return (math.isfinite(value) and (value > low if low_open else value >= low)
            and (value < high if high_open else value <= high))


def test_every_threshold_has_a_range() -> None:
    assert set(THRESHOLD_RANGES) == {*PER_LANGUAGE, "max_regression"}


@given(st.sampled_from(sorted(THRESHOLD_RANGES)), st.floats(), st.booleans())
def test_a_threshold_is_accepted_only_finite_and_in_range(key: str, value: float, per_language: bool) -> None:
    table: dict = {"tokenizer": "bytes", "corpus": ["corpus"]}
    if key == "max_regression":
        table |= {"baseline": "a.json", key: value}
    else:
        table[key] = {"ben_Beng": value} if per_language else value
    try:
        config = parse_config(table, source="t.toml")
    except UsageError as err:
        assert not _in_range(key, value), err
        assert str(err).startswith(f"t.toml: {key}")
        return
    assert _in_range(key, value)
    stored = config.max_regression if key == "max_regression" else next(iter((config.limits or {})[key].values()))
    assert stored == value


@pytest.mark.parametrize("value", ['"0.1"', "true", "[0.1]", '{ ben_Beng = "0.1" }', "2024-01-01", "nan"])
def test_a_threshold_of_another_toml_type_is_one_line(tmp_path: Path, value: str) -> None:
    path = tmp_path / "fertility.toml"
    path.write_text(f'tokenizer = "bytes"\ncorpus = "c"\nmax_unknown_share = {value}\n', encoding="utf-8")
    table, source = load_config(path)
    with pytest.raises(UsageError, match=r"max_unknown_share\.(\*|ben_Beng) must be a"):
        parse_config(table, source=source)


@pytest.mark.parametrize("body", ["tool = 3\n", 'tool = "fertility"\n', "[tool]\nfertility = 1\n",
                                  "[tool]\nfertility = [1, 2]\n", "[[tool.fertility]]\ntokenizer = 'bytes'\n"])
def test_tool_fertility_that_is_not_a_table(tmp_path: Path, body: str) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(UsageError, match="must be a table") as caught:
        load_config(path)
    assert "\n" not in str(caught.value)


def test_an_unknown_key_lists_every_known_key_even_with_a_suggestion() -> None:
    with pytest.raises(UsageError) as caught:
        parse_config({"tokenizer": "bytes", "max_premum": 2}, source="t.toml")
    assert "did you mean 'max_premium'?" in str(caught.value)
    assert f"known keys: {', '.join(KEYS)}" in str(caught.value)


@pytest.mark.parametrize("args", [
    ["--max-regression", "nan"], ["--max-regression", "inf"], ["--max-regression", "1"],
    ["--max-premium", "-inf"], ["--max-premium", "0"], ["--min-chars-per-token", "-1"],
    ["--max-grapheme-cut-share", "nan"], ["--max-unknown-share", "ben_Beng=inf"],
])
def test_command_line_thresholds_are_held_to_the_same_ranges(tmp_path: Path, monkeypatch, args: list[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "eng_Latn.txt").write_text(ENG, encoding="utf-8")
    (tmp_path / "corpus" / "ben_Beng.txt").write_text(BEN, encoding="utf-8")
    (tmp_path / "a.json").write_text(fertility.audit(["bytes"], [tmp_path / "corpus"], diagnose=False).to_json(),
                                     encoding="utf-8")
    done = CliRunner().invoke(cli, ["check", "-t", "bytes", "corpus", "--baseline", "a.json", *args,
                                    "--junit", "junit.xml"], env={"GITHUB_STEP_SUMMARY": None})
    assert done.exit_code == 2, done.output
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert not (tmp_path / "junit.xml").exists()  # refused before the gate ran


def test_a_nan_regression_fails_the_gate(tmp_path: Path) -> None:
    """A language whose chars/token cannot be measured now (no tokens) is no pass."""
    (tmp_path / "eng_Latn.txt").write_text(ENG, encoding="utf-8")
    (tmp_path / "ben_Beng.txt").write_text(BEN, encoding="utf-8")
    saved = tmp_path / "base.json"
    base = fertility.audit(["bytes"], [tmp_path], diagnose=False)
    saved.write_text(base.to_json(), encoding="utf-8")
    now = dict(base.counts_for("bytes"))
    now["ben_Beng"] = dataclasses.replace(now["ben_Beng"], n_tokens=0)
    config = GateConfig(tokenizer="bytes", corpus=[str(tmp_path)], baseline=str(saved), max_regression=0.5)
    checks = {c.lang: c for c in _regressions(config, now, AuditResult.load(saved).signature)}
    assert math.isnan(checks["ben_Beng"].measured) and not checks["ben_Beng"].passed
    assert checks["eng_Latn"].measured == 0.0 and checks["eng_Latn"].passed
    assert isinstance(now["eng_Latn"], Counts)
