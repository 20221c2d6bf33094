"""The command line, through click's CliRunner and through the installed `fertility` command."""

import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from real_files import mistral_file, real_file

from fertility.cli import cli
from fertility.io.samples import samples_dir

ROOT = Path(__file__).resolve().parents[2]


def run(*args, env=None):
    runner = CliRunner()
    return runner.invoke(cli, list(args), env={"COLUMNS": "200", "NO_COLOR": "1", **(env or {})})


def rows_of(result):
    payload = json.loads(result.stdout)
    return {(r["tokenizer"], r["lang"]): r for r in payload["rows"]}


def tiny_corpus(tmp_path):
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "eng_Latn.txt").write_text("The river market opens at dawn.\nBoats arrive.\n", encoding="utf-8")
    (tmp_path / "ben_Beng.txt").write_text("নদীর বাজার ভোরে খোলে।\nনৌকা আসে।\n", encoding="utf-8")
    return tmp_path


def test_default_audit_runs_on_bundled_samples_and_shows_the_imbalance():
    result = run("audit", "-f", "json")
    assert result.exit_code == 0, result.output
    rows = rows_of(result)
    langs = {lang for _, lang in rows}
    assert len(langs - {"ALL"}) >= 12
    ben, eng = rows[("cl100k_base", "ben_Beng")], rows[("cl100k_base", "eng_Latn")]
    assert ben["chars_per_token"] < 1.5 and eng["chars_per_token"] > 3.5


def test_json_contract(tmp_path):
    result = run("audit", "-t", "bytes", "-f", "json", str(tiny_corpus(tmp_path)))
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert set(payload) >= {"fertility_version", "signature", "rows"}
    signature = payload["signature"]
    assert list(signature)[-1] == "fertility"
    for key in ("tokenizers", "corpus", "doc_mode", "normalization", "segmenter",
                "segmenter_unicode", "libraries"):
        assert key in signature
    row = rows_of(result)[("bytes", "eng_Latn")]
    text = "The river market opens at dawn.Boats arrive."
    assert row["n_bytes"] == row["n_tokens"] == len(text.encode())
    assert row["bytes_per_token"] == 1.0
    assert row["n_docs"] == 2 and row["n_words"] == 8
    all_row = rows_of(result)[("bytes", "ALL")]
    assert all_row["n_bytes"] == sum(r["n_bytes"] for (t, l), r in rows_of(result).items() if l != "ALL")


def test_csv_markdown_and_table(tmp_path):
    corpus = str(tiny_corpus(tmp_path))
    csv = run("audit", "-t", "chars", "-f", "csv", corpus)
    assert csv.exit_code == 0
    header = csv.stdout.splitlines()[0].split(",")
    assert header[:3] == ["tokenizer", "lang", "script"] and "chars_per_token" in header
    assert len(csv.stdout.splitlines()) == 1 + 3
    markdown = run("audit", "-t", "chars", "-f", "markdown", corpus)
    assert markdown.stdout.startswith("| tokenizer | lang | script |")
    assert "signature: `tok:chars" in markdown.stdout
    table = run("audit", "-t", "chars", corpus)
    assert table.exit_code == 0
    assert "ben_Beng" in table.stdout and "chars/tok" in table.stdout and "1.00" in table.stdout


def test_format_from_environment(tmp_path):
    result = run("audit", "-t", "bytes", str(tiny_corpus(tmp_path)), env={"FERTILITY_FORMAT": "csv"})
    assert result.stdout.startswith("tokenizer,lang,script")
    bad = run("audit", "-t", "bytes", str(tmp_path), env={"FERTILITY_FORMAT": "yaml"})
    assert bad.exit_code == 2 and "FERTILITY_FORMAT" in bad.stderr


def test_by_script_sums_languages(tmp_path):
    corpus = tiny_corpus(tmp_path)
    (corpus / "asm_Beng.txt").write_text("নদীৰ বজাৰ।\n", encoding="utf-8")
    by_lang = rows_of(run("audit", "-t", "bytes", "-f", "json", str(corpus)))
    by_script = rows_of(run("audit", "-t", "bytes", "--by", "script", "-f", "json", str(corpus)))
    beng = by_script[("bytes", "asm_Beng,ben_Beng")]
    assert beng["script"] == "Beng"
    assert beng["n_tokens"] == by_lang[("bytes", "asm_Beng")]["n_tokens"] + by_lang[("bytes", "ben_Beng")]["n_tokens"]


def test_output_file_is_written_and_never_overwritten(tmp_path):
    corpus = str(tiny_corpus(tmp_path / "c"))
    out = tmp_path / "audit.json"
    assert run("audit", "-t", "bytes", "-f", "json", "-o", str(out), corpus).exit_code == 0
    first = out.read_text()
    assert json.loads(first)["rows"]
    again = run("audit", "-t", "chars", "-f", "json", "-o", str(out), corpus)
    assert again.exit_code == 2 and "already exists" in again.stderr
    assert out.read_text() == first
    forced = run("audit", "-t", "chars", "-f", "json", "-o", str(out), "--force", corpus)
    assert forced.exit_code == 0 and out.read_text() != first
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_an_output_named_for_another_format_is_written_as_chosen_with_a_warning(tmp_path):
    """`-o audit.json` without `-f json` wrote the text table into audit.json in silence (then
    `check --baseline audit.json` refused it); the suffix never picks the format, it warns."""
    corpus = str(tiny_corpus(tmp_path / "c"))
    out = tmp_path / "audit.json"
    result = run("audit", "-q", "-t", "bytes", "-o", str(out), corpus)
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith(f"fertility: warning: {out}: written as table (the default format); "
                                    "for json, pass -f json\n")
    assert out.read_text(encoding="utf-8").lstrip().startswith("fertility audit")
    for args, env in ((["-f", "json"], {}), ([], {"FERTILITY_FORMAT": "json"})):
        again = CliRunner().invoke(cli, ["audit", "-q", "-t", "bytes", "-o", str(out), "--force", *args, corpus],
                                   env={"COLUMNS": "200", "NO_COLOR": "1", **env})
        assert again.exit_code == 0 and "warning" not in again.stderr, again.stderr
        assert json.loads(out.read_text(encoding="utf-8"))["rows"]
    csv = CliRunner().invoke(cli, ["audit", "-q", "-t", "bytes", "-o", str(tmp_path / "a.csv"), corpus],
                             env={"FERTILITY_FORMAT": "markdown"})
    assert "written as markdown ($FERTILITY_FORMAT); for csv, pass -f csv" in csv.stderr


def test_a_reference_not_in_the_corpus_is_said_without_findings_too():
    """The no-reference finding said why the premiums were empty; with --no-findings nothing did."""
    langs = ("amh_Ethi, arb_Arab, ben_Beng, deu_Latn, eng_Latn, hin_Deva, jpn_Jpan, kor_Hang, rus_Cyrl, spa_Latn, "
             "swh_Latn, tam_Taml, tha_Thai, zho_Hans")
    quiet = run("audit", "-q", "-t", "bytes", "--no-findings", "--reference", "eng_latn", "-f", "csv")
    assert quiet.exit_code == 0, quiet.output
    assert quiet.stderr == (f"fertility: warning: --reference eng_latn is not in the corpus, so there are no premiums; "
                            f"choose one of {langs}\n")
    assert all(row.endswith(",,,") for row in quiet.stdout.splitlines()[1:])  # the three premium columns, empty
    diagnosed = run("audit", "-q", "-t", "bytes", "--reference", "eng_latn", "-f", "json")
    assert diagnosed.exit_code == 0 and diagnosed.stderr == ""
    assert [f["code"] for f in json.loads(diagnosed.stdout)["findings"]].count("no-reference") == 1
    fine = run("audit", "-q", "-t", "bytes", "--no-findings", "-f", "csv")
    assert fine.exit_code == 0 and fine.stderr == ""


def test_same_tokenizer_file_twice_gets_distinct_labels(tmp_path):
    corpus = str(tiny_corpus(tmp_path / "c"))
    copy = tmp_path / "copy"
    copy.mkdir()
    source = real_file("gpt2.tiktoken")
    shutil.copy(source, copy / "gpt2.tiktoken")
    result = run("audit", "-t", str(source), "-t", str(copy / "gpt2.tiktoken"), "-f", "json", corpus)
    assert result.exit_code == 0, result.output
    assert {t for t, _ in rows_of(result)} == {str(source), str(copy / "gpt2.tiktoken")}


def _bad_inputs(tmp_path):
    (tmp_path / "bad.txt").write_bytes(b"ok\n\xc3\x28 broken\n")
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "nodocs").mkdir()
    (tmp_path / "junk.bin").write_bytes(b"\x89JUNK\x00" + bytes(range(128, 192)))  # fixed bytes: random ones could open like JSON
    (tmp_path / "broken.json").write_text('{"model": {"type": "BPE", "vocab": ')
    return {
        "missing corpus": (["-t", "bytes", str(tmp_path / "nope")], "no such file"),
        "non-utf8 corpus": (["-t", "bytes", str(tmp_path / "bad.txt")], "bad.txt:2:1: not valid UTF-8"),
        "empty corpus": (["-t", "bytes", str(tmp_path / "empty.txt")], "empty corpus file"),
        "no text files": (["-t", "bytes", str(tmp_path / "nodocs")], "holds no .txt files"),
        "missing tokenizer": (["-t", str(tmp_path / "nope.json"), str(tmp_path / "bad.txt")], "no such file"),
        "unknown scheme": (["-t", "foo:bar", str(tmp_path / "bad.txt")], "unknown tokenizer scheme"),
        "unknown format": (["-t", str(tmp_path / "junk.bin")], "unknown tokenizer format"),
        "corrupt tokenizer": (["-t", str(tmp_path / "broken.json")], "broken.json"),
        "unknown encoding": (["-t", "tiktoken:nope_base"], "unknown encoding"),
        "encoding name without its scheme": (["-t", "cl100k_base"], "the spec tiktoken:cl100k_base"),
        "bad pattern": (["-t", str(real_file("gpt2.tiktoken")), "--pattern", "(unclosed"],
                        "neither a known pattern"),
    }


@pytest.mark.parametrize("case", ["missing corpus", "non-utf8 corpus", "empty corpus", "no text files",
                                  "missing tokenizer", "unknown scheme", "unknown format",
                                  "corrupt tokenizer", "unknown encoding", "encoding name without its scheme",
                                  "bad pattern"])
def test_bad_input_is_one_line_and_exit_2(tmp_path, case):
    args, message = _bad_inputs(tmp_path)[case]
    result = run("audit", *args)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("fertility: error: ")
    assert message in result.stderr


def test_usage_error_exits_2():
    result = run("audit", "--by", "planet")
    assert result.exit_code == 2 and "Invalid value" in result.stderr


def test_internal_error_exits_3_with_traceback(monkeypatch, tmp_path):
    def explode(*args, **kwargs):
        raise ZeroDivisionError("boom")
    monkeypatch.setattr(importlib.import_module("fertility.audit"), "audit", explode)
    result = run("audit", "-t", "bytes", str(tiny_corpus(tmp_path)))
    assert result.exit_code == 3
    assert "Traceback" in result.stderr and "internal error (ZeroDivisionError: boom)" in result.stderr


def test_interrupt_exits_130_not_a_threshold_failure(monkeypatch, tmp_path):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(importlib.import_module("fertility.audit"), "audit", interrupted)
    result = run("audit", "-t", "bytes", str(tiny_corpus(tmp_path)))
    assert result.exit_code == 130 and result.stderr == "fertility: error: interrupted\n"


def test_every_command_has_help_and_is_in_the_readme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for name, command in cli.commands.items():
        result = run(name, "--help")
        assert result.exit_code == 0 and command.help
        assert f"fertility {name}" in readme


def test_an_option_several_commands_share_reads_the_same_in_every_help():
    """`--reference LANG` in audit, `--reference TEXT` in compare/check/retrain/extend told a
    newcomer nothing of what to write; only --format's choices differ, by command."""
    import click

    shown: dict[str, dict[str, list[str]]] = {}
    for name, command in cli.commands.items():
        context = click.Context(command, info_name=name)
        for param in command.params:
            record = param.get_help_record(context) if isinstance(param, click.Option) else None
            if record is not None and param.opts[-1] != "--format":
                shown.setdefault(param.opts[-1], {}).setdefault(record[0], []).append(name)
    assert {option: forms for option, forms in shown.items() if len(forms) > 1} == {}
    assert set(shown["--reference"]) == {"--reference LANG"}


def test_installed_command_runs_in_a_subprocess(tmp_path):
    exe = shutil.which("fertility")
    if exe is None:
        pytest.skip("the fertility command is not installed (pip install -e .)")
    tekken = mistral_file("tekken_240911.json")
    done = subprocess.run([exe, "audit", "-t", "bytes", "-t", str(tekken), "-f", "json", "-q",
                           str(tiny_corpus(tmp_path))], check=False, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = {(r["tokenizer"], r["lang"]) for r in json.loads(done.stdout)["rows"]}
    assert ("tekken_240911", "ben_Beng") in rows
    module = subprocess.run([sys.executable, "-m", "fertility", "--version"], check=False, capture_output=True,
                            text=True)
    assert module.returncode == 0 and "fertility" in module.stdout
    failed = subprocess.run([exe, "audit", "-t", "bytes", str(tmp_path / "missing")],
                            check=False, capture_output=True, text=True)
    assert failed.returncode == 2 and failed.stderr.startswith("fertility: error: ")
    assert "Traceback" not in failed.stderr


def test_samples_are_a_parallel_corpus():
    folder = samples_dir()
    files = sorted(folder.glob("*.txt"))
    assert len(files) >= 12
    counts = {f.name: len(f.read_text(encoding="utf-8").splitlines()) for f in files}
    assert len(set(counts.values())) == 1, counts


HEAVY = ("numpy", "pandas", "tokenizers", "sentencepiece", "tiktoken", "vl_convert", "rich.console", "rich.progress")


@pytest.mark.parametrize("args", [["--help"], ["audit", "--help"], ["compare", "--help"], ["retrain", "--help"],
                                  ["check", "--help"], ["--version"]])
def test_help_imports_no_heavy_library(args):
    """`fertility --help` must start at once: the installed command in a fresh process loads none
    of numpy, pandas or a tokenizer library (they cost about half a second)."""
    probe = ("import runpy, sys\n"
             f"sys.argv = ['fertility', *{args!r}]\n"
             "try:\n    runpy.run_module('fertility', run_name='__main__')\n"
             "except SystemExit as done:\n    assert done.code in (0, None), done.code\n"
             f"print(sorted(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", probe], check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("extra", [[], ["--no-findings"], ["--jobs", "2"]])
def test_a_json_audit_never_imports_pandas(extra):
    """JSON is the result written out, not a rendered frame: pandas (0.2 s to import), rich's
    tables and importlib.metadata's parsers (the signature reads versions from folder names)
    stay out."""
    probe = ("import runpy, sys\n"
             "sys.argv = ['fertility', 'audit', '-t', 'bytes', '-q', '-f', 'json', *sys.argv[1:]]\n"
             "try:\n    runpy.run_module('fertility', run_name='__main__')\n"
             "except SystemExit as done:\n    assert done.code in (0, None), done.code\n"
             "print(sorted({'pandas', 'rich.console', 'importlib.metadata'} & set(sys.modules)), file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", probe, *extra], check=False, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["rows"] and done.stderr.strip().splitlines()[-1] == "[]"


def test_public_api_names_resolve_to_the_objects_not_their_modules():
    import fertility
    from fertility.audit import audit
    from fertility.compare import compare_live
    from fertility.train.retrain import retrain

    assert fertility.audit is audit and fertility.compare is compare_live and fertility.retrain is retrain
    for name in fertility.__all__:
        assert getattr(fertility, name) is not None
