"""Names in markdown tables: a tokenizer file or a corpus file may be called `a|b`, and an
unescaped `|` ended the cell, so every number of the row sat one column to the right of its
header (the audit's, compare's and check's markdown; the leaderboard escaped it already)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import tokenizers
from click.testing import CliRunner
from tokenizers import decoders, models, pre_tokenizers, trainers

from fertility.cli import cli

ENG = "The river market opens at dawn.\nBoats arrive.\n"


def _cells(line: str) -> list[str]:
    """A markdown table row's cells, split on the pipes that are not escaped."""
    return [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def _table(markdown: str) -> list[list[str]]:
    return [_cells(line) for line in markdown.splitlines() if line.startswith("|") and "---" not in line]


def _setup(tmp: Path) -> tuple[str, str]:
    trained = tokenizers.Tokenizer(models.BPE())  # a real byte-level BPE, named by its file
    trained.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trained.decoder = decoders.ByteLevel()
    trained.train_from_iterator([ENG] * 20, trainers.BpeTrainer(
        vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    tokenizer = tmp / "my|bpe.json"
    trained.save(str(tokenizer))
    corpus = tmp / "corpus"
    corpus.mkdir()
    (corpus / "a|b.txt").write_text(ENG, encoding="utf-8")
    return str(tokenizer), str(corpus / "a|b.txt")


def test_audit_and_compare_markdown_keep_numbers_under_their_headers(tmp_path: Path) -> None:
    tokenizer, corpus = _setup(tmp_path)
    runner = CliRunner()
    base = ["-q", "--no-findings", "-t", tokenizer, corpus]
    markdown = runner.invoke(cli, ["audit", *base, "-f", "markdown"])
    data = runner.invoke(cli, ["audit", *base, "-f", "json"])
    assert markdown.exit_code == data.exit_code == 0, markdown.stderr
    header, *rows = _table(markdown.stdout)
    row = json.loads(data.stdout)["rows"][0]
    assert all(len(r) == len(header) for r in rows)
    first = dict(zip(header, rows[0]))
    assert (first["tokenizer"], first["lang"]) == ("my|bpe.json", "a|b")
    assert first["tokens"] == f"{row['n_tokens']:,}" and first["bytes"] == f"{row['n_bytes']:,}"

    compared = runner.invoke(cli, ["compare", tokenizer, "bytes", corpus, "-f", "markdown", "-q"])
    assert compared.exit_code == 0, compared.stderr
    header, *rows = _table(compared.stdout)
    assert all(len(r) == len(header) for r in rows)
    assert rows[0][0] == "a|b"


def test_check_summary_keeps_numbers_under_their_headers(tmp_path: Path) -> None:
    tokenizer, corpus = _setup(tmp_path)
    summary = tmp_path / "summary.md"
    result = CliRunner().invoke(cli, ["check", "-t", tokenizer, corpus, "--min-chars-per-token", "0.5",
                                      "--summary", str(summary)])
    assert result.exit_code == 0, result.stderr
    header, *rows = _table(summary.read_text(encoding="utf-8"))
    assert header == ["threshold", "lang", "limit", "measured", "verdict"]
    assert [len(r) for r in rows] == [5] * len(rows)
    assert rows[0][1] == "a|b"


def test_a_line_break_in_a_file_name_stays_in_its_row(tmp_path: Path) -> None:
    tokenizer, corpus = _setup(tmp_path)
    broken = tmp_path / "my\nbpe.json"
    Path(tokenizer).rename(broken)
    result = CliRunner().invoke(cli, ["audit", "-q", "--no-findings", "-t", str(broken), corpus, "-f", "markdown"])
    assert result.exit_code == 0, result.stderr
    header, *rows = _table(result.stdout)
    assert [len(r) for r in rows] == [len(header)] * 2  # the language and the ALL row, whole
    assert rows[0][0] == "my\\x0abpe.json"
