"""fertility compare (issue 5): two tokenizers side by side, live and from saved audits.

Every expected number is computed apart from the code under test: token counts from tiktoken
itself (`encode_ordinary` line by line, as the corpus reader cuts documents), characters with
`len()`, or from separate `fertility.audit` runs of one tokenizer each.
"""

from __future__ import annotations

import base64
import json
import math
import shutil
from functools import cache
from pathlib import Path

import numpy as np
import pytest
import tiktoken
from click.testing import CliRunner
from real_files import real_file, shared
from reference import raw_cl100k, tiktoken_token_spans
from tiktoken_ext.openai_public import r50k_pat_str

import fertility
from fertility.cli import cli
from fertility.compare import compare_live
from fertility.io.samples import samples_dir
from fertility.metrics.bootstrap import bootstrap_ratio, bootstrap_ratio_stratified, bootstrap_ratios_by_group

CL100K = "tiktoken:cl100k_base"


def run(*args, env=None):
    runner = CliRunner()
    return runner.invoke(cli, [str(a) for a in args],
                         env={"COLUMNS": "200", "NO_COLOR": "1", **(env or {})})


def one_line_error(result) -> str:
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("fertility: error: "), result.stderr
    return result.stderr


# --- raw references: tiktoken called directly --------------------------------------------

@cache
def raw_gpt2() -> tiktoken.Encoding:
    """GPT-2 (r50k) from the real ranks file, read by hand, with tiktoken's own r50k pattern."""
    ranks = {}
    for line in real_file("gpt2.tiktoken").read_bytes().splitlines():
        if line.strip():
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return tiktoken.Encoding(name="raw-r50k", pat_str=r50k_pat_str, mergeable_ranks=ranks, special_tokens={})




def lines_of(path: Path) -> list[str]:
    """Documents of a file in line mode: non-empty lines, LF (or CRLF) ended."""
    return [line.removesuffix("\r") for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


def reference_counts(folder: Path, lang: str) -> dict[str, int]:
    lines = lines_of(next(folder.rglob(f"{lang}.txt")))
    return {"n_docs": len(lines), "n_chars": sum(len(line) for line in lines),
            "tokens_a": sum(len(raw_gpt2().encode_ordinary(line)) for line in lines),
            "tokens_b": sum(len(raw_cl100k().encode_ordinary(line)) for line in lines),
            "per_doc_a": [len(raw_gpt2().encode_ordinary(line)) for line in lines],
            "per_doc_b": [len(raw_cl100k().encode_ordinary(line)) for line in lines]}


def row_of(frame, lang: str) -> dict:
    rows = frame[frame["lang"] == lang].to_dict(orient="records")
    assert len(rows) == 1, lang
    return rows[0]


# --- fixtures --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def gpt2() -> str:
    return str(real_file("gpt2.tiktoken"))


@pytest.fixture(scope="module")
def flores(tmp_path_factory) -> Path:
    """FLORES-200 devtest, three languages only, in its own split layout."""
    source = shared("flores200", "devtest")
    root = tmp_path_factory.mktemp("flores")
    (root / "devtest").mkdir()
    for lang in ("ben_Beng", "eng_Latn", "zho_Hans"):
        (root / "devtest" / f"{lang}.txt").symlink_to(source / f"{lang}.txt")
    return root


@pytest.fixture(scope="module")
def flores_comparison(gpt2, flores):
    raw_cl100k()  # skip early if the reference is missing
    return compare_live(gpt2, CL100K, [flores])


@pytest.fixture(scope="module")
def flores_refs(flores):
    return {lang: reference_counts(flores, lang) for lang in ("ben_Beng", "eng_Latn", "zho_Hans")}


@pytest.fixture(scope="module")
def separate_audits(gpt2, flores):
    """One audit per tokenizer (with findings), apart from the comparison."""
    return [fertility.audit([spec], [flores]) for spec in (gpt2, CL100K)]


@pytest.fixture(scope="module")
def small_comparison(gpt2, small):
    raw_cl100k()
    return compare_live(gpt2, CL100K, [small])


@pytest.fixture(scope="module")
def small_reference(small):
    return {lang: reference_counts(small, lang) for lang in ("ben_Beng", "eng_Latn", "zho_Hans")}


@pytest.fixture(scope="module")
def saved(tmp_path_factory, gpt2, small):
    """Audit JSON files written by the CLI: GPT-2 and cl100k on the small corpus, and misfits."""
    folder = tmp_path_factory.mktemp("saved")
    other = tmp_path_factory.mktemp("other")
    for lang in ("ben_Beng", "eng_Latn"):
        shutil.copy(samples_dir() / f"{lang}.txt", other / f"{lang}.txt")
    made = {
        "gpt2": ("-t", gpt2, small),
        "cl100k": ("-t", CL100K, small),
        "cl100k_per_file": ("-t", CL100K, "--per-file", small),
        "cl100k_other_corpus": ("-t", CL100K, other),
        "two_tokenizers": ("-t", "bytes", "-t", "chars", small),
    }
    paths = {}
    for name, args in made.items():
        paths[name] = folder / f"{name}.json"
        result = run("audit", "-q", "-f", "json", "-o", paths[name], *args)
        assert result.exit_code == 0, result.output
    return paths


# --- 1. acceptance: GPT-2 against cl100k on FLORES devtest -----------------------------------

def test_bengali_chars_per_token_match_two_separate_audits(flores_comparison, separate_audits):
    row = row_of(flores_comparison.frame, "ben_Beng")
    for alone, side in zip(separate_audits, "ab"):
        assert len(alone.tokenizers) == 1
        counts = alone.counts[(alone.tokenizers[0], "ben_Beng")]
        assert row[f"n_tokens_{side}"] == counts.n_tokens
        assert row[f"chars_per_token_{side}"] == counts.n_chars / counts.n_tokens
    assert (flores_comparison.a, flores_comparison.b) == ("r50k_base", "cl100k_base")


def test_bengali_numbers_match_tiktoken_itself(flores_comparison, flores_refs):
    ref = flores_refs["ben_Beng"]
    row = row_of(flores_comparison.frame, "ben_Beng")
    assert row["n_docs"] == ref["n_docs"] == 1012
    assert row["n_chars"] == ref["n_chars"]
    assert row["chars_per_token_a"] == ref["n_chars"] / ref["tokens_a"]
    assert row["chars_per_token_b"] == ref["n_chars"] / ref["tokens_b"]
    # B/A of chars/token is tokens(A) / tokens(B): GPT-2 needs far more tokens for Bengali
    assert row["chars_per_token_ratio"] == ref["tokens_a"] / ref["tokens_b"]
    assert row["chars_per_token_ratio"] == pytest.approx(row["chars_per_token_b"] / row["chars_per_token_a"])
    assert row["chars_per_token_ratio"] > 1.5
    eng = flores_refs["eng_Latn"]
    assert row["premium_a"] == ref["tokens_a"] / eng["tokens_a"]
    assert row["premium_b"] == ref["tokens_b"] / eng["tokens_b"]


def test_bengali_interval_is_narrow_and_contains_the_ratio(flores_comparison, flores_refs):
    row = row_of(flores_comparison.frame, "ben_Beng")
    low, ratio, high = row["ratio_ci_low"], row["chars_per_token_ratio"], row["ratio_ci_high"]
    assert low < ratio < high
    assert (high - low) / ratio < 0.02  # 1012 documents: a tight interval, not a degenerate one
    # our own percentile bootstrap over tiktoken's per-line counts lands on the same interval
    ref = flores_refs["ben_Beng"]
    a, b = np.array(ref["per_doc_a"]), np.array(ref["per_doc_b"])
    rng = np.random.default_rng(12345)
    ratios = []
    for _ in range(2000):
        pick = rng.integers(0, len(a), len(a))
        ratios.append(a[pick].sum() / b[pick].sum())
    own_low, own_high = np.quantile(ratios, [0.025, 0.975])
    width = high - low
    assert abs(own_low - low) < 0.25 * width and abs(own_high - high) < 0.25 * width


def test_every_language_and_all_row_of_the_flores_comparison(flores_comparison, flores_refs):
    frame = flores_comparison.frame
    assert list(frame["lang"]) == ["ben_Beng", "eng_Latn", "zho_Hans", "ALL"]
    refs = flores_refs
    for lang, ref in refs.items():
        row = row_of(frame, lang)
        assert (row["n_tokens_a"], row["n_tokens_b"]) == (ref["tokens_a"], ref["tokens_b"])
        assert row["ratio_ci_low"] <= row["chars_per_token_ratio"] <= row["ratio_ci_high"]
    total = row_of(frame, "ALL")
    assert total["n_tokens_a"] == sum(r["tokens_a"] for r in refs.values())
    assert total["chars_per_token_ratio"] == total["n_tokens_a"] / sum(r["tokens_b"] for r in refs.values())


def test_cli_compare_json_reports_the_same_numbers(flores_comparison, flores_refs, gpt2, flores):
    result = run("compare", gpt2, CL100K, flores, "-f", "json", "-q")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    ben = {r["lang"]: r for r in payload["rows"]}["ben_Beng"]
    ref = flores_refs["ben_Beng"]
    assert ben["chars_per_token_a"] == ref["n_chars"] / ref["tokens_a"]
    assert ben["chars_per_token_b"] == ref["n_chars"] / ref["tokens_b"]
    assert ben["chars_per_token_ratio"] == ref["tokens_a"] / ref["tokens_b"]
    library = row_of(flores_comparison.frame, "ben_Beng")
    assert (ben["ratio_ci_low"], ben["ratio_ci_high"]) == (library["ratio_ci_low"], library["ratio_ci_high"])
    assert (payload["a"], payload["b"]) == ("r50k_base", "cl100k_base")


# --- 2. bootstrap_ratio on hand-made input ------------------------------------------------

def test_bootstrap_identical_tokens_give_exactly_one():
    tokens = np.array([3, 5, 7, 11, 2, 40, 1])
    assert bootstrap_ratio(tokens, tokens.copy()) == (1.0, 1.0)


def test_bootstrap_b_with_half_the_tokens_gives_exactly_two():
    b = np.array([1, 2, 3, 4, 10, 25])
    assert bootstrap_ratio(2 * b, b) == (2.0, 2.0)


def test_bootstrap_same_seed_same_interval():
    a = np.array([12, 30, 7, 19, 44, 3, 25, 16, 9, 31, 22, 14])
    b = np.array([10, 21, 7, 12, 40, 3, 20, 11, 9, 18, 20, 10])
    first = bootstrap_ratio(a, b, seed=7)
    assert first == bootstrap_ratio(a, b, seed=7)
    assert first != bootstrap_ratio(a, b, seed=8)
    low, high = first
    assert low < a.sum() / b.sum() < high
    # a wider level gives a wider interval from the same resamples
    wide_low, wide_high = bootstrap_ratio(a, b, seed=7, level=0.99)
    assert wide_low <= low and high <= wide_high


def test_bootstrap_of_nothing_is_nan():
    low, high = bootstrap_ratio(np.array([], dtype=np.int64), np.array([], dtype=np.int64))
    assert math.isnan(low) and math.isnan(high)


def _reference_stratified(groups, *, rounds=1000, seed=0, level=0.95):
    """The intervals as first written: one generator, languages one after the other, rounds
    summed into float64 in place."""
    rng = np.random.default_rng(seed)
    sum_a, sum_b = np.zeros(rounds), np.zeros(rounds)
    for a, b in ((np.asarray(a), np.asarray(b)) for a, b in groups if len(a)):
        n = len(a)
        chunk = max(1, 2_000_000 // n)
        for first in range(0, rounds, chunk):
            size = min(chunk, rounds - first)
            picks = rng.integers(0, n, size=(size, n))
            sum_a[first:first + size] += a[picks].sum(axis=1)
            sum_b[first:first + size] += b[picks].sum(axis=1)
    if not any(len(a) for a, _ in groups):
        return math.nan, math.nan
    low, high = np.nanquantile(sum_a / sum_b, [(1 - level) / 2, (1 + level) / 2])
    return float(low), float(high)


@pytest.mark.parametrize("threads", [1, 2, 5])
def test_bootstrap_by_group_gives_the_intervals_of_each_call(threads):
    """compare's intervals, drawn once for the pooled row and the first language and on
    threads for the rest, equal the separate calls and the original pooled loop."""
    rng = np.random.default_rng(11)
    groups = [(np.zeros(0, np.int64), np.zeros(0, np.int64))]  # an empty language first: it is skipped
    for n in (1, 7, 250, 40_000, 3):
        a = rng.integers(0, 90, n)
        groups.append((a, a + rng.integers(-1, 6, n).clip(-a)))
    each, pooled = bootstrap_ratios_by_group(groups, threads=threads)
    for (a, b), interval in zip(groups, each):
        expected = _reference_stratified([(a, b)])
        assert interval == bootstrap_ratio(a, b) or all(map(math.isnan, interval + expected))
        if len(a):
            assert interval == expected
    assert pooled == bootstrap_ratio_stratified(groups) == _reference_stratified(groups)
    nothing, none_pooled = bootstrap_ratios_by_group(groups[:1], threads=threads)  # only an empty language
    assert all(map(math.isnan, nothing[0] + none_pooled))


# --- 3. saved audits ------------------------------------------------------------------

COMPARED = ("n_docs", "n_chars", "n_tokens_a", "n_tokens_b", "chars_per_token_a", "chars_per_token_b",
            "bytes_per_token_a", "bytes_per_token_b", "chars_per_token_diff", "chars_per_token_ratio",
            "premium_a", "premium_b")


def test_saved_audits_compare_like_the_live_comparison(saved, small_comparison, small_reference):
    result = run("compare", saved["gpt2"], saved["cl100k"], "-f", "json")
    assert result.exit_code == 0, result.output
    rows = {r["lang"]: r for r in json.loads(result.stdout)["rows"]}
    assert list(rows) == ["ben_Beng", "eng_Latn", "zho_Hans", "ALL"]
    for lang, row in rows.items():
        live = row_of(small_comparison.frame, lang)
        for key in COMPARED:
            if isinstance(live[key], float) and math.isnan(live[key]):
                assert row[key] is None, (lang, key)
            else:
                assert row[key] == live[key], (lang, key)
        assert row["ratio_ci_low"] is None and row["ratio_ci_high"] is None
    ref = small_reference["ben_Beng"]
    assert rows["ben_Beng"]["chars_per_token_ratio"] == ref["tokens_a"] / ref["tokens_b"]


def test_saved_audits_table_says_intervals_are_not_available(saved):
    result = run("compare", saved["gpt2"], saved["cl100k"])
    assert result.exit_code == 0, result.output
    ben = next(line for line in result.stdout.splitlines() if "ben_Beng" in line)
    assert "n/a" in ben
    assert "no per-document data" in result.stdout


@pytest.mark.parametrize("other, differing, same", [
    ("cl100k_per_file", ["doc_mode", "corpus"], []),
    ("cl100k_other_corpus", ["corpus"], ["doc_mode"]),
])
def test_saved_audits_with_other_counting_settings_are_refused(saved, other, differing, same):
    message = one_line_error(run("compare", saved["gpt2"], saved[other]))
    assert "refusing to compare" in message
    for key in differing:
        assert f"{key}:" in message
    for key in same:
        assert f"{key}:" not in message


def test_one_saved_audit_and_one_spec_is_refused(saved, gpt2):
    assert "not one of each" in one_line_error(run("compare", saved["cl100k"], gpt2))
    assert "not one of each" in one_line_error(run("compare", gpt2, saved["cl100k"]))


def test_saved_audit_holding_two_tokenizers_is_refused(saved):
    message = one_line_error(run("compare", saved["two_tokenizers"], saved["cl100k"]))
    assert "two_tokenizers.json: holds 2 tokenizers" in message


def test_saved_audits_with_a_corpus_are_refused(saved, small):
    assert "give no CORPUS" in one_line_error(run("compare", saved["gpt2"], saved["cl100k"], small))


def test_saved_audits_by_script_are_refused_or_complete(tmp_path, gpt2):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for lang in ("ben_Beng", "eng_Latn", "spa_Latn"):  # two Latin languages share one script row
        shutil.copy(samples_dir() / f"{lang}.txt", corpus / f"{lang}.txt")
    for name, spec in (("a", gpt2), ("b", CL100K)):
        made = run("audit", "-q", "-t", spec, "--by", "script", "-f", "json", "-o", tmp_path / f"{name}.json", corpus)
        assert made.exit_code == 0, made.output
    result = run("compare", tmp_path / "a.json", tmp_path / "b.json", "-f", "json")
    if result.exit_code == 2:
        return
    rows = {r["lang"]: r for r in json.loads(result.stdout)["rows"]}
    # today: only ben_Beng and an ALL row of 36 documents instead of 108
    assert rows["ALL"]["n_docs"] == 3 * len(lines_of(corpus / "ben_Beng.txt")), sorted(rows)


# --- 4. changed words --------------------------------------------------------------------

def word_tokens(encoding: tiktoken.Encoding, line: str) -> list[tuple[str, int]]:
    """Each whitespace word of the line and how many tokens overlap its bytes."""
    spans = tiktoken_token_spans(encoding, line)
    data = line.encode("utf-8")
    out, at = [], 0
    for word in line.split():
        raw = word.encode("utf-8")
        start = data.index(raw, at)
        end = start + len(raw)
        out.append((word, sum(1 for s, e in spans if s < end and e > start)))
        at = end
    return out


@pytest.fixture(scope="module")
def word_means(small):
    """(lang, word) -> [occurrences, mean tokens A, mean tokens B], by tiktoken itself."""
    means = {}
    for lang in ("ben_Beng", "eng_Latn", "zho_Hans"):
        totals = {}
        for line in lines_of(small / f"{lang}.txt"):
            for (word, ta), (_, tb) in zip(word_tokens(raw_gpt2(), line), word_tokens(raw_cl100k(), line)):
                entry = totals.setdefault(word, [0, 0, 0])
                entry[0] += 1
                entry[1] += ta
                entry[2] += tb
        means[lang] = {w: (n, ta / n, tb / n) for w, (n, ta, tb) in totals.items()}
    return means


def test_changed_words_really_changed(small_comparison, word_means):
    words = small_comparison.changed_words
    assert {w["lang"] for w in words} == {"ben_Beng", "eng_Latn"}  # none for zho_Hans (no spaces)
    for entry in words:
        n, mean_a, mean_b = word_means[entry["lang"]][entry["word"]]
        assert entry["count"] == n
        assert entry["tokens_a"] == pytest.approx(mean_a) and entry["tokens_b"] == pytest.approx(mean_b)
        assert mean_a != mean_b


def test_changed_words_are_the_most_changed(small_comparison, word_means):
    for lang in ("ben_Beng", "eng_Latn"):
        shown = [abs(w["tokens_b"] - w["tokens_a"]) for w in small_comparison.changed_words if w["lang"] == lang]
        every = sorted((abs(b - a) for _, a, b in word_means[lang].values() if a != b), reverse=True)
        assert shown == pytest.approx(every[:len(shown)])
        assert len(shown) == min(3, len(every))


def test_changed_words_come_from_the_findings_sample_on_a_large_corpus(tmp_path, gpt2):
    """Past each language's first SAMPLE_BYTES the words are not tallied (the tally would grow
    with the corpus); the signatures say so, and the counts still cover every line."""
    from fertility.engine.chunks import SAMPLE_BYTES

    lines = lines_of(samples_dir() / "eng_Latn.txt")
    body, size, i = [], 0, 0
    while size <= SAMPLE_BYTES + 50_000:
        line = f"{lines[i % len(lines)]} item{i}"
        body.append(line)
        size += len(line.encode()) + 1
        i += 1
    odd = "Pneumonoultramicroscopicsilicovolcanoconiosis-" * 6  # the most changed word, were it counted
    corpus = tmp_path / "eng_Latn.txt"
    corpus.write_text("\n".join([*body, odd]) + "\n", encoding="utf-8")
    comparison = compare_live(gpt2, CL100K, [corpus])
    words = {w["word"] for w in comparison.changed_words}
    assert words and odd not in words
    for signature in (comparison.signature_a, comparison.signature_b):
        assert f"start in the first {SAMPLE_BYTES} bytes of each language" in signature.extra["changed_words"]
    row = comparison.frame.set_index("lang").loc["eng_Latn"]
    assert row["n_tokens_b"] == sum(len(raw_cl100k().encode_ordinary(line)) for line in [*body, odd])
    whole = corpus.with_name("small") / "eng_Latn.txt"  # all of it in the sample: no note, the word shows
    whole.parent.mkdir()
    whole.write_text("\n".join([*body[:50], odd]) + "\n", encoding="utf-8")
    small_one = compare_live(gpt2, CL100K, [whole])
    assert odd in {w["word"] for w in small_one.changed_words}
    assert "changed_words" not in small_one.signature_a.extra


# --- 5. findings that differ ------------------------------------------------------------

def test_findings_diff_lists_differing_severities(flores_comparison, separate_audits):
    a, b = ({(f.code, f.lang): f.severity for f in alone.findings} for alone in separate_audits)
    expected = {key: (a.get(key), b.get(key)) for key in set(a) | set(b) if a.get(key) != b.get(key)}
    got = {(f["code"], f["lang"]): (f["a"], f["b"]) for f in flores_comparison.findings_diff}
    assert got == expected
    assert got  # GPT-2's Chinese premium is an error, cl100k's a warning
    assert got[("premium", "zho_Hans")] == ("error", "warning")


def test_a_tokenizer_against_a_copy_of_its_file_changes_nothing(tmp_path, gpt2, small):
    copy = tmp_path / "copy" / "gpt2.tiktoken"
    copy.parent.mkdir()
    shutil.copy(gpt2, copy)
    comparison = compare_live(gpt2, str(copy), [small])
    assert comparison.findings_diff == []
    assert comparison.changed_words == []
    for row in comparison.frame.to_dict(orient="records"):
        assert row["chars_per_token_ratio"] == 1.0
        assert row["chars_per_token_diff"] == 0.0
        assert (row["ratio_ci_low"], row["ratio_ci_high"]) == (1.0, 1.0)


# --- 6. output formats ----------------------------------------------------------------

def test_json_keys(gpt2, small):
    result = run("compare", gpt2, CL100K, small, "-f", "json", "-q")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert list(payload) == ["schema_version", "fertility_version", "a", "b", "signature_a", "signature_b", "rows",
                             "changed_words", "findings_diff", "parallel"]
    assert payload["parallel"] == payload["signature_a"]["parallel"]  # the samples prove themselves aligned
    assert list(payload["signature_a"]["tokenizers"]) == ["r50k_base"]
    assert list(payload["signature_b"]["tokenizers"]) == ["cl100k_base"]
    assert set(payload["changed_words"][0]) == {"lang", "word", "count", "tokens_a", "tokens_b"}


def test_csv_header(gpt2, small):
    result = run("compare", gpt2, CL100K, small, "-f", "csv", "-q")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split(",") == [
        "lang", "script", "n_docs", "n_chars", "n_tokens_a", "n_tokens_b",
        "chars_per_token_a", "chars_per_token_b", "bytes_per_token_a", "bytes_per_token_b",
        "graphemes_per_token_a", "graphemes_per_token_b", "tokens_per_word_a", "tokens_per_word_b",
        "chars_per_token_diff", "chars_per_token_ratio", "ratio_ci_low", "ratio_ci_high",
        "premium_a", "premium_b"]
    assert len(lines) == 1 + 3 + 1  # three languages and ALL


def test_markdown_row_for_bengali(gpt2, small, small_reference, small_comparison):
    result = run("compare", gpt2, CL100K, small, "-f", "markdown", "-q")
    assert result.exit_code == 0, result.output
    ben, eng = small_reference["ben_Beng"], small_reference["eng_Latn"]
    cpt_a, cpt_b = ben["n_chars"] / ben["tokens_a"], ben["n_chars"] / ben["tokens_b"]
    live = row_of(small_comparison.frame, "ben_Beng")  # the interval: same seed, same numbers
    expected = (f"| ben_Beng | {cpt_a:.2f} | {cpt_b:.2f} | {cpt_b - cpt_a:+.2f} | "
                f"{ben['tokens_a'] / ben['tokens_b']:.3f} | "
                f"{live['ratio_ci_low']:.3f}–{live['ratio_ci_high']:.3f} | "
                f"{ben['tokens_a'] / eng['tokens_a']:.2f} | {ben['tokens_b'] / eng['tokens_b']:.2f} |")
    assert expected in result.stdout.splitlines()
    assert result.stdout.startswith("A = `r50k_base`, B = `cl100k_base`")


def test_table_output(gpt2, small):
    result = run("compare", gpt2, CL100K, small, "-q")
    assert result.exit_code == 0, result.output
    assert "B/A" in result.stdout and "95% CI" in result.stdout
    assert "ben_Beng" in result.stdout and "Most changed words" in result.stdout
    assert result.stderr == ""


# --- 7. one aggregation: compare's rows are audit's rows (issue 8, 8b) ----------------------

@pytest.mark.parametrize("live", [True, False], ids=["live", "saved"])
def test_compare_columns_are_the_audit_rows_all_included(live, gpt2, small, saved, small_comparison):
    """For every language and ALL, compare's A and B columns equal what `fertility audit`
    reports for each tokenizer alone, for every ratio (ALL tokens/word too: the micro-average
    over languages written with spaces, not NaN)."""
    comparison = small_comparison if live else fertility.compare_saved(saved["gpt2"], saved["cl100k"])
    for spec, side in ((gpt2, "a"), (CL100K, "b")):
        made = run("audit", "-q", "-t", spec, "-f", "json", "--no-findings", small)
        assert made.exit_code == 0, made.output
        audited = {r["lang"]: r for r in json.loads(made.stdout)["rows"]}
        assert set(audited) == set(comparison.frame["lang"])
        for lang, row in audited.items():
            compared = row_of(comparison.frame, lang)
            assert compared[f"n_tokens_{side}"] == row["n_tokens"], (lang, side)
            for name in ("chars_per_token", "bytes_per_token", "graphemes_per_token", "tokens_per_word"):
                value = compared[f"{name}_{side}"]
                if row[name] is None:
                    assert math.isnan(value), (lang, side, name)
                else:
                    assert value == row[name], (lang, side, name)
    total = row_of(comparison.frame, "ALL")
    assert not math.isnan(total["tokens_per_word_a"]) and not math.isnan(total["tokens_per_word_b"])


# --- 8. the ALL interval resamples within each language (issue 8, 8b) ------------------------

def stratified_by_hand(per_lang: list[tuple[list[int], list[int]]], *, rounds: int = 1000, seed: int = 0):
    """Percentile interval of sum(tokens A) / sum(tokens B): every round draws each language's
    documents with replacement from that language only (languages in order, then rounds)."""
    rng = np.random.default_rng(seed)
    sums = [[0, 0] for _ in range(rounds)]
    for a, b in per_lang:
        for r in range(rounds):
            pick = rng.integers(0, len(a), len(a))
            sums[r][0] += sum(a[i] for i in pick)
            sums[r][1] += sum(b[i] for i in pick)
    low, high = np.quantile([sa / sb for sa, sb in sums], [0.025, 0.975])
    return float(low), float(high)


def test_all_interval_is_the_stratified_bootstrap(small_comparison, small_reference):
    per_lang = [(small_reference[lang]["per_doc_a"], small_reference[lang]["per_doc_b"])
                for lang in sorted(small_reference)]
    total = row_of(small_comparison.frame, "ALL")
    low, high = stratified_by_hand(per_lang)
    assert total["ratio_ci_low"] == pytest.approx(low, rel=1e-12)
    assert total["ratio_ci_high"] == pytest.approx(high, rel=1e-12)
    # the per-language intervals are unchanged: one language resampled alone
    for lang in small_reference:
        row = row_of(small_comparison.frame, lang)
        expected = bootstrap_ratio(np.array(small_reference[lang]["per_doc_a"]),
                                   np.array(small_reference[lang]["per_doc_b"]))
        assert (row["ratio_ci_low"], row["ratio_ci_high"]) == expected


def test_all_interval_is_narrower_than_pooling_documents_across_languages(flores_comparison, flores_refs):
    """FLORES devtest: languages differ far more from each other than documents within one, so
    resampling across languages (which changes the language mix) inflates the interval."""
    total = row_of(flores_comparison.frame, "ALL")
    pooled_low, pooled_high = bootstrap_ratio(np.concatenate([r["per_doc_a"] for r in flores_refs.values()]),
                                              np.concatenate([r["per_doc_b"] for r in flores_refs.values()]))
    width, pooled = total["ratio_ci_high"] - total["ratio_ci_low"], pooled_high - pooled_low
    assert total["ratio_ci_low"] < total["chars_per_token_ratio"] < total["ratio_ci_high"]
    assert width < pooled / 1.5, (width, pooled)


# --- at a Python prompt and in Jupyter ------------------------------------------------------

def test_at_a_python_prompt_a_comparison_is_one_line(small_comparison, small_reference, saved):
    """Not the dataclass's repr, which spelled out both signatures, the frame and every changed
    word (13 KB for the bundled samples): who against whom, how much text, the ALL ratio."""
    refs = small_reference.values()
    n_docs, n_chars = sum(r["n_docs"] for r in refs), sum(r["n_chars"] for r in refs)
    tokens_a, tokens_b = sum(r["tokens_a"] for r in refs), sum(r["tokens_b"] for r in refs)
    whole = row_of(small_comparison.frame, "ALL")  # the interval: a bootstrap, checked elsewhere
    n_differ = len(small_comparison.findings_diff)
    assert repr(small_comparison) == str(small_comparison) == (
        f"<Comparison r50k_base vs cl100k_base on 3 languages, {n_docs} documents; chars/token (ALL) "
        f"{n_chars / tokens_a:.3g} vs {n_chars / tokens_b:.3g}, B/A {tokens_a / tokens_b:.3g} "
        f"(95% {whole['ratio_ci_low']:.3g} to {whole['ratio_ci_high']:.3g}); "
        f"{n_differ} finding{'s differ' if n_differ != 1 else ' differs'}; .frame for the numbers>")
    from_files = fertility.compare_saved(saved["gpt2"], saved["cl100k"])
    assert repr(from_files).startswith("<Comparison r50k_base vs cl100k_base on 3 languages")
    assert "95%" not in repr(from_files) and "\n" not in repr(from_files)  # saved audits have no intervals


def test_in_jupyter_a_comparison_shows_its_line_and_frame(small_comparison):
    page = small_comparison._repr_html_()
    assert page.startswith("<p>&lt;Comparison r50k_base vs cl100k_base on 3 languages")
    assert page.count("<tr") == 1 + 3 + 1  # header, three languages, ALL
    assert "chars_per_token_ratio" in page and "ben_Beng" in page
