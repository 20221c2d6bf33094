"""Display names: `-t NAME=SPEC` (and {name: spec} in the library) label every row, table, chart,
JUnit case, comparison and JSON; the default names stay; an existing path is never split."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from xml.etree import ElementTree

import pytest
from click.testing import CliRunner
from real_files import real_file

import fertility
from fertility.backends.labels import split_name
from fertility.cli import cli

ENG = ["The river market opens at dawn.", "Boats arrive with fish and rice."]
BEN = ["নদীর বাজার ভোরে খোলে।", "নৌকা মাছ আর চাল নিয়ে আসে।"]


def run(*args, env=None):
    return CliRunner().invoke(cli, [str(a) for a in args], env={"COLUMNS": "200", "NO_COLOR": "1", **(env or {})})


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "eng_Latn.txt").write_text("\n".join(ENG) + "\n", encoding="utf-8")
    (folder / "ben_Beng.txt").write_text("\n".join(BEN) + "\n", encoding="utf-8")
    return folder


def test_names_label_json_rows_signature_and_table(corpus):
    done = run("audit", "-q", "-t", "gpt-4=tiktoken:cl100k_base", "-t", "raw bytes=bytes", "-f", "json", corpus)
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert {row["tokenizer"] for row in data["rows"]} == {"gpt-4", "raw bytes"}
    assert list(data["signature"]["tokenizers"]) == ["gpt-4", "raw bytes"]
    assert data["signature"]["tokenizers"]["gpt-4"]["backend"] == "tiktoken"  # the name hides no setting
    assert data["signature_short"].startswith("tok:gpt-4@223921b7|tok:raw bytes|")
    assert {f["tokenizer"] for f in data["findings"]} <= {"gpt-4", "raw bytes"}
    table = run("audit", "-q", "-t", "gpt-4=tiktoken:cl100k_base", "-f", "table", corpus).stdout
    assert "│ gpt-4 " in table and "cl100k_base │" not in table


def test_default_names_stay(corpus):
    data = json.loads(run("audit", "-q", "-t", "tiktoken:cl100k_base", "-t", "bytes", "-f", "json", corpus).stdout)
    assert list(data["signature"]["tokenizers"]) == ["cl100k_base", "bytes"]


def test_names_label_charts(corpus):
    pytest.importorskip("vl_convert", reason="vl-convert-python (the report extra) is not installed")
    done = run("audit", "-q", "-t", "mine=bytes", "-t", "theirs=chars", "-f", "html", corpus)
    assert done.exit_code == 0, done.output
    specs = json.loads(done.stdout.split("const FERTILITY_SPECS = ")[1].split(";\nconst FERTILITY_CONFIG")[0])
    assert {v["tokenizer"] for v in specs["chars-per-token"]["data"]["values"]} == {"mine", "theirs"}


def test_names_label_junit_cases(corpus, tmp_path):
    done = run("check", "-t", "mine=bytes", "--min-chars-per-token", "0.1", corpus, "--junit", tmp_path / "j.xml")
    assert done.exit_code == 0, done.output
    suite = ElementTree.parse(tmp_path / "j.xml").getroot()
    assert suite.get("name") == "fertility check: mine"
    assert sorted(case.get("name") for case in suite.iter("testcase")) == ["ben_Beng (mine)", "eng_Latn (mine)"]


def test_names_label_a_comparison(corpus):
    done = run("compare", "-q", "old=bytes", "new=tiktoken:cl100k_base", corpus, "-f", "json")
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert (data["a"], data["b"]) == ("old", "new")


def test_show_uses_the_name():
    done = run("show", "-t", "mine=bytes", "abc")
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith("mine: 3 tokens")


def test_library_names_by_mapping(corpus):
    result = fertility.audit({"mine": "bytes", "theirs": "tiktoken:cl100k_base"}, [corpus], diagnose=False)
    assert result.tokenizers == ("mine", "theirs")
    assert result.counts[("mine", "eng_Latn")].n_tokens == sum(len(line.encode()) for line in ENG)
    with pytest.raises(fertility.UsageError, match="is not a tokenizer name"):
        fertility.audit({"a/b": "bytes"}, [corpus])


def test_an_existing_path_is_never_split(tmp_path, monkeypatch):
    """`r50k=gpt2.tiktoken` is a file here: the path wins. Gone, it is NAME=SPEC; a spec after
    the name may itself hold `=` (split on the first only)."""
    monkeypatch.chdir(tmp_path)
    ranks = real_file("gpt2.tiktoken")
    shutil.copy(ranks, tmp_path / "r50k=gpt2.tiktoken")
    shutil.copy(ranks, tmp_path / "gpt2.tiktoken")
    assert split_name("r50k=gpt2.tiktoken") == (None, "r50k=gpt2.tiktoken")
    assert split_name("hf:org/name=x") == (None, "hf:org/name=x")  # a scheme is no name
    assert split_name("dir/a=b.json") == (None, "dir/a=b.json")  # nor is a path
    assert split_name("mine=a=b.tiktoken") == ("mine", "a=b.tiktoken")
    shutil.copy(ranks, tmp_path / "a=b.tiktoken")
    for spec, expected in (("r50k=gpt2.tiktoken", "r50k_base"), ("mine=a=b.tiktoken", "mine")):
        done = run("show", "-t", spec, "abc")
        assert done.exit_code == 0, done.output
        assert done.stdout.startswith(f"{expected}: ")
    (tmp_path / "r50k=gpt2.tiktoken").unlink()
    done = run("show", "-t", "r50k=gpt2.tiktoken", "abc")
    assert done.exit_code == 0 and done.stdout.startswith("r50k: "), done.output


@pytest.mark.parametrize(("args", "message"), [
    (("-t", "a=bytes", "-t", "a=chars"), "two tokenizers would be named 'a'"),
    (("-t", "cl100k_base=bytes", "-t", "tiktoken:cl100k_base"), "two tokenizers would be named 'cl100k_base'"),
    (("-t", "a="), "-t 'a=': no tokenizer spec after 'a='"),
    (("-t", "a=  "), "-t 'a=  ': no tokenizer spec after 'a='"),
    (("-t", "mine=no-such.tiktoken"), "no-such.tiktoken"),
])
def test_bad_names_are_one_clear_line(corpus, args, message):
    done = run("audit", "-q", *args, "-f", "json", corpus)
    assert done.exit_code == 2, done.output
    first = done.stderr.strip().splitlines()[0]
    assert first.startswith("fertility: error: ") and message in first, done.stderr
    assert "Traceback" not in done.stderr
