"""`fertility check -f json` (the verdict, a stable shape), `check -q` (the exit code only), and
help texts that print what they mean (no `%%`)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from fertility.cli import cli

VERDICT_KEYS = ["schema_version", "fertility_version", "passed", "source", "n_checks", "n_failed", "checks",
                "signature", "signature_short"]


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], env={"COLUMNS": "200", "NO_COLOR": "1"})


def test_the_json_verdict_has_each_threshold_and_the_signature(small):
    # the bytes baseline: eng_Latn 0.99 chars/token, ben_Beng 0.38, zho_Hans 0.34 (3 bytes a character)
    result = run("check", "-t", "bytes", "--min-chars-per-token", "0.5", "-f", "json", small)
    assert result.exit_code == 1  # a failed threshold, reported as JSON on stdout
    verdict = json.loads(result.stdout)
    assert list(verdict) == VERDICT_KEYS and verdict["schema_version"] == 1
    assert verdict["passed"] is False and verdict["source"] == "options"
    assert verdict["n_checks"] == 3 and verdict["n_failed"] == 2
    by_lang = {c["lang"]: c for c in verdict["checks"]}
    assert all(list(c) == ["threshold", "lang", "limit", "measured", "passed"] for c in verdict["checks"])
    audit = json.loads(run("audit", "-t", "bytes", "-f", "json", "--no-findings", "-q", small).stdout)
    rows = {r["lang"]: r for r in audit["rows"]}
    for lang, check in by_lang.items():
        assert check["threshold"] == "min_chars_per_token" and check["limit"] == 0.5
        assert check["measured"] == rows[lang]["chars_per_token"] == rows[lang]["n_chars"] / rows[lang]["n_tokens"]
        assert check["passed"] is (check["measured"] >= 0.5)
    assert by_lang["eng_Latn"]["passed"] and not by_lang["ben_Beng"]["passed"]
    assert verdict["signature"] == audit["signature"] and verdict["signature_short"] == audit["signature_short"]
    assert result.stderr.startswith("fertility: check failed: 2 of 3 thresholds failed")


def test_the_json_verdict_of_a_pass_and_to_a_file(small, tmp_path):
    result = run("check", "-t", "bytes", "--min-chars-per-token", "0.1", "-f", "json", small)
    assert result.exit_code == 0 and json.loads(result.stdout)["passed"] is True and result.stderr == ""
    out = tmp_path / "verdict.json"
    written = run("check", "-t", "bytes", "--min-chars-per-token", "0.1", "-f", "json", "-o", out, small)
    assert written.exit_code == 0 and written.stdout == "" and json.loads(out.read_text("utf-8"))["n_failed"] == 0


@pytest.mark.parametrize("limit, code", [("0.1", 0), ("0.5", 1)], ids=["pass", "fail"])
def test_quiet_prints_nothing_and_exits_with_the_verdict(small, tmp_path, limit, code):
    result = run("check", "-q", "-t", "bytes", "--min-chars-per-token", limit, small)
    assert result.exit_code == code and result.stdout == "" and result.stderr == ""
    junit = tmp_path / "junit.xml"
    with_file = run("check", "-q", "-t", "bytes", "--min-chars-per-token", limit, "--junit", junit, small)
    assert with_file.exit_code == code and with_file.output == "" and "<testsuite" in junit.read_text("utf-8")
    quiet_json = run("check", "-q", "-f", "json", "-t", "bytes", "--min-chars-per-token", limit, small)
    assert quiet_json.exit_code == code and quiet_json.output == ""


def test_quiet_still_names_a_usage_error(small):
    result = run("check", "-q", "-t", "bytes", small)  # no threshold: nothing to check
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith("fertility: error: ") and "no thresholds configured" in result.stderr


def test_no_help_text_prints_a_doubled_percent_sign():
    commands = ["", *sorted(cli.commands)]
    for name in commands:
        result = run(*([name] if name else []), "--help")
        assert result.exit_code == 0, name
        assert "%%" not in result.output, (name, [line for line in result.output.splitlines() if "%%" in line])
    assert "95% intervals" in run("audit", "--help").output
