"""An output can never overwrite or replace an input (output.refuse_inputs_as_outputs).

`-o` naming a corpus file once replaced the corpus with the CSV results; `extend -o` naming the
base tokenizer's folder replaced the base; `retrain --compare-with` inside the output folder
replaced that tokenizer. Every command now resolves what it reads and what it writes (links
followed, `..` and relative paths resolved, hard links compared by inode) before any work.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fertility.cli import cli
from fertility.errors import OutputError
from fertility.io.output import Input, Output, refuse_inputs_as_outputs

ENG = "The river market opens at dawn.\nBoats arrive.\n"
BEN = "নদীর বাজার ভোরে খোলে।\nনৌকা আসে।\n"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """corpus/{eng,ben}.txt, a link to the folder, a link to a file, a hard link, an empty folder."""
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "eng_Latn.txt").write_text(ENG, encoding="utf-8")
    (tmp_path / "corpus" / "ben_Beng.txt").write_text(BEN, encoding="utf-8")
    (tmp_path / "linked").symlink_to(tmp_path / "corpus", target_is_directory=True)
    (tmp_path / "eng-link.txt").symlink_to(tmp_path / "corpus" / "eng_Latn.txt")
    os.link(tmp_path / "corpus" / "ben_Beng.txt", tmp_path / "ben-hard.txt")
    (tmp_path / "elsewhere").mkdir()
    return tmp_path


def spellings(root: Path) -> st.SearchStrategy[str]:
    """Ways to write a path to corpus/eng_Latn.txt: relative, absolute, through `..`, `.`, a
    link to the folder or to the file."""
    heads = st.sampled_from(["corpus", "./corpus", "elsewhere/../corpus", "linked", "linked/../corpus",
                             str(root / "corpus"), str(root / "linked"), f"{root}/elsewhere/../linked"])
    return st.one_of(heads.map(lambda head: f"{head}/eng_Latn.txt"), st.just("eng-link.txt"),
                     st.just(str(root / "eng-link.txt")))


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60)
@given(data=st.data())
def test_every_spelling_of_an_input_file_is_refused_as_an_output(tree: Path, monkeypatch, data) -> None:
    monkeypatch.chdir(tree)
    given_as = data.draw(spellings(tree), label="input")
    written = data.draw(spellings(tree), label="output")
    with pytest.raises(OutputError, match="an output never replaces an input"):
        refuse_inputs_as_outputs([Input("CORPUS", Path(given_as))], [Output("-o", Path(written))])
    with pytest.raises(OutputError):  # the folder given whole: also refused
        refuse_inputs_as_outputs([Input("CORPUS", Path(given_as).parent)], [Output("-o", Path(written))])


def test_a_hard_link_is_the_same_file(tree: Path, monkeypatch) -> None:
    monkeypatch.chdir(tree)
    with pytest.raises(OutputError, match="the same file through a hard link"):
        refuse_inputs_as_outputs([Input("CORPUS", Path("corpus/ben_Beng.txt"))], [Output("-o", Path("ben-hard.txt"))])
    with pytest.raises(OutputError, match=r"is the same file as .*corpus/ben_Beng.txt \(a hard link\), inside corpus"):
        refuse_inputs_as_outputs([Input("CORPUS", Path("corpus"))], [Output("--junit", Path("ben-hard.txt"))])


def test_a_folder_output_is_refused_for_the_files_it_would_write(tree: Path, monkeypatch) -> None:
    """retrain/extend -o DIR writes DIR/tokenizer.json and DIR/training.json; a folder that
    holds the base tokenizer is refused, one holding the corpus in a subfolder is not."""
    monkeypatch.chdir(tree)
    (tree / "tok").mkdir()
    (tree / "tok" / "tokenizer.json").write_text("{}", encoding="utf-8")
    names = ("tokenizer.json", "training.json")
    with pytest.raises(OutputError, match="tok/tokenizer.json: -o would replace linked-tok/tokenizer.json"):
        (tree / "linked-tok").symlink_to(tree / "tok", target_is_directory=True)
        refuse_inputs_as_outputs([Input("BASE", Path("linked-tok/tokenizer.json"))], [Output("-o", Path("tok"), names)])
    refuse_inputs_as_outputs([Input("CORPUS", Path("corpus"))], [Output("-o", Path("."), names)])


def test_inputs_that_do_not_exist_and_unrelated_outputs_pass(tree: Path, monkeypatch) -> None:
    monkeypatch.chdir(tree)
    refuse_inputs_as_outputs([Input("CORPUS", Path("corpus")), Input("-t", Path("nowhere.json")),
                              Input("CORPUS", "-"), Input("CORPUS", "memory://x"), Input("-t", None)],
                             [Output("-o", Path("elsewhere/out.json")), Output("-o", Path("-")), Output("--junit", None),
                              Output("-o", Path("/dev/null"))])


def test_a_cache_folder_only_guards_its_entries(tree: Path, monkeypatch) -> None:
    monkeypatch.chdir(tree)
    (tree / "cache").mkdir()
    (tree / "cache" / "entry").write_bytes(b"profile")
    cache = Input("the profile cache", Path("cache"), whole=False)
    refuse_inputs_as_outputs([cache], [Output("-o", Path("cache/results.csv"))])
    with pytest.raises(OutputError, match="would replace a file inside cache"):
        refuse_inputs_as_outputs([cache], [Output("-o", Path("cache/entry"))])


def run(*args: str, env: dict | None = None):
    return CliRunner().invoke(cli, list(args), env={"GITHUB_STEP_SUMMARY": None, "NO_COLOR": "1", **(env or {})})


def test_the_refusal_comes_before_the_force_question(tree: Path, monkeypatch) -> None:
    """Without --force the answer is not "pass --force": forcing would still be refused."""
    monkeypatch.chdir(tree)
    done = run("audit", "-q", "-t", "bytes", "-f", "csv", "corpus/eng_Latn.txt", "-o", "eng-link.txt")
    assert done.exit_code == 2 and "would replace" in done.stderr and "--force" not in done.stderr
    assert (tree / "corpus" / "eng_Latn.txt").read_text(encoding="utf-8") == ENG


def test_ordinary_outputs_still_work(tree: Path, monkeypatch) -> None:
    monkeypatch.chdir(tree)
    assert run("audit", "-q", "-t", "bytes", "-f", "csv", "corpus", "-o", "elsewhere/out.csv").exit_code == 0
    (tree / "cache").mkdir()
    done = run("audit", "-q", "-t", "bytes", "-f", "csv", "corpus", "-o", "cache/new.csv",
               env={"FERTILITY_CACHE_DIR": "cache"})
    assert done.exit_code == 0, done.stderr
    assert (tree / "cache" / "new.csv").read_text(encoding="utf-8").startswith("tokenizer,lang")


def test_retrain_into_the_current_folder_then_compared_with_its_own_output(tree: Path, monkeypatch) -> None:
    """`-o .` still works (only tokenizer.json and training.json are written, neither an
    input); comparing a retrain with the tokenizer it would replace is refused."""
    monkeypatch.chdir(tree / "elsewhere")
    done = run("retrain", "../corpus", "--vocab-size", "300", "-o", ".", "-q", "-f", "csv", "--held-out", "../corpus")
    assert done.exit_code == 0, done.stderr
    before = (tree / "elsewhere" / "tokenizer.json").read_bytes()
    refused = run("retrain", "../linked", "--vocab-size", "400", "-o", ".", "--force", "-q",
                  "--compare-with", f"{tree}/elsewhere/tokenizer.json")
    assert refused.exit_code == 2 and "an input given as --compare-with" in refused.stderr, refused.stderr
    assert (tree / "elsewhere" / "tokenizer.json").read_bytes() == before
