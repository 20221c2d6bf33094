"""Numbers are never cut (issue 8, item 7): tables fit a terminal by dropping whole columns,
and off a terminal they are printed whole, whatever COLUMNS says.

Real audits (cl100k and GPT-2 on three languages of the bundled parallel samples); every
number the JSON holds for a shown column must appear whole in its cell, formatted here apart
from the renderer. "On a terminal" is rich's FORCE_COLOR, with colours stripped.
"""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from real_files import real_file

from fertility.cli import cli

CL100K = "tiktoken:cl100k_base"
WIDTHS = (40, 60, 80, 118, 200)
ANSI = re.compile(r"\x1b\[[0-9;]*m")

# header -> (JSON key, kind): the table's display contract
AUDIT_COLUMNS = {
    "tokenizer": ("tokenizer", "text"), "lang": ("lang", "text"), "script": ("script", "text"),
    "docs": ("n_docs", "int"), "bytes": ("n_bytes", "int"), "chars": ("n_chars", "int"),
    "graphemes": ("n_graphemes", "int"), "words": ("n_words", "int"), "tokens": ("n_tokens", "int"),
    "chars/tok": ("chars_per_token", "ratio"), "bytes/tok": ("bytes_per_token", "ratio"),
    "graph/tok": ("graphemes_per_token", "ratio"), "tok/word": ("tokens_per_word", "ratio"),
    "split %": ("split_word_share", "share"),
}
COMPARE_COLUMNS = {
    "lang": ("lang", "text"), "script": ("script", "text"), "A c/t": ("chars_per_token_a", "ratio"),
    "B c/t": ("chars_per_token_b", "ratio"), "B−A": ("chars_per_token_diff", "signed"),
    "B/A": ("chars_per_token_ratio", "ratio3"), "95% CI": (("ratio_ci_low", "ratio_ci_high"), "interval"),
    "A prem": ("premium_a", "ratio"), "B prem": ("premium_b", "ratio"),
}


def formatted(value, kind: str) -> str:
    if kind == "interval":
        low, high = value
        return "n/a" if low is None else f"{low:.3f}–{high:.3f}"
    if kind == "text":
        return str(value)
    if value is None:
        return "n/a"
    return {"int": f"{value:,}", "ratio": f"{value:.2f}", "ratio3": f"{value:.3f}",
            "share": f"{100 * value:.1f}%", "signed": f"{value:+.2f}", "g4": f"{value:.4g}"}[kind]


def run(*args, width: int, terminal: bool):
    env = {"COLUMNS": str(width), "NO_COLOR": "1"}
    if terminal:
        env["FORCE_COLOR"] = "1"
    result = CliRunner().invoke(cli, [str(a) for a in args], env=env)
    assert result.exit_code in (0, 1), result.output
    return result, ANSI.sub("", result.stdout)


def table_of(text: str) -> tuple[list[str], list[list[str]]]:
    """Header cells and body rows of the first box table in `text`."""
    header = next(line for line in text.splitlines() if "┃" in line)
    headers = [cell.strip() for cell in header.split("┃")[1:-1]]
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in text.splitlines() if line.startswith("│")]
    return headers, rows


def dropped_note(text: str) -> list[str]:
    """The columns the note under the table names (the note may wrap on a narrow terminal)."""
    prose = " ".join(line.strip() for line in text.splitlines() if line[:1] not in "┏┃┡│├└")
    found = re.search(r"not shown at this width: (.*?);", prose)
    return found.group(1).split(", ") if found else []


@pytest.fixture(scope="module")
def audit_rows(small) -> list[dict]:
    out = CliRunner().invoke(cli, ["audit", "-q", "-t", CL100K, "-t", str(real_file("gpt2.tiktoken")),
                                   "--no-findings", "-f", "json", str(small)])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)["rows"]


def check_cells(headers, rows, expected_rows, columns) -> None:
    assert len(rows) == len(expected_rows)
    for cells, expected in zip(rows, expected_rows):
        assert len(cells) == len(headers)
        for header, cell in zip(headers, cells):
            key, kind = columns[header]
            value = tuple(expected[k] for k in key) if isinstance(key, tuple) else expected[key]
            assert cell == formatted(value, kind), (header, cell, expected)


@pytest.mark.parametrize("width", WIDTHS)
def test_audit_off_a_terminal_is_the_full_table_at_any_columns(width, small, audit_rows):
    _result, text = run("audit", "-q", "-t", CL100K, "-t", real_file("gpt2.tiktoken"), "--no-findings", small,
                       width=width, terminal=False)
    assert "…" not in text
    headers, rows = table_of(text)
    assert headers == list(AUDIT_COLUMNS)  # every column, whatever COLUMNS says
    check_cells(headers, rows, audit_rows, AUDIT_COLUMNS)
    assert "not shown at this width" not in text


@pytest.mark.parametrize("width", WIDTHS)
def test_audit_on_a_terminal_drops_whole_columns_and_names_them(width, small, audit_rows):
    _result, text = run("audit", "-q", "-t", CL100K, "-t", real_file("gpt2.tiktoken"), "--no-findings", small,
                       width=width, terminal=True)
    assert "…" not in text
    headers, rows = table_of(text)
    assert {"tokenizer", "lang", "chars/tok"} <= set(headers)
    check_cells(headers, rows, audit_rows, AUDIT_COLUMNS)
    table_lines = [line for line in text.splitlines() if line[:1] in "┏┃┡│├└"]
    assert max(len(line) for line in table_lines) <= width
    missing = [h for h in AUDIT_COLUMNS if h not in headers]
    if missing:
        assert sorted(dropped_note(text)) == sorted(missing)
    else:
        assert "not shown at this width" not in text
    if width >= 200:
        assert not missing


@pytest.fixture(scope="module")
def compare_rows(small) -> list[dict]:
    out = CliRunner().invoke(cli, ["compare", str(real_file("gpt2.tiktoken")), CL100K, str(small), "-q", "-f", "json"])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)["rows"]


@pytest.mark.parametrize("terminal", [False, True], ids=["redirected", "terminal"])
@pytest.mark.parametrize("width", WIDTHS)
def test_compare_table_never_cuts_a_number(width, terminal, small, compare_rows):
    _result, text = run("compare", real_file("gpt2.tiktoken"), CL100K, small, "-q", width=width, terminal=terminal)
    assert "…" not in text
    headers, rows = table_of(text)
    if not terminal:
        assert headers == list(COMPARE_COLUMNS)
    assert {"lang", "A c/t", "B c/t"} <= set(headers)
    check_cells(headers, rows, compare_rows, COMPARE_COLUMNS)
    missing = [h for h in COMPARE_COLUMNS if h not in headers]
    assert sorted(dropped_note(text)) == sorted(missing)


@pytest.mark.parametrize("terminal", [False, True], ids=["redirected", "terminal"])
@pytest.mark.parametrize("width", (30, 40, 80))
def test_gate_table_never_cuts_a_number(width, terminal, small, tmp_path):
    junit = tmp_path / "junit.xml"
    _result, text = run("check", "-t", CL100K, small, "--min-chars-per-token", "0.8", "--max-premium", "3",
                       "--junit", junit, width=width, terminal=terminal)
    assert "…" not in text
    headers, rows = table_of(text)
    assert {"lang", "measured", "verdict"} <= set(headers)
    # the JUnit file carries every measured value and limit at the same precision
    from xml.etree import ElementTree
    cases = ElementTree.parse(junit).getroot().findall("testcase")
    assert len(rows) == len(cases)
    failures = {(c.get("classname"), c.get("name").removesuffix(" (cl100k_base)")): c.find("failure") for c in cases}
    for cells in rows:
        row = dict(zip(headers, cells))
        assert row["verdict"] in ("pass", "FAIL")
        assert re.fullmatch(r"[0-9.e+-]+", row["measured"]), row
        if "threshold" in row:
            failure = failures[(f"fertility.{row['threshold']}", row["lang"])]
            if failure is not None:
                assert f"measured {row['measured']}," in failure.get("message")
