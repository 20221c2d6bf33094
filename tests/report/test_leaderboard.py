"""`fertility leaderboard` and `fertility report` over many saved audits: five real tokenizers on
the bundled parallel samples, every number checked against a recomputation from the raw rows of
the audit JSON files; audits of another corpus refused in one line; the pages render offline."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from real_files import real_file

from fertility.cli import cli
from fertility.cli.leaderboard import FORMATS
from fertility.report.leaderboard import LEADERBOARD_FORMATS
from fertility.report.leaderboard_formats import RENDERERS, latex_escape

TOKENIZERS = {  # file name -> spec: five real tokenizers of three backends and a baseline
    "cl100k.json": lambda: "tiktoken:cl100k_base",
    "gpt2.json": lambda: str(real_file("gpt2.tiktoken")),
    "minilm.json": lambda: str(real_file("minilm/tokenizer.json")),
    "llama3.json": lambda: str(real_file("llama3/tokenizer.json")),
    "bytes.json": lambda: "bytes",
}
REFERENCE = "eng_Latn"


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], env={"COLUMNS": "120", "NO_COLOR": "1"})


@pytest.fixture(scope="module")
def audits(tmp_path_factory) -> list[Path]:
    folder = tmp_path_factory.mktemp("audits")
    paths = []
    for name, spec in TOKENIZERS.items():
        result = run("audit", "-q", "--no-findings", "-t", spec(), "-f", "json", "-o", folder / name)
        assert result.exit_code == 0, result.output
        paths.append(folder / name)
    return paths


def recomputed(paths: list[Path]) -> dict[str, dict]:
    """From the raw JSON rows alone: chars/token per language and ALL, premiums against the
    reference (tokens over tokens: the samples are parallel) and the Gini over them (mean
    absolute difference over twice the mean)."""
    out = {}
    for path in paths:
        data = json.loads(path.read_text(encoding="utf-8"))
        rows = {row["lang"]: row for row in data["rows"]}
        (name,) = {row["tokenizer"] for row in data["rows"]}
        langs = [lang for lang in rows if lang != "ALL"]
        chars = {lang: rows[lang]["n_chars"] / rows[lang]["n_tokens"] for lang in langs}
        chars["ALL"] = sum(rows[lang]["n_chars"] for lang in langs) / sum(rows[lang]["n_tokens"] for lang in langs)
        premium = {lang: rows[lang]["n_tokens"] / rows[REFERENCE]["n_tokens"] for lang in langs}
        values = list(premium.values())
        mean = sum(values) / len(values)
        gini = sum(abs(a - b) for a in values for b in values) / (2 * len(values) ** 2 * mean)
        unknown = sum(rows[lang]["n_unknown_tokens"] for lang in langs) / sum(rows[lang]["n_tokens"] for lang in langs)
        out[name] = {"chars": chars, "premium": premium, "gini": gini, "unknown": unknown}
    return out


def test_the_cli_offers_every_renderer():
    assert FORMATS == LEADERBOARD_FORMATS == tuple(RENDERERS)


def test_csv_numbers_equal_a_recomputation_from_the_audit_files(audits):
    result = run("leaderboard", *audits, "-f", "csv")
    assert result.exit_code == 0, result.output
    expected = recomputed(audits)
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert len(rows) == len(expected) * 15  # 14 languages and ALL per tokenizer
    ranking = sorted(expected, key=lambda name: -expected[name]["chars"]["ALL"])
    for row in rows:
        want = expected[row["tokenizer"]]
        assert int(row["rank"]) == ranking.index(row["tokenizer"]) + 1
        assert float(row["chars_per_token"]) == pytest.approx(want["chars"][row["lang"]], rel=1e-12)
        assert float(row["gini"]) == pytest.approx(want["gini"], rel=1e-9)
        if row["lang"] == "ALL":
            assert row["premium"] == ""  # a premium is a language's
            assert float(row["unknown_share"]) == pytest.approx(want["unknown"], rel=1e-12)
        else:
            assert float(row["premium"]) == pytest.approx(want["premium"][row["lang"]], rel=1e-12)
    assert float(next(r for r in rows if r["tokenizer"] == "bytes" and r["lang"] == "ALL")["unknown_share"]) == 0


def test_latex_is_balanced_booktabs_with_escaped_names_and_the_json_numbers(audits):
    result = run("leaderboard", *audits, "-f", "latex")
    assert result.exit_code == 0, result.output
    text = result.stdout
    expected = recomputed(audits)
    assert text.count(r"\begin{tabular}") == text.count(r"\end{tabular}") == 2  # chars/token, premium
    for part in (r"\toprule", r"\midrule", r"\bottomrule"):
        assert text.count(part) == 2
    assert not re.search(r"(?<!\\)_", text)  # every underscore escaped (eng\_Latn, cl100k\_base)
    assert text.count("{") == text.count("}")
    for table in text.split(r"\begin{tabular}")[1:]:
        spec = re.match(r"\{([lr]+)\}", table).group(1)
        body = table.split(r"\midrule")[1].split(r"\bottomrule")[0].strip().splitlines()
        header = table.split(r"\toprule")[1].split(r"\midrule")[0].strip()
        assert len(body) == len(expected)
        for line in [header, *body]:
            assert line.endswith(r"\\") and line.count("&") == len(spec) - 1
    chars_table = text.split(r"\begin{tabular}")[1]
    header = [h.strip() for h in chars_table.split(r"\toprule")[1].split(r"\midrule")[0].strip()
              .removesuffix(r"\\").split(" & ")]
    for line in chars_table.split(r"\midrule")[1].split(r"\bottomrule")[0].strip().splitlines():
        cells = [c.strip() for c in line.removesuffix(r"\\").split(" & ")]
        name = cells[1].replace(r"\_", "_")
        assert cells[2] == f"{expected[name]['chars']['ALL']:.3f}"
        for column, cell in zip(header[4:], cells[4:]):
            assert cell == f"{expected[name]['chars'][column.replace(chr(92) + '_', '_')]:.3f}"


def test_latex_escapes_every_special_character():
    assert latex_escape(r"a_b&c%d$e#f{g}h~i^j\k") == \
        r"a\_b\&c\%d\$e\#f\{g\}h\textasciitilde{}i\textasciicircum{}j\textbackslash{}k"


def test_markdown_and_table_rank_the_same_way(audits):
    expected = recomputed(audits)
    ranking = sorted(expected, key=lambda name: -expected[name]["chars"]["ALL"])
    markdown = run("leaderboard", *audits, "-f", "markdown").stdout
    names = [line.split(" | ")[1] for line in markdown.splitlines() if re.match(r"^\| \d+ \|", line)]
    assert names == ranking * 2  # the chars/token table, then the premium table
    assert markdown.count("|---|") == 2 and all(f"`{name}`: `tok:{name}" in markdown for name in ranking)
    table = run("leaderboard", *audits).stdout
    assert [line.split()[1] for line in table.splitlines() if re.match(r"^\d+\s", line)] == ranking * 2
    assert "premium against eng_Latn" in table


def test_audits_of_another_corpus_are_refused_in_one_line(audits, small, tmp_path):
    other = tmp_path / "other.json"
    assert run("audit", "-q", "--no-findings", "-t", "bytes", small, "-f", "json", "-o", other).exit_code == 0
    result = run("leaderboard", audits[0], other)
    assert result.exit_code == 2 and result.stdout == ""
    assert re.fullmatch(rf"fertility: error: {re.escape(str(other))} and {re.escape(str(audits[0]))} were measured "
                        r"on different corpora or settings \(corpus sha256 [0-9a-f]{12} vs [0-9a-f]{12}\); a "
                        r"leaderboard ranks tokenizers on the same text\n", result.stderr)


@pytest.mark.parametrize("case", ["twice", "not json", "missing"])
def test_bad_inputs_are_one_line_each(audits, tmp_path, case):
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2", encoding="utf-8")
    args = {"twice": [audits[0], audits[0]], "not json": [audits[0], bad], "missing": [tmp_path / "nope.json"]}[case]
    result = run("leaderboard", *args)
    assert result.exit_code == 2 and result.stdout == "" and result.stderr.count("\n") == 1
    assert result.stderr.startswith("fertility: error: ")


def test_the_same_tokenizer_in_two_files_is_told_apart_by_file(audits, tmp_path):
    copy = tmp_path / "again.json"
    shutil.copy(audits[0], copy)
    rows = list(csv.DictReader(io.StringIO(run("leaderboard", audits[0], copy, "-f", "csv").stdout)))
    assert {row["tokenizer"] for row in rows} == {"cl100k_base (cl100k.json)", "cl100k_base (again.json)"}


def test_an_existing_output_is_not_overwritten(audits, tmp_path):
    target = tmp_path / "board.md"
    target.write_text("mine", encoding="utf-8")
    result = run("leaderboard", *audits, "-f", "markdown", "-o", target)
    assert result.exit_code == 2 and target.read_text(encoding="utf-8") == "mine"
    assert run("leaderboard", *audits, "-f", "markdown", "-o", target, "--force").exit_code == 0
    assert target.read_text(encoding="utf-8").startswith("**chars/token**")


def test_the_installed_command_prints_the_leaderboard(audits):
    exe = shutil.which("fertility")
    if exe is None:
        pytest.skip("the fertility command is not installed (pip install -e .)")
    done = subprocess.run([exe, "leaderboard", *map(str, audits), "-f", "csv"], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout == run("leaderboard", *audits, "-f", "csv").stdout


def test_report_of_five_audits_renders_offline_in_chromium(audits, tmp_path):
    from test_report import chromium, rendered, visible_text

    chromium()
    page = tmp_path / "report.html"
    result = run("report", *audits, "-o", page)
    assert result.exit_code == 0, result.output
    dom, console = rendered(page, tmp_path)
    assert console == []
    assert 'data-charts="done"' in dom
    text = visible_text(dom)
    for name in recomputed(audits):
        assert name in text
    chart = dom.split('id="chart-chars-per-token"')[1].split('class="caption"')[0]
    assert chart.count('aria-roledescription="bar"') == 5 * 14  # a bar per tokenizer and language


def test_leaderboard_page_renders_offline_in_chromium(audits, tmp_path):
    from test_report import chromium, rendered

    chromium()
    page = tmp_path / "board.html"
    assert run("leaderboard", *audits, "-f", "html", "-o", page).exit_code == 0
    dom, console = rendered(page, tmp_path)
    assert console == []
    assert dom.count("<table>") == 2 and dom.count("<tr") == 2 * (1 + len(audits))
    assert "hsl(" in dom  # shaded as a heatmap
    assert 'style="display: none;"' not in dom  # no filter given: everything shown


def test_leaderboard_filters_by_tokenizer_and_script_in_chromium(audits, tmp_path):
    """Filters given in the page's address, as a linked view: rows of other tokenizers and the
    columns of other scripts' languages are hidden, in both tables."""
    from test_report import chromium

    page = tmp_path / "board.html"
    assert run("leaderboard", *audits, "-f", "html", "-o", page).exit_code == 0
    profile = tmp_path / "profile"
    done = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
                           "--proxy-server=127.0.0.1:9", "--virtual-time-budget=10000", "--dump-dom",
                           page.as_uri() + "#tokenizer=M&script=Beng"],
                          capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-500:]
    rows = re.findall(r"<tr( style=\"display: none;\")?><td class=\"n\">\d+</td><td>([^<]+)</td>", done.stdout)
    shown = {name for hidden, name in rows if not hidden}
    assert shown == {"minilm", "llama3"} and len(rows) == 10  # names holding an "m", in any case
    cells = [(re.search(r'data-script="(\w+)"', attrs).group(1), "display: none" in attrs)
             for attrs in re.findall(r"<t[hd]( [^>]*data-script[^>]*)>", done.stdout)]
    assert len(cells) == 2 * 14 * (1 + len(audits))  # each language's header and cells, in both tables
    assert all(hidden == (script != "Beng") for script, hidden in cells)
