"""Edges of input on the command line: standard input, remote URLs and language names.

A closed stdin (`<&-`) and `-` given twice ended in tracebacks, `--lang` without `-` was
ignored without a word, an `hf://` URL without network was a traceback, and a corpus file or a
JSON-lines language named `ALL` gave an audit JSON that the tool's own `report` refused (a
second ALL row).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from fertility.cli import cli
from fertility.errors import CorpusError
from fertility.io.corpus import CorpusStream
from fertility.io.languages import RESERVED_LANGUAGE
from fertility.io.readers import ReadOptions
from fertility.metrics.counts import ALL

ENG = "The river market opens at dawn.\nBoats arrive.\n"
BEN = "নদীর বাজার ভোরে খোলে।\nনৌকা আসে।\n"


def fertility(*args: str, cwd: Path, env: dict | None = None, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fertility", *args], check=False, cwd=cwd, capture_output=True, text=True,
                          timeout=120, env={**os.environ, **(env or {})}, **kwargs)


def test_a_closed_stdin_is_one_line(tmp_path: Path) -> None:
    """`fertility audit - --lang ben_Beng <&-`: file descriptor 0 closed before the command starts."""
    done = fertility("audit", "-", "--lang", "ben_Beng", "-t", "bytes", "-q", cwd=tmp_path,
                     preexec_fn=lambda: os.close(0))
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("fertility: error: -: standard input is closed") and done.stderr.count("\n") == 1


def test_stdin_still_reads_once(tmp_path: Path) -> None:
    done = fertility("audit", "-", "--lang", "ben_Beng", "-t", "bytes", "-q", "-f", "json", "--no-findings",
                     cwd=tmp_path, input=BEN)
    assert done.returncode == 0, done.stderr
    rows = {row["lang"]: row for row in json.loads(done.stdout)["rows"]}
    assert rows["ben_Beng"]["n_bytes"] == len("".join(BEN.split("\n")).encode("utf-8"))


def test_an_unreachable_hub_url_is_one_line(tmp_path: Path) -> None:
    """The hub at a local port nobody listens on: the same failure as no network at all."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # free, and closed again below: connections are refused
    done = fertility("audit", "hf://datasets/nobody/nothing/ben_Beng.jsonl", "-t", "bytes", "-q", cwd=tmp_path,
                     env={"HF_ENDPOINT": f"http://127.0.0.1:{port}", "HF_HUB_OFFLINE": "0"})
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("fertility: error: hf://datasets/nobody/nothing/ben_Beng.jsonl: cannot reach it ("), \
        done.stderr
    assert done.stderr.count("\n") == 1


def test_the_reserved_name_is_the_all_row() -> None:
    assert RESERVED_LANGUAGE == ALL


@pytest.mark.parametrize("paths, options, problem", [
    (["-", "-"], ReadOptions(stdin_lang="ben_Beng"), "standard input is given twice"),
    (["corpus"], ReadOptions(stdin_lang="ben_Beng"), "names the language of standard input, but no corpus is `-`"),
    (["-"], ReadOptions(stdin_lang="ALL"), "'ALL' cannot name a language"),
    (["-"], ReadOptions(stdin_lang=" "), "' ' cannot name a language"),
    (["-"], ReadOptions(stdin_lang="ben\tBeng"), "cannot name a language (empty, or with a control character)"),
])
def test_corpus_paths_are_checked_before_reading(paths: list, options: ReadOptions, problem: str) -> None:
    with pytest.raises(CorpusError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        CorpusStream(paths, options=options)


@pytest.mark.parametrize("lang", ["ALL", "a\x00b", "\n", "eng\x7f"])
def test_a_record_language_is_checked_where_every_language_is_first_seen(tmp_path: Path, lang: str) -> None:
    path = tmp_path / "mixed.jsonl"
    path.write_text(json.dumps({"text": "Boats arrive.", "lang": "eng_Latn"}) + "\n"
                    + json.dumps({"text": "Boats leave.", "lang": lang}) + "\n", encoding="utf-8")
    stream = CorpusStream([path], options=ReadOptions(lang_field="lang"))
    with pytest.raises(CorpusError, match=f"^{path}: record 2: "):
        list(stream.documents())


def test_lower_case_all_is_a_language_and_its_audit_reads_back(tmp_path: Path, monkeypatch) -> None:
    """`all` is ISO 639-3 Allar: only the upper-case row name is reserved, and an audit of `all`
    is one `report` and `compare` accept."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "all.txt").write_text(ENG, encoding="utf-8")
    (tmp_path / "corpus" / "ben_Beng.txt").write_text(BEN, encoding="utf-8")
    runner = CliRunner()
    for name, tokenizer in (("a.json", "bytes"), ("b.json", "chars")):
        done = runner.invoke(cli, ["audit", "corpus", "-t", tokenizer, "-f", "json", "-q", "-o", name])
        assert done.exit_code == 0, done.stderr
        assert "not a language code" not in done.stderr
    rows = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))["rows"]
    assert [row["lang"] for row in rows] == ["all", "ben_Beng", "ALL"]
    compared = runner.invoke(cli, ["compare", "a.json", "b.json", "-f", "json", "--reference", "all"])
    assert compared.exit_code == 0, compared.stderr
