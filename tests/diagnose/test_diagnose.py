"""Findings from real tokenizers on real text (issue 3): each code triggered, and not triggered.

Acceptance on FLORES-200 devtest (GPT-2 and cl100k_base): Bengali is named with its premium,
and the GPT-2 pre-tokenizer is named as the cause, with figures checked against tiktoken and
the `regex` module directly. The arithmetic of premiums and budgets is in test_balance.py.
"""

import base64
import json
import unicodedata
from pathlib import Path

import pytest
import regex
import tiktoken
from click.testing import CliRunner
from real_files import mistral_file, real_file, shared

from fertility import UsageError, load_tokenizer
from fertility import audit as run_audit
from fertility.cli import cli
from fertility.diagnose.normalization import NormalizationCounts
from fertility.diagnose.pretokens import PretokenCounts
from fertility.diagnose.rules import Thresholds
from fertility.engine.count import flagged_chars
from fertility.io.samples import samples_dir
from fertility.metrics.balance import PARALLEL
from fertility.text.units import profile

# Split patterns copied from tiktoken_ext/openai_public.py (r50k_pat_str and cl100k_base).
R50K_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
CL100K_PATTERN = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++"""
                  r"""[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""")

TINY = {  # parallel: line i says the same thing in each language; no nukta letters, no joiners
    "eng_Latn": ["We eat rice daily.", "The river market opens at dawn.", "Boats arrive with fish."],
    "deu_Latn": ["Wir essen täglich Reis.", "Der Flussmarkt öffnet im Morgengrauen.",
                 "Boote kommen mit Fisch an."],
    "ben_Beng": ["আমরা রোজ ভাত খাই।", "নদীর বাজার ভোরে খোলে।", "নৌকা মাছ আনে।"],
}
HAND = {"eng_Latn": ["We eat rice daily"], "ben_Beng": ["আমি ভাত খাই"]}


STATED = ("tiny", "pair", "hand", "no_eng")  # hand-made translations, line by line: stated parallel


def audit(tokenizers, corpus, **options):
    """fertility.audit; the hand-made corpora of three lines are too short to prove themselves
    parallel, but they are translations line by line, so they are stated to be (--parallel).
    Real corpora (FLORES) prove it; `uneven` and `amharic` are not parallel."""
    options.setdefault("parallel", any(Path(c).name in STATED for c in corpus))
    return run_audit(tokenizers, corpus, **options)


def write_corpus(folder: Path, texts: dict[str, list[str]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for lang, lines in texts.items():
        (folder / f"{lang}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def pick(langs, source=TINY):
    return {lang: source[lang] for lang in langs}


def found(result, code, lang=None, tokenizer=None):
    return [f for f in result.findings if f.code == code and f.lang == lang
            and tokenizer in (None, f.tokenizer)]


def one(result, code, lang=None, tokenizer=None):
    matches = found(result, code, lang, tokenizer)
    assert len(matches) == 1, [(f.code, f.lang) for f in result.findings]
    return matches[0]


def tiktoken_encoding(ranks_file: str, pattern: str) -> tiktoken.Encoding:
    """tiktoken's own encoder, built straight from the ranks file (no fertility code)."""
    ranks = {base64.b64decode(token): int(rank) for token, rank in
             (line.split() for line in Path(ranks_file).read_bytes().splitlines() if line.strip())}
    return tiktoken.Encoding(name="independent", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})


def test_copied_patterns_are_tiktokens():
    openai_public = pytest.importorskip("tiktoken_ext.openai_public")
    assert R50K_PATTERN == openai_public.r50k_pat_str
    assert CL100K_PATTERN in Path(openai_public.__file__).read_text(encoding="utf-8")


SPECS = {
    "gpt2": lambda: str(real_file("gpt2.tiktoken")),  # r50k_base
    "cl100k": lambda: "tiktoken:cl100k_base",
    "minilm": lambda: str(real_file("minilm/tokenizer.json")),  # BERT WordPiece with [UNK]
    "spm": lambda: str(mistral_file("mistral_instruct_tokenizer_240323.model.v3")),  # byte fallback
}


class Tokenizers(dict):
    """Loaded on first use, so a missing file skips only the tests that need it."""

    def __missing__(self, key):
        self[key] = load_tokenizer(SPECS[key]())
        return self[key]


@pytest.fixture(scope="module")
def tok():
    return Tokenizers()


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpora")
    samples = samples_dir()
    first3 = {lang: (samples / f"{lang}.txt").read_text(encoding="utf-8").splitlines()[:3]
              for lang in ("amh_Ethi", "eng_Latn")}
    return {
        "tiny": write_corpus(root / "tiny", TINY),
        "pair": write_corpus(root / "pair", pick(["eng_Latn", "ben_Beng"])),
        "hand": write_corpus(root / "hand", HAND),
        "uneven": write_corpus(root / "uneven", {"eng_Latn": TINY["eng_Latn"], "ben_Beng": TINY["ben_Beng"][:1]}),
        "no_eng": write_corpus(root / "no_eng", pick(["deu_Latn", "ben_Beng"])),
        "amharic": write_corpus(root / "amharic", first3),
    }


# --- acceptance on FLORES-200 devtest ---------------------------------------------------------

@pytest.fixture(scope="module")
def flores(tmp_path_factory, tok):
    devtest = shared("flores200", "devtest")
    root = tmp_path_factory.mktemp("flores_devtest")
    lines = {}
    for lang in ("ben_Beng", "eng_Latn"):
        (root / f"{lang}.txt").symlink_to(devtest / f"{lang}.txt")
        text = (devtest / f"{lang}.txt").read_text(encoding="utf-8")
        lines[lang] = [line for line in text.split("\n") if line.strip()]  # one document per line
    return audit([tok["gpt2"], tok["cl100k"]], [root]), lines


@pytest.mark.parametrize("name, key, pattern", [("r50k_base", "gpt2", R50K_PATTERN),
                                                ("cl100k_base", "cl100k", CL100K_PATTERN)],
                         ids=["r50k_base", "cl100k_base"])
def test_flores_names_bengali_with_its_premium(flores, tok, name, key, pattern):
    result, lines = flores
    encoding = tiktoken_encoding(tok[key].source, pattern)
    tokens = {lang: sum(len(ids) for ids in encoding.encode_ordinary_batch(lines[lang])) for lang in lines}
    assert result.counts[(name, "ben_Beng")].n_tokens == tokens["ben_Beng"]
    premium = one(result, "premium", "ben_Beng", name)
    assert premium.severity == "error"
    assert premium.measured["method"] == PARALLEL and premium.measured["reference"] == "eng_Latn"
    assert premium.measured["premium"] == pytest.approx(tokens["ben_Beng"] / tokens["eng_Latn"])
    assert f"{tokens['ben_Beng'] / tokens['eng_Latn']:.2f}x" in premium.message
    assert not [f for f in result.findings if f.code == "premium" and f.lang == "eng_Latn"]


def test_flores_names_the_gpt2_pre_tokenizer_as_the_cause(flores):
    result, lines = flores
    pattern = regex.compile(R50K_PATTERN)
    chars = sum(len(line) for line in lines["ben_Beng"])
    pretokens = sum(len(pattern.findall(line)) for line in lines["ben_Beng"])
    ceiling = one(result, "pretokenizer-ceiling", "ben_Beng", "r50k_base")
    assert ceiling.severity == "error"
    measured = ceiling.measured
    assert measured["chars_per_pretoken"] == pytest.approx(chars / pretokens)
    assert measured["chars_per_pretoken"] < 1.6 and measured["reference_chars_per_pretoken"] > 3.5
    assert "r50k_base" in measured["pre_tokenizer"] and f"{chars / pretokens:.2f}" in ceiling.message
    # cl100k's pattern lets one mark lead a piece ([^\r\n\p{L}\p{N}]?+\p{L}++): still capped
    assert [f.tokenizer for f in found(result, "pretokenizer-ceiling", "ben_Beng")] == ["r50k_base", "cl100k_base"]


def test_flores_marks_cut_counts_and_examples(flores):
    result, lines = flores
    pattern = regex.compile(R50K_PATTERN)
    # every character belongs to a match; a match starting on a combining mark cut it from its base
    mark_cuts = sum(1 for line in lines["ben_Beng"] for m in pattern.finditer(line)
                    if m.start() > 0 and regex.match(r"\p{M}", line[m.start()]))
    finding = one(result, "marks-cut", "ben_Beng", "r50k_base")
    assert finding.severity == "error" and finding.measured["n_mark_cuts"] == mark_cuts
    whole = [e for e in finding.examples if "…" not in e]  # long words are shortened with …
    assert whole
    for example in whole:
        word, _, pieces = example.partition(" -> ")
        assert "".join(pieces.split(" | ")) == word
        assert any(regex.match(r"\p{M}", piece) for piece in pieces.split(" | "))
    assert not found(result, "marks-cut", "eng_Latn")


# --- each finding: triggered, and not ----------------------------------------------------------

def test_premium_finding_and_its_severities(tok, corpora):
    result = audit([tok["gpt2"]], [corpora["pair"]])
    ben, eng = result.counts[("r50k_base", "ben_Beng")], result.counts[("r50k_base", "eng_Latn")]
    finding = one(result, "premium", "ben_Beng")
    assert finding.measured["premium"] == ben.n_tokens / eng.n_tokens > 3.0
    assert finding.severity == "error" and finding.tokenizer == "r50k_base"
    assert finding.measured["chars_per_token"] == ben.n_chars / ben.n_tokens
    warning = audit([tok["gpt2"]], [corpora["pair"]], thresholds=Thresholds(premium_error=100))
    assert one(warning, "premium", "ben_Beng").severity == "warning"
    assert not found(audit([tok["gpt2"]], [corpora["pair"]], thresholds=Thresholds(premium_warning=100)),
                     "premium", "ben_Beng")


def test_no_premium_at_parity(corpora):
    result = audit(["chars"], [corpora["pair"]])  # Bengali writes this content in fewer characters
    assert result.counts[("chars", "ben_Beng")].n_tokens < result.counts[("chars", "eng_Latn")].n_tokens
    assert not [f for f in result.findings if f.code == "premium"]


def test_gini_over_three_languages_not_two(tok, corpora):
    result = audit([tok["cl100k"]], [corpora["tiny"]])
    tokens = [result.counts[("cl100k_base", lang)].n_tokens for lang in TINY]
    premiums = [t / tokens[0] for t in tokens]  # eng_Latn first
    n, mean = len(premiums), sum(premiums) / len(premiums)
    expected = sum(abs(a - b) for a in premiums for b in premiums) / (2 * n * n * mean)
    finding = one(result, "gini")
    assert finding.measured["gini"] == pytest.approx(expected) and finding.measured["languages"] == 3
    assert not found(audit([tok["cl100k"]], [corpora["pair"]]), "gini")


def test_no_premium_over_text_that_is_not_parallel(tok, corpora):
    result = audit([tok["gpt2"]], [corpora["uneven"]])
    decided = result.parallel
    assert decided.parallel is False and decided.established is None and "differ in line count" in decided.why
    assert not found(result, "premium", "ben_Beng") and not found(result, "gini")
    assert result.to_dict()["signature"]["parallel"] == decided.to_dict()  # said once, in the signature
    # three aligned lines are too few to prove alignment: without --parallel, no premium either
    unstated = run_audit([tok["gpt2"]], [corpora["pair"]])
    assert "too few" in unstated.parallel.why and not found(unstated, "premium", "ben_Beng")
    assert audit([tok["gpt2"]], [corpora["pair"]]).parallel.established == "stated"


def test_no_reference_and_another_reference(tok, corpora):
    result = audit([tok["gpt2"]], [corpora["no_eng"]])
    assert one(result, "no-reference").measured == {"reference": "eng_Latn"}
    assert not found(result, "premium", "ben_Beng")
    other = audit([tok["gpt2"]], [corpora["no_eng"]], reference="deu_Latn")
    assert not found(other, "no-reference")
    assert one(other, "premium", "ben_Beng").measured["reference"] == "deu_Latn"
    assert not found(audit([tok["gpt2"]], [corpora["pair"]]), "no-reference")


def test_inverted_balance_for_a_given_mix(tok, corpora):
    result = audit([tok["gpt2"]], [corpora["pair"]], mix={"ben_Beng": 0.6, "eng_Latn": 0.4})
    ben, eng = result.counts[("r50k_base", "ben_Beng")], result.counts[("r50k_base", "eng_Latn")]
    cost = {"ben": 0.6 * ben.n_tokens / ben.n_chars, "eng": 0.4 * eng.n_tokens / eng.n_chars}
    text = {"ben": 0.6 * ben.n_chars / ben.n_tokens, "eng": 0.4 * eng.n_chars / eng.n_tokens}
    finding = one(result, "inverted-balance", "ben_Beng")
    assert finding.measured["content_share"] == 0.6 and finding.measured["mix"] == "given"
    assert finding.measured["token_share"] == pytest.approx(cost["ben"] / sum(cost.values()))
    assert finding.measured["text_share_by_tokens"] == pytest.approx(text["ben"] / sum(text.values()))
    assert "60.0% of the text" in finding.message
    assert not found(result, "inverted-balance", "eng_Latn")  # the cheap side is not repeated


def test_no_inverted_balance_on_parallel_text_or_at_equal_cost(tok, corpora):
    assert not [f for f in audit([tok["gpt2"]], [corpora["pair"]]).findings if f.code == "inverted-balance"]
    even = audit(["chars"], [corpora["pair"]], mix={"ben_Beng": 0.6, "eng_Latn": 0.4})
    assert not [f for f in even.findings if f.code == "inverted-balance"]


def test_inverted_balance_of_the_corpus_as_given(tok, corpora):
    result = audit([tok["gpt2"]], [corpora["uneven"]])
    ben, eng = result.counts[("r50k_base", "ben_Beng")], result.counts[("r50k_base", "eng_Latn")]
    finding = one(result, "inverted-balance", "ben_Beng")
    assert finding.measured["mix"] == "corpus"
    assert finding.measured["content_share"] == pytest.approx(ben.n_chars / (ben.n_chars + eng.n_chars))
    assert finding.measured["token_share"] == pytest.approx(ben.n_tokens / (ben.n_tokens + eng.n_tokens))


def test_unknown_tokens_with_top_offenders(tok, corpora):
    result = audit([tok["minilm"]], [corpora["amharic"]])
    amh = result.counts[("minilm", "amh_Ethi")]
    finding = one(result, "unknown-tokens", "amh_Ethi")
    assert finding.measured["n_unknown_tokens"] == amh.n_unknown_tokens > 0
    assert finding.measured["unknown_share"] == amh.n_unknown_tokens / amh.n_tokens > 0.01
    assert finding.severity == "error" and "not efficiency" in finding.message  # the UNK guard
    top = finding.measured["top"]
    assert top and all(regex.match(r"\p{Script=Ethiopic}", char) for char, _ in top)
    assert unicodedata.name(top[0][0]) in finding.message
    assert not found(result, "unknown-tokens", "eng_Latn")
    mild = audit([tok["minilm"]], [corpora["amharic"]], thresholds=Thresholds(unknown_inflation_share=1.0))
    assert one(mild, "unknown-tokens", "amh_Ethi").severity == "warning"


def test_unknown_token_offenders_include_emoji(tok):
    text = "rain 🌧 and sun ☀ and 🙂"
    encoded = tok["minilm"].encode([text])[0]
    assert "🙂" in flagged_chars(text, profile(text), encoded)


def test_byte_fallback_for_bengali_not_english(tok, corpora):
    result = audit([tok["cl100k"]], [corpora["pair"]])
    ben = result.counts[("cl100k_base", "ben_Beng")]
    finding = one(result, "byte-fallback", "ben_Beng")
    assert finding.measured["n_byte_tokens"] == ben.n_byte_tokens
    assert finding.measured["byte_token_share"] == ben.n_byte_tokens / ben.n_tokens > 0.10
    # the danda । is Script=Common, shared with Devanagari: match the script extensions
    assert all(regex.match(r"\p{Script_Extensions=Bengali}", char) for char, _ in finding.measured["top"])
    assert not found(result, "byte-fallback", "eng_Latn")


def test_pretokenizer_ceiling_and_marks_cut_by_hand(tok, corpora):
    result = audit([tok["gpt2"]], [corpora["hand"]])
    # "আমি ভাত খাই" under GPT-2: আম | ি | ␠ভ | া | ত | ␠খ | া | ই -> 11 chars, 8 pre-tokens,
    # 7 inner boundaries, 3 of them inside a cluster (before ি, া, া), all 3 before a mark
    assert result.evidence.pretokens[("r50k_base", "ben_Beng")] == PretokenCounts(11, 8, 7, 3, 3)
    # "We eat rice daily": We | ␠eat | ␠rice | ␠daily -> 17 chars, 4 pre-tokens
    assert result.evidence.pretokens[("r50k_base", "eng_Latn")] == PretokenCounts(17, 4, 3, 0, 0)
    ceiling = one(result, "pretokenizer-ceiling", "ben_Beng")
    assert ceiling.measured["chars_per_pretoken"] == 11 / 8
    assert ceiling.measured["reference_chars_per_pretoken"] == 17 / 4
    marks = one(result, "marks-cut", "ben_Beng")
    assert marks.severity == "error" and marks.measured["n_mark_cuts"] == 3
    assert marks.measured["mark_cut_share"] == 3 / 7
    assert set(marks.examples) == {"আমি -> আম | ি", "ভাত -> ভ | া | ত", "খাই -> খ | া | ই"}


def test_marks_cut_is_a_warning_when_the_ceiling_is_not_low(tok, corpora):
    result = audit([tok["gpt2"]], [corpora["hand"]], thresholds=Thresholds(ceiling_bound=1.0))
    assert not found(result, "pretokenizer-ceiling", "ben_Beng")
    assert one(result, "marks-cut", "ben_Beng").severity == "warning"


def test_no_pretokenizer_findings_for_latin_text(tok, corpora):
    result = audit([tok["gpt2"]], [corpora["tiny"]])
    assert found(result, "pretokenizer-ceiling", "ben_Beng")
    for code in ("pretokenizer-ceiling", "marks-cut"):
        assert not found(result, code, "deu_Latn") and not found(result, code, "eng_Latn")
    assert result.evidence.pretokens[("r50k_base", "deu_Latn")].n_mark_cuts == 0


def test_sentencepiece_has_no_pretokenizer_ceiling(tok, corpora):
    result = audit([tok["spm"]], [corpora["hand"]])
    assert one(result, "no-pretokenizer").severity == "info"
    assert not [f for f in result.findings if f.code in ("pretokenizer-ceiling", "marks-cut")]
    assert not found(audit([tok["gpt2"]], [corpora["hand"]]), "no-pretokenizer")


def test_grapheme_cuts_for_bengali_not_english_nor_grapheme_units(tok, corpora):
    result = audit([tok["cl100k"]], [corpora["pair"]])
    ben = result.counts[("cl100k_base", "ben_Beng")]
    finding = one(result, "grapheme-cuts", "ben_Beng")
    assert finding.measured["n_cut_boundaries"] == ben.n_cut_boundaries
    assert finding.measured["grapheme_cut_share"] == ben.n_cut_boundaries / ben.n_boundaries > 0.05
    assert finding.examples and all(" -> " in e for e in finding.examples)
    assert not found(result, "grapheme-cuts", "eng_Latn")
    assert found(audit(["chars"], [corpora["pair"]]), "grapheme-cuts", "ben_Beng")  # ক|ি
    graphemes = audit(["graphemes"], [corpora["pair"]])
    assert graphemes.counts[("graphemes", "ben_Beng")].n_cut_boundaries == 0
    assert not [f for f in graphemes.findings if f.code == "grapheme-cuts"]


# --- normalization -------------------------------------------------------------------------------

NUKTA = "\u09aa\u09dc\u09be \u09a8\u09df"  # পড়া নয় with precomposed ড় (U+09DC) and য় (U+09DF)
JOINERS = "\u09b0\u200d\u09cd\u09af\u09be\u09ac \u0995\u09cd\u200c\u09b7"  # র‍্যাব (ZWJ), ক্‌ষ (ZWNJ)


def test_normalization_counts_by_hand(tok, tmp_path):
    corpus = write_corpus(tmp_path, {"ben_Beng": [NUKTA, JOINERS]})
    result = audit([tok["cl100k"]], [corpus])
    encoding = tiktoken_encoding(tok["cl100k"].source, CL100K_PATTERN)
    as_read = len(encoding.encode_ordinary(NUKTA)) + len(encoding.encode_ordinary(JOINERS))
    nfc = len(encoding.encode_ordinary(unicodedata.normalize("NFC", NUKTA))) + len(encoding.encode_ordinary(JOINERS))
    # 6 + 11 chars; NFC splits each of the 2 nukta letters in two; the joiners stay (NFKC too)
    assert result.evidence.normalization[("cl100k_base", "ben_Beng")] == NormalizationCounts(
        n_chars=17, n_chars_nfc=19, n_chars_nfkc=19, n_tokens=as_read, n_tokens_nfc=nfc,
        n_tokens_nfkc=nfc, n_docs_changed_nfc=1, n_decomposable=2, n_joiners=2)
    finding = one(result, "normalization", "ben_Beng")
    assert finding.measured["n_decomposable"] == 2 and finding.measured["n_chars_nfc"] == 19
    assert "chars +2" in finding.message and "no normalization" in finding.message
    quiet = audit([tok["cl100k"]], [corpus], thresholds=Thresholds(normalization_change=0.5))
    assert not found(quiet, "normalization", "ben_Beng")


def test_no_normalization_finding_for_ascii_or_nfc_text(tok, corpora):
    result = audit([tok["cl100k"]], [corpora["pair"]])
    assert not [f for f in result.findings if f.code == "normalization"]
    counts = result.evidence.normalization[("cl100k_base", "eng_Latn")]
    assert counts.n_chars == counts.n_chars_nfc == counts.n_chars_nfkc and counts.n_decomposable == 0


# --- fertility audit: findings in each format ------------------------------------------------------

def run(*args):
    return CliRunner().invoke(cli, list(args), env={"COLUMNS": "200", "NO_COLOR": "1"})


def test_json_findings_contract(corpora):
    result = run("audit", "-t", str(real_file("gpt2.tiktoken")), "-f", "json", "-q", "--parallel",
                 str(corpora["pair"]))
    assert result.exit_code == 0, result.output
    findings = json.loads(result.stdout)["findings"]
    assert {f["code"] for f in findings} >= {"premium", "pretokenizer-ceiling", "marks-cut", "grapheme-cuts"}
    for finding in findings:
        assert set(finding) == {"code", "severity", "tokenizer", "lang", "measured", "message", "fix", "examples"}
        assert finding["severity"] in ("error", "warning", "info") and finding["message"] and finding["fix"]
        assert isinstance(finding["measured"], dict) and isinstance(finding["examples"], list)
    premium = next(f for f in findings if f["code"] == "premium")
    assert premium["lang"] == "ben_Beng" and premium["measured"]["reference"] == "eng_Latn"
    severities = [f["severity"] for f in findings]
    assert severities == sorted(severities, key=["error", "warning", "info"].index)
    bare = run("audit", "-t", str(real_file("gpt2.tiktoken")), "-f", "json", "--no-findings", str(corpora["pair"]))
    assert bare.exit_code == 0 and "findings" not in json.loads(bare.stdout)


def test_markdown_and_table_have_a_findings_section(corpora):
    gpt2 = str(real_file("gpt2.tiktoken"))
    markdown = run("audit", "-t", gpt2, "-f", "markdown", str(corpora["pair"]))
    assert "\n## Findings\n" in markdown.stdout
    assert "- **error** `pretokenizer-ceiling` r50k_base ben_Beng: " in markdown.stdout
    table = run("audit", "-t", gpt2, "--parallel", str(corpora["pair"]))
    assert "Findings (" in table.stdout and "[error] premium r50k_base ben_Beng:" in table.stdout
    unstated = run("audit", "-t", gpt2, str(corpora["pair"])).stdout  # three lines prove no alignment
    assert "[error] premium" not in unstated and unstated.count("no premiums: 3 lines per language") == 1
    assert "## Findings" not in run("audit", "-t", gpt2, "-f", "markdown", "--no-findings",
                                    str(corpora["pair"])).stdout


def test_cli_mix_flags_the_inverted_balance(corpora):
    result = run("audit", "-t", str(real_file("gpt2.tiktoken")), "-f", "json",
                 "--mix", "ben_Beng=0.7,eng_Latn=0.3", str(corpora["pair"]))
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    rows = {r["lang"]: r for r in payload["rows"]}
    cost = {lang: share * rows[lang]["n_tokens"] / rows[lang]["n_chars"]
            for lang, share in (("ben_Beng", 0.7), ("eng_Latn", 0.3))}
    text = {lang: share * rows[lang]["n_chars"] / rows[lang]["n_tokens"]
            for lang, share in (("ben_Beng", 0.7), ("eng_Latn", 0.3))}
    inverted = [f for f in payload["findings"] if f["code"] == "inverted-balance"]
    assert [f["lang"] for f in inverted] == ["ben_Beng"]
    measured = inverted[0]["measured"]
    assert measured["content_share"] == pytest.approx(0.7) and measured["mix"] == "given"
    assert measured["token_share"] == pytest.approx(cost["ben_Beng"] / sum(cost.values()))
    assert measured["text_share_by_tokens"] == pytest.approx(text["ben_Beng"] / sum(text.values()))


@pytest.mark.parametrize("mix, message", [
    ("ben_Beng=abc", "--mix 'ben_Beng=abc': expected LANG=NUMBER pairs"),
    ("ben_Beng=0.7,fra_Latn=0.3", "--mix names languages not in the corpus: fra_Latn"),
    ("ben_Beng=1", "--mix 'ben_Beng=1': a mix needs two or more languages"),
])
def test_cli_bad_mix_exits_2(corpora, mix, message):
    result = run("audit", "-t", "bytes", "--mix", mix, str(corpora["pair"]))
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("fertility: error: ")
    assert message in result.stderr


@pytest.mark.parametrize("mix, message", [
    ({"ben_Beng": 1}, r"^mix=\{'ben_Beng': 1\}: a mix needs two or more languages \("),
    ({"ben_Beng": 0.5, "eng_Latn": -1}, r"shares must be positive numbers \(eng_Latn is not\)$"),
    ("ben_Beng=0.7,eng_Latn=0.3", r"^mix='ben_Beng=0.7,eng_Latn=0.3': expected a mapping of language to share"),
])
def test_library_bad_mix_is_a_usage_error_naming_the_argument(corpora, mix, message):
    """A one-language mix did nothing (no budget, no finding, no word); the library says so
    with the same typed error as the CLI, naming its own argument rather than --mix."""
    with pytest.raises(UsageError, match=message):
        run_audit("bytes", [corpora["pair"]], mix=mix)
