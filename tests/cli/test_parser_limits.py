"""Inputs that reach the limits of the parsers under fertility rather than fertility's own checks.

Python refuses to turn a string of over 4,300 digits into an int (a guard against quadratic
parsing) with a plain ValueError, which `json.loads` and `tomllib` let through; `tomllib` recurses
once per nesting level; `float()` turns 400 digits into infinity. Each row runs the real command
(CliRunner) in a fresh folder ({tmp} in a message is its path) and must end in one line naming the file or option, exit 2 (or a
correct result), never a traceback, with every file that existed before left as it was.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from cases import Case, snapshot
from click.testing import CliRunner

from fertility.cli import cli

ENG = "The river market opens at dawn.\nBoats arrive.\n"
BEN = "নদীর বাজার ভোরে খোলে।\nনৌকা আসে।\n"
DIGITS = "9" * 5000  # past Python's 4,300-digit limit for int() of a string
AUDIT = ("audit", "-q", "-f", "csv", "--no-findings", "-t", "bytes")


def tiny_corpus(tmp: Path) -> None:
    (tmp / "corpus").mkdir(exist_ok=True)
    (tmp / "corpus" / "eng_Latn.txt").write_text(ENG, encoding="utf-8")
    (tmp / "corpus" / "ben_Beng.txt").write_text(BEN, encoding="utf-8")


def _files(files: dict[str, str]) -> Callable[[Path], None]:
    def setup(tmp: Path) -> None:
        tiny_corpus(tmp)
        for name, content in files.items():
            (tmp / name).write_text(content, encoding="utf-8")
    return setup


def _touch(path: Path) -> Path:
    path.write_bytes(b'tokenizer = "bytes"\n')
    return path


def _record(text: str, **extra: str) -> str:
    """One JSON line; `extra` values are spliced in raw (numbers JSON cannot build from Python)."""
    fields = [f'"text": {json.dumps(text)}'] + [f'"{key}": {value}' for key, value in extra.items()]
    return "{" + ", ".join(fields) + "}\n"

CASES: list[Case] = [
    # A JSON line whose unread field holds a 5,000-digit number is valid JSON: the record is read.
    Case("jsonl-long-number-in-another-field", (*AUDIT, "eng_Latn.jsonl"), 0, "",
         setup=_files({"eng_Latn.jsonl": _record("The river market opens at dawn.", tokens=DIGITS)})),
    # ... and when that number is the text, the record is refused as any non-string text is.
    Case("jsonl-long-number-as-the-text", (*AUDIT, "eng_Latn.jsonl"), 2,
         "eng_Latn.jsonl: record 2: field 'text' (the text) is int, not a string",
         setup=_files({"eng_Latn.jsonl": _record("Boats arrive.") + '{"text": ' + DIGITS + "}\n"})),
    # check's config (TOML): a long integer, nesting past the recursion limit, an endless device.
    Case("check-config-long-integer", ("check", "--config", "fertility.toml"), 2,
         "fertility.toml: invalid TOML (Exceeds the limit (4300 digits)",
         setup=_files({"fertility.toml": f'tokenizer = "bytes"\ncorpus = ["corpus"]\nmin_chars_per_token = {DIGITS}\n'})),
    Case("check-config-arrays-nested-100000-deep", ("check", "--config", "fertility.toml"), 2,
         "fertility.toml: invalid TOML (arrays or inline tables nested too deeply to read)",
         setup=_files({"fertility.toml": 'tokenizer = "bytes"\nx = ' + "[" * 100_000 + "]" * 100_000 + "\n"})),
    Case("check-config-inline-tables-nested-3000-deep", ("check",), 2,
         "{tmp}/fertility.toml: invalid TOML (arrays or inline tables nested too deeply to read)",
         setup=_files({"fertility.toml": 'tokenizer = "bytes"\nx = ' + "{a=" * 3000 + "1" + "}" * 3000 + "\n"})),
    Case("check-config-is-dev-zero", ("check", "--config", "/dev/zero"), 2,
         "/dev/zero: not a regular file (a pipe, device or folder); a configuration file is read from a file",
         setup=tiny_corpus),
    Case("check-config-is-a-fifo", ("check", "--config", "fifo.toml"), 2,
         "fifo.toml: not a regular file", setup=lambda tmp: (tiny_corpus(tmp), os.mkfifo(tmp / "fifo.toml"))),
    Case("check-config-300mb", ("check",), 2,
         "{tmp}/fertility.toml: 314,572,800 bytes, more than any real configuration file (fertility reads at most 16 MiB)",
         setup=lambda tmp: (tiny_corpus(tmp), os.truncate(_touch(tmp / "fertility.toml"), 300 << 20))),
    # A size of 5,000 digits is an infinite float: int() of it raised OverflowError.
    Case("sample-bytes-5000-digits", (*AUDIT, "corpus", "--sample-bytes", DIGITS), 2,
         "--sample-bytes '9999999999999999999999999999999999999999'...: more than 1,125,899,906,842,624 bytes",
         setup=tiny_corpus),
    Case("sample-bytes-400-digits-in-gib", (*AUDIT, "corpus", "--sample-bytes", "9" * 400 + "GiB"), 2,
         "--sample-bytes '9999999999999999999999999999999999999999'...: more than", setup=tiny_corpus),
    Case("sample-bytes-just-over-the-limit", (*AUDIT, "corpus", "--sample-bytes", "1126t"), 2,
         "--sample-bytes '1126t': more than 1,125,899,906,842,624 bytes", setup=tiny_corpus),
    # extend parses its base tokenizer.json itself.
    Case("extend-base-with-a-long-number", ("extend", "base.json", "corpus", "--add", "10", "-o", "out", "-q"), 2,
         "base.json: not a tokenizer.json (Exceeds the limit (4300 digits)",
         setup=_files({"base.json": '{"version": "1.0", "x": ' + DIGITS + ', "model": {"type": "BPE"}}'})),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_parser_limit(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    case.setup(tmp_path)
    before = snapshot(tmp_path)
    result = CliRunner().invoke(cli, list(case.args), env={"COLUMNS": "120", "NO_COLOR": "1", **case.env})
    assert result.exit_code == case.exit_code, (result.exit_code, result.stderr, result.stdout)
    first = result.stderr.strip().splitlines()[0] if result.stderr.strip() else ""
    assert first.removeprefix("fertility: error: ").startswith(case.stderr_starts.format(tmp=tmp_path)), result.stderr
    assert "Traceback" not in result.stderr
    assert snapshot(tmp_path) == before


def test_a_long_number_in_another_field_leaves_the_counts_alone(tmp_path: Path, monkeypatch) -> None:
    """The record with the 5,000-digit field counts exactly as the same text without it."""
    monkeypatch.chdir(tmp_path)
    text = "The river market opens at dawn."
    Path("eng_Latn.jsonl").write_text(_record(text, tokens=DIGITS), encoding="utf-8")
    result = CliRunner().invoke(cli, ["audit", "-q", "--no-findings", "-f", "json", "-t", "bytes", "eng_Latn.jsonl"])
    assert result.exit_code == 0, result.stderr
    row = json.loads(result.stdout)["rows"][0]
    assert (row["n_docs"], row["n_bytes"], row["n_tokens"]) == (1, len(text), len(text))
