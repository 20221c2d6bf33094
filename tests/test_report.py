"""The HTML report (issue 11): chart data equal the audit's numbers, the page renders offline in
headless Chromium, figures shape Bengali, and each new metric matches a hand computation."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from real_files import mistral_file, real_file, shared
from test_bad_inputs import Case, snapshot

from fertility.backends import load_tokenizer
from fertility.backends._tiktoken import TiktokenTokenizer
from fertility.backends.patterns import GPT2
from fertility.backends.vocab import allocation, script_of
from fertility.cli import cli
from fertility.compare import compare_saved
from fertility.metrics.balance import budget, gini
from fertility.metrics.byte_premium import gini_of_lorenz, lorenz
from fertility.report import charts
from fertility.report import html as report_html
from fertility.report.contents import Report, audit_for_report, charts_of, retrain_report, saved_report
from fertility.results.model import ALL, AuditResult

pytest.importorskip("vl_convert", reason="vl-convert-python (the report extra) is not installed")

CL100K = "tiktoken:cl100k_base"
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
            assert entry["gini"] == pytest.approx(finding.measured["gini"])
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


def test_scripts_at_once_equal_one_at_a_time_on_a_real_vocabulary_and_flores_words():
    from fertility.backends.vocab import entries, scripts_of

    texts = ["", "abc", "abcও", "x\u0301", "\u0301", "123 ."]
    for _, data, _ in entries(load_tokenizer(str(mistral_file("tekken_240911.json")))) or []:
        try:
            texts.append(data.decode("utf-8"))
        except (UnicodeDecodeError, AttributeError):
            continue
    for path in sorted(shared("flores200", "dev").glob("*.txt"))[:40]:
        texts += path.read_text(encoding="utf-8").split()[:300]
    assert len(texts) > 100_000
    assert scripts_of(texts) == [script_of(t) for t in texts]


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


def test_premium_chart_values_intervals_and_byte_premium(live, specs):
    spec = specs["premium"]
    for v in values(spec):
        counts = live.result.counts_for(v["tokenizer"])
        assert v["premium"] == pytest.approx(counts[v["lang"]].n_tokens / counts["eng_Latn"].n_tokens)
        assert v["byte_premium"] == pytest.approx(counts[v["lang"]].n_bytes / counts["eng_Latn"].n_bytes)
        if v["lang"] != "eng_Latn":
            assert v["ci_low"] <= v["premium"] <= v["ci_high"]
    fields = [layer["encoding"]["x"].get("field") for layer in spec["layer"]]
    assert fields == [None, "ci_low", "premium", "byte_premium"]


def test_lorenz_chart_is_the_json_balance(live, specs):
    balance = live.result.to_dict()["balance"]
    for name, entry in balance.items():
        label = f"{name} (Gini {entry['gini']:.3f})"
        drawn = [[v["languages"], v["cost"]] for v in values(specs["lorenz"]) if v["tokenizer"] == label]
        assert drawn == entry["lorenz"]


def test_ceiling_chart_is_the_evidence(live, specs):
    evidence = live.result.evidence
    for v in values(specs["ceiling"]):
        pre = evidence.pretokens[(v["tokenizer"], v["lang"])]
        assert v["chars_per_pretoken"] == pytest.approx(pre.n_chars / pre.n_pretokens)
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
    assert ratios == {r["lang"]: r["chars_per_token_ratio"] for r in frame.to_dict(orient="records")}
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
        {r["lang"]: r["chars_per_token_ratio"] for r in expected.to_dict(orient="records")}
    assert built.result.tokenizers == ("bytes", "cl100k_base")


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
    assert charts.font_of("Tamil தமிழ் (tam_Taml)") == "Noto Sans Tamil"


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
    for name in ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)  # type: ignore[return-value]
    pytest.skip("no headless Chromium (Debian: apt-get install chromium-headless-shell; CI installs it)")


def browse(page: Path, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    profile = tmp_path / f"profile-{len(list(tmp_path.iterdir()))}"
    return subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                           "--disable-component-update", "--no-first-run", f"--user-data-dir={profile}",
                           "--proxy-server=127.0.0.1:9", "--virtual-time-budget=30000", *extra, page.as_uri()],
                          check=False, capture_output=True, text=True, timeout=180)


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

def test_figures_write_svg_and_png_and_bengali_is_set_in_its_font(live, tmp_path):
    written = report_html.figures(live, tmp_path / "figs")
    assert sorted(p.name for p in written) == sorted(report_html.figure_files(live))
    svg = (tmp_path / "figs" / "chars-per-token.svg").read_text(encoding="utf-8")
    assert re.search(r'<text[^>]*font-family="Noto Sans Bengali"[^>]*>Bengali বাংলা \(ben_Beng\)</text>', svg)
    assert (tmp_path / "figs" / "chars-per-token.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _ink(text: str):
    import numpy as np
    import vl_convert
    from PIL import Image

    spec = {"data": {"values": [{"t": text}]}, "width": 300, "height": 120, "config": {"view": {"stroke": None}},
            "mark": {"type": "text", "fontSize": 80, "align": "left", "baseline": "middle", "font": charts.font_of(text)},
            "encoding": {"text": {"field": "t"}, "x": {"value": 10}, "y": {"value": 60}}}
    return np.asarray(Image.open(io.BytesIO(vl_convert.vegalite_to_png(spec))).convert("L")) < 128


def test_figure_renderer_shapes_bengali():
    """Shaped Bengali draws the vowel sign ি before its consonant (so ক moves right in কি) but
    া after it (ক stays put in কা), and the conjunct ক্ষ narrower than ক, virama and ষ apart."""
    ka, ki, kaa = _ink("ক"), _ink("কি"), _ink("কা")
    assert (ka & kaa).sum() / ka.sum() > 0.95
    assert (ka & ki).sum() / ka.sum() < 0.8

    def width(ink) -> int:
        columns = ink.any(axis=0).nonzero()[0]
        return int(columns.max() - columns.min())
    assert width(_ink("ক্ষ")) < width(_ink("ক")) + width(_ink("ষ"))


# --- bad inputs (the harness of test_bad_inputs, rows of this feature) ----------------------------

def _saved(tmp: Path) -> None:
    pair_corpus(tmp / "corpus")
    for name, spec in (("a", "bytes"), ("b", "chars")):
        assert run("audit", "-q", "-t", spec, "-f", "json", "-o", tmp / f"{name}.json", tmp / "corpus").exit_code == 0
    (tmp / "by_script.json").write_text(run("audit", "-q", "-t", "bytes", "--by", "script", "-f", "json",
                                            tmp / "corpus").stdout, encoding="utf-8")


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
    Case("report-three-audits", ("report", "a.json", "b.json", "a.json", "-o", "r.html"), 2,
         "give one or two audit JSON files", setup=_saved),
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


def test_saved_audit_premium_chart_says_it_has_no_intervals(tmp_path):
    corpus = pair_corpus(tmp_path / "c")
    assert run("audit", "-q", "-t", CL100K, "-f", "json", "-o", tmp_path / "a.json", "--parallel", corpus).exit_code == 0
    spec = charts_of(saved_report([tmp_path / "a.json"]))["premium"]
    assert all(v["ci_low"] is None for v in values(spec))
    assert "no intervals" in spec["title"]["subtitle"][0]
