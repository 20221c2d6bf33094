"""fertility retrain: sampling weights, both kinds of units, saving, and the fix on real data."""

import json
import shutil
import sys
from pathlib import Path

import pytest
import regex
import tokenizers
from click.testing import CliRunner
from real_files import shared

from fertility import audit, load_tokenizer, read_corpus
from fertility.cli import cli
from fertility.engine.count import count
from fertility.errors import UsageError
from fertility.io.corpus import Document
from fertility.io.samples import samples_dir
from fertility.metrics.balance import gini
from fertility.text.units import graphemes
from fertility.train.bpe import TRAIN_PATTERNS, train_tokenizer
from fertility.train.graphemes import bpe_pieces
from fertility.train.languages import equal_weights, same_language, sample_documents, temperature_weights
from fertility.train.parity import Interval, parity_report
from fertility.train.parity_trainer import ParitySettings
from fertility.train.retrain import retrain

SAMPLES = samples_dir()


def run(*args):
    return CliRunner().invoke(cli, list(args), env={"COLUMNS": "200", "NO_COLOR": "1"})


def two_language_corpus(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for lang in ("ben_Beng", "eng_Latn"):
        shutil.copy(SAMPLES / f"{lang}.txt", folder / f"{lang}.txt")
    return folder


# --- sampling weights, by hand ------------------------------------------------------------

def test_sample_documents_repeats_by_weight():
    docs = [Document("a", f"a{i}", "f", i) for i in range(10)] + [Document("b", "b", "f", 1)]
    chosen = sample_documents(docs, {"a": 2.0, "b": 3.0}, seed=0)
    assert sum(d.lang == "a" for d in chosen) == 20 and sum(d.lang == "b" for d in chosen) == 3
    half = sample_documents(docs * 100, {"a": 0.5}, seed=1)
    assert 400 < sum(d.lang == "a" for d in half) < 600  # 1,000 documents kept with p = 0.5
    assert sample_documents(docs * 100, {"a": 0.5}, seed=1) == half  # the seed makes it repeatable


def test_equal_and_temperature_weights():
    assert equal_weights({"ben": 100, "eng": 400}) == {"ben": 4.0, "eng": 1.0}
    # shares 0.2 / 0.8; T = 2: targets sqrt(0.2) : sqrt(0.8) = 1 : 2, i.e. shares 1/3, 2/3;
    # multipliers (1/3)/0.2 = 5/3 and (2/3)/0.8 = 5/6, scaled so that eng keeps 1: 2 and 1
    weights = temperature_weights({"ben": 200, "eng": 800}, 2.0)
    assert weights["eng"] == pytest.approx(1.0) and weights["ben"] == pytest.approx(2.0)
    assert temperature_weights({"ben": 200, "eng": 800}, 1.0) == pytest.approx({"ben": 1.0, "eng": 1.0})


def test_same_language_matches_folder_and_flores_keys():
    assert same_language("ben", "ben_Beng") and same_language("ben_Beng", "ben_Beng")
    assert not same_language("ben", "eng_Latn")


def test_bpe_pieces_replays_merges_by_rank():
    ranks = {("a", "b"): 1, ("b", "c"): 0, ("a", "bc"): 2}
    assert bpe_pieces("abc", ranks) == ["abc"]
    assert bpe_pieces("abc", {("a", "b"): 0}) == ["ab", "c"]


# --- small tokenizers trained on the bundled samples ------------------------------------------

@pytest.fixture(scope="module")
def sample_docs():
    return read_corpus([SAMPLES]).documents


@pytest.fixture(scope="module", params=["bytes", "graphemes"])
def trained(request, sample_docs, tmp_path_factory):
    tokenizer = train_tokenizer(sample_docs, vocab_size=2000, units=request.param)
    path = tmp_path_factory.mktemp(request.param) / "tokenizer.json"
    tokenizer.save(str(path))
    return request.param, tokenizer, path


UNSEEN = ["Ελληνικά κείμενα 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 👩🏽‍🚀 🇧🇩", "ಕನ್ನಡ ಲಿಪಿ ಮತ್ತು ગુજરાતી", "tab\tand\r\nnewlines  ", "<|endoftext|> [CLS]"]


def test_round_trip_and_reload(trained, sample_docs):
    _units, tokenizer, path = trained
    reloaded = tokenizers.Tokenizer.from_file(str(path))
    texts = [d.text for d in sample_docs] + UNSEEN
    for text in texts:
        ids = reloaded.encode(text, add_special_tokens=False).ids
        assert ids == tokenizer.encode(text, add_special_tokens=False).ids
        assert reloaded.decode(ids) == text


def test_transformers_loads_it_when_installed(trained):
    transformers = pytest.importorskip("transformers", reason="transformers not installed")
    _, tokenizer, path = trained
    fast = transformers.PreTrainedTokenizerFast(tokenizer_file=str(path))
    text = "নদীর বাজার ভোরে খোলে। The market opens."
    assert fast.encode(text, add_special_tokens=False) == tokenizer.encode(text, add_special_tokens=False).ids


def test_grapheme_units_never_cut_a_cluster(trained, sample_docs):
    units, _, path = trained
    counts = count(load_tokenizer(str(path)), sample_docs)
    cuts = sum(c.n_cut_boundaries for c in counts.values())
    boundaries = sum(c.n_boundaries for c in counts.values())
    if units == "graphemes":
        assert cuts / boundaries < 0.005
    else:
        assert cuts > 0  # byte-level BPE does cut clusters: the test above would notice otherwise


def test_grapheme_vocabulary_holds_whole_clusters(trained):
    units, tokenizer, _ = trained
    if units != "graphemes":
        pytest.skip("byte-level vocabularies are bytes")
    text = "ক্ষমা বিশ্ববিদ্যালয়"
    for token in tokenizer.encode(text, add_special_tokens=False).tokens:
        if not token.startswith("<0x"):
            assert graphemes(token) and "".join(graphemes(token)) == token


def test_train_rejects_bad_options(sample_docs):
    with pytest.raises(UsageError, match="units"):
        train_tokenizer(sample_docs, vocab_size=1000, units="words")
    with pytest.raises(UsageError, match="too small"):
        train_tokenizer(sample_docs, vocab_size=100)
    with pytest.raises(UsageError, match="regex"):
        train_tokenizer(sample_docs, vocab_size=1000, pattern="(unclosed")
    with pytest.raises(UsageError, match="not in the training corpus"):
        train_tokenizer(sample_docs, vocab_size=1000, weights={"xxx": 2.0})


# --- the command: output folder, record, refusal, atomicity -----------------------------------

def test_retrain_command_writes_tokenizer_and_record(tmp_path):
    corpus = two_language_corpus(tmp_path / "corpus")
    out = tmp_path / "tok"
    result = run("retrain", str(corpus), "--vocab-size", "1500", "-o", str(out), "--weights",
                 "ben_Beng=2,eng_Latn=1", "--compare-with", "bytes", "-f", "json", "-q")
    assert result.exit_code == 0, result.output
    record = json.loads((out / "training.json").read_text())
    assert record["vocab_size"] == tokenizers.Tokenizer.from_file(str(out / "tokenizer.json")).get_vocab_size()
    assert record["weights_used"] == {"ben_Beng": 2.0, "eng_Latn": 1.0}
    assert record["corpus"]["sha256"] == read_corpus([corpus]).sha256
    assert record["libraries"]["tokenizers"] == tokenizers.__version__
    rows = json.loads(result.stdout)["rows"]
    assert {r["tokenizer"] for r in rows} == {"bytes", "tok"}
    assert "findings" in json.loads(result.stdout)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus", "tok"]  # no temp leftovers


def test_retrain_refuses_to_overwrite_and_force_replaces(tmp_path):
    corpus = two_language_corpus(tmp_path / "corpus")
    out = tmp_path / "tok"
    assert run("retrain", str(corpus), "--vocab-size", "1000", "-o", str(out), "-q", "-f", "csv").exit_code == 0
    first = (out / "training.json").read_bytes()
    refused = run("retrain", str(corpus), "--vocab-size", "1100", "-o", str(out), "-q")
    assert refused.exit_code == 2 and "pass --force" in refused.stderr
    assert (out / "training.json").read_bytes() == first
    forced = run("retrain", str(corpus), "--vocab-size", "1100", "-o", str(out), "--force", "-q", "-f", "csv")
    assert forced.exit_code == 0, forced.output
    assert sorted(p.name for p in out.iterdir()) == ["tokenizer.json", "training.json"]
    assert json.loads((out / "training.json").read_text())["arguments"]["vocab_size"] == 1100
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus", "tok"]
    # a user's file in the folder: refused even with --force, and never deleted
    (out / "mine.txt").write_text("user data")
    kept = run("retrain", str(corpus), "--vocab-size", "1000", "-o", str(out), "--force", "-q")
    assert kept.exit_code == 2 and "mine.txt" in kept.stderr
    assert (out / "mine.txt").read_text() == "user data"


def test_interrupted_training_leaves_nothing(tmp_path, monkeypatch):
    corpus = two_language_corpus(tmp_path / "corpus")

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    # interrupt the plain trainer where its loop calls it
    monkeypatch.setattr(sys.modules["fertility.train.reweighting"], "train_tokenizer", interrupted)
    with pytest.raises(KeyboardInterrupt):
        retrain([corpus], output=tmp_path / "tok", vocab_size=1000)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus"]


@pytest.mark.parametrize("args, message", [
    (["--weights", "ben_Beng=two"], "--weights"),
    (["--weights", "xxx=2"], "not in the training corpus"),
    (["--weights", "ben_Beng=2", "--temperature", "2"], "not both"),
    (["--units", "words"], "Invalid value"),
    (["--vocab-size", "10"], "too small"),
])
def test_retrain_bad_options_exit_2(tmp_path, args, message):
    corpus = two_language_corpus(tmp_path / "corpus")
    base = ["retrain", str(corpus), "-o", str(tmp_path / "tok"), "-q"]
    if "--vocab-size" not in args:
        base += ["--vocab-size", "1000"]
    result = run(*base, *args)
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert not (tmp_path / "tok").exists()


def test_target_parity_moves_premium_towards_one(tmp_path):
    # training text: a third of the Bengali sample against four Latin-script samples, so that
    # Bengali starts with a premium; the parallel dev set is the full Bengali/English sample
    corpus, dev = tmp_path / "corpus", two_language_corpus(tmp_path / "dev")
    corpus.mkdir()
    bengali = (SAMPLES / "ben_Beng.txt").read_text(encoding="utf-8").splitlines(keepends=True)
    (corpus / "ben_Beng.txt").write_text("".join(bengali[:12]), encoding="utf-8")
    latin = "".join((SAMPLES / f"{lang}.txt").read_text(encoding="utf-8")
                    for lang in ("eng_Latn", "deu_Latn", "spa_Latn", "swh_Latn"))
    (corpus / "eng_Latn.txt").write_text(latin, encoding="utf-8")
    result = retrain([corpus], output=tmp_path / "tok", vocab_size=1200, balance="natural",
                     target_parity=dev, reference="eng_Latn", parity_steps=3, trainer="bpe",
                     held_out=[shared("flores200", "devtest")])
    steps = result.parity_steps
    assert len(steps) >= 2
    first, last = steps[0]["premiums"]["ben_Beng"], steps[-1]["premiums"]["ben_Beng"]
    assert abs(last - 1) < abs(first - 1)
    assert steps[1]["weights"]["ben_Beng"] > steps[0]["weights"]["ben_Beng"]


# --- acceptance on the real corpora ---------------------------------------------------------

@pytest.fixture(scope="module")
def flores_devtest():
    return read_corpus([shared("flores200", "devtest")])


@pytest.fixture(scope="module")
def mono():
    return shared("mono")


def ben_eng_devtest() -> list[Path]:
    """The FLORES devtest files of the two languages of mono/: every claim below is about them
    (round trips still cover all 23 languages)."""
    return [shared("flores200", "devtest", f"{lang}.txt") for lang in ("ben_Beng", "eng_Latn")]


def chars_per_token(path: Path, corpus) -> dict[str, float]:
    counts = count(load_tokenizer(str(path)), corpus.documents)
    return {lang: c.n_chars / c.n_tokens for lang, c in counts.items()}, counts


def assert_round_trip(path: Path, corpus) -> None:
    tokenizer = tokenizers.Tokenizer.from_file(str(path))
    texts = [d.text for d in corpus.documents]
    encodings = tokenizer.encode_batch(texts, add_special_tokens=False)
    failures = [t for t, e in zip(texts, encodings) if tokenizer.decode(e.ids) != t]
    assert failures == []


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["naive", "default", "graphemes"])
def test_retrain_fixes_the_balance_at_32k(variant, mono, flores_devtest, tmp_path):
    options = {"naive": {"pattern": "gpt2"}, "default": {}, "graphemes": {"units": "graphemes"}}[variant]
    retrain([mono], output=tmp_path / variant, vocab_size=32_000, **options)
    path = tmp_path / variant / "tokenizer.json"
    ratios, counts = chars_per_token(path, read_corpus(ben_eng_devtest()))  # the two it was trained for
    premium = counts["ben_Beng"].n_tokens / counts["eng_Latn"].n_tokens
    print(f"{variant}: ben {ratios['ben_Beng']:.3f} eng {ratios['eng_Latn']:.3f} premium {premium:.3f}")
    if variant == "naive":
        assert ratios["ben_Beng"] <= 1.5 and ratios["eng_Latn"] >= 3.9
    elif variant == "default":
        assert ratios["ben_Beng"] >= 4.1 and ratios["eng_Latn"] >= 4.1
        assert premium < 1.1
    else:
        ben = counts["ben_Beng"]
        assert ben.n_cut_boundaries / ben.n_boundaries < 0.005
    assert_round_trip(path, flores_devtest)


@pytest.mark.slow
@pytest.mark.parametrize("pattern", ["gpt2", "marks"])
def test_16k_trap_and_its_explanation(pattern, mono, tmp_path):
    """Issue 3: the naive 16k BPE reproduces the trap and the findings name the pre-tokenizer."""
    retrain([mono], output=tmp_path / pattern, vocab_size=16_000, pattern=pattern, balance="natural")
    result = audit([str(tmp_path / pattern / "tokenizer.json")], ben_eng_devtest())
    counts = result.counts
    name = result.tokenizers[0]
    ben, eng = counts[(name, "ben_Beng")], counts[(name, "eng_Latn")]
    codes = {(f.code, f.lang) for f in result.findings}
    if pattern == "gpt2":
        assert 1.3 <= ben.n_chars / ben.n_tokens <= 1.5 and eng.n_chars / eng.n_tokens > 3.5
        assert ("pretokenizer-ceiling", "ben_Beng") in codes and ("marks-cut", "ben_Beng") in codes
    else:
        assert ("pretokenizer-ceiling", "ben_Beng") not in codes and ("marks-cut", "ben_Beng") not in codes


# --- the parity trainer, on slices of NTREX-128 and FLORES-200 ------------------------------

PARITY_LANGS = ("ben_Beng", "eng_Latn", "hin_Deva", "tha_Thai")


def _slices(folder: Path, source: Path, n: int, langs=PARITY_LANGS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for lang in langs:
        with (source / f"{lang}.txt").open(encoding="utf-8") as handle:
            lines = [line for _, line in zip(range(n), handle)]
        (folder / f"{lang}.txt").write_text("".join(lines), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def parallel_sets(tmp_path_factory):
    """Training text (NTREX-128), a parallel dev set (FLORES dev) and held-out text (FLORES devtest)."""
    root = tmp_path_factory.mktemp("parallel")
    return (_slices(root / "train", shared("ntrex128"), 800),
            _slices(root / "dev", shared("flores200", "dev"), 300),
            _slices(root / "devtest", shared("flores200", "devtest"), 300))


@pytest.fixture(scope="module")
def parity_vs_bpe(parallel_sets, tmp_path_factory):
    train, dev, devtest = parallel_sets
    root = tmp_path_factory.mktemp("trained")
    return {trainer: retrain([train], output=root / trainer, vocab_size=3000, target_parity=dev,
                             trainer=trainer, held_out=[devtest], parity_steps=1)
            for trainer in ("bpe", "parity")}


def _recount(path: Path, devtest: Path) -> dict[str, tuple[int, int]]:
    """(tokens, chars) per language, with the raw library."""
    tokenizer = tokenizers.Tokenizer.from_file(str(path))
    out = {}
    for file in sorted(devtest.glob("*.txt")):
        lines = file.read_text(encoding="utf-8").splitlines()
        encodings = tokenizer.encode_batch(lines, add_special_tokens=False)
        assert [tokenizer.decode(e.ids) for e in encodings] == lines  # every line round-trips
        out[file.stem] = (sum(len(e.ids) for e in encodings), sum(map(len, lines)))
    return out


def test_parity_trainer_is_fairer_than_bpe_on_held_out_text(parity_vs_bpe, parallel_sets):
    _, _, devtest = parallel_sets
    ginis = {}
    for trainer, result in parity_vs_bpe.items():
        counts = _recount(result.output / "tokenizer.json", devtest)
        premiums = [n / counts["eng_Latn"][0] for n, _ in counts.values()]
        report = result.held_out_parity
        assert report.premiums["ben_Beng"].value == pytest.approx(counts["ben_Beng"][0] / counts["eng_Latn"][0])
        assert report.gini.value == pytest.approx(gini(premiums))
        ginis[trainer] = report.gini.value
        assert result.record["arguments"]["trainer"] == trainer
    assert ginis["parity"] < ginis["bpe"] / 2


def test_parity_record_names_dev_and_held_out_with_intervals(parity_vs_bpe, parallel_sets):
    _, dev, devtest = parallel_sets
    record = json.loads((parity_vs_bpe["parity"].output / "training.json").read_text("utf-8"))
    assert record["dev"]["sha256"] == read_corpus([dev]).sha256
    assert record["held_out"]["sha256"] == read_corpus([devtest]).sha256
    assert record["dev"]["sha256"] != record["held_out"]["sha256"]
    parity = record["held_out"]["parity"]
    for interval in [parity["gini"], *parity["premiums"].values()]:
        assert interval["low"] <= interval["value"] <= interval["high"]
    assert parity["premiums"]["eng_Latn"] == {"value": 1.0, "low": 1.0, "high": 1.0}
    assert parity["gini"]["high"] > parity["gini"]["low"]


def test_parity_report_by_hand():
    # two parallel lines: ben costs twice the tokens of eng on each, so every resample agrees
    report = parity_report({"eng_Latn": [1, 3], "ben_Beng": [2, 6]}, {"eng_Latn": [4, 8], "ben_Beng": [4, 8]},
                           reference="eng_Latn", rounds=50)
    assert report.premiums["ben_Beng"] == Interval(2.0, 2.0, 2.0)
    # Gini of (1, 2): sum of |a - b| over ordered pairs = 2, over 2 * n^2 * mean = 2 * 4 * 1.5
    assert report.gini == Interval(pytest.approx(1 / 6), pytest.approx(1 / 6), pytest.approx(1 / 6))
    assert report.chars_per_token == {"ben_Beng": 1.5, "eng_Latn": 3.0}


def test_parity_without_dev_uses_byte_premiums_of_parallel_training_text(parallel_sets, tmp_path):
    train, _, devtest = parallel_sets
    result = retrain([train], output=tmp_path / "tok", vocab_size=2000, trainer="parity", units="bytes", held_out=[devtest])
    record = json.loads((tmp_path / "tok" / "training.json").read_text("utf-8"))
    assert record["arguments"]["trainer"] == "parity" and record["dev"] is None
    sizes = {f.stem: len(f.read_bytes()) - f.read_bytes().count(b"\n") for f in sorted(train.glob("*.txt"))}
    expected = {lang: n / min(sizes.values()) for lang, n in sizes.items()}
    assert result.record["parity_ratios"]["ratios"] == pytest.approx(expected)
    assert result.record["parity_ratios"]["from"] == "training corpus"


def test_parity_with_grapheme_units_never_cuts_a_cluster(parallel_sets, tmp_path):
    train, dev, devtest = parallel_sets
    result = retrain([train], output=tmp_path / "tok", vocab_size=3000, units="graphemes",
                     target_parity=dev, held_out=[devtest], parity=ParitySettings(min_atom_count=0))
    assert result.record["arguments"]["trainer"] == "parity"
    path = tmp_path / "tok" / "tokenizer.json"
    _recount(path, devtest)
    counts = count(load_tokenizer(str(path)), read_corpus([devtest]).documents)
    assert sum(c.n_cut_boundaries for c in counts.values()) / sum(c.n_boundaries for c in counts.values()) < 0.005


def _one_line_error(result, starts: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert lines[0].startswith(f"fertility: error: {starts}"), lines[0]


def test_dev_set_is_never_the_evaluation_set(parallel_sets, tmp_path):
    train, dev, _ = parallel_sets
    base = ["retrain", str(train), "--vocab-size", "1000", "-o", str(tmp_path / "tok"), "-q"]
    _one_line_error(run(*base, "--target-parity", str(dev), "--held-out", str(dev)),
                    "--target-parity and --held-out hold the same text")
    copy = tmp_path / "copy"
    shutil.copytree(dev, copy)  # another path, the same content
    _one_line_error(run(*base, "--target-parity", str(dev), "--held-out", str(copy)),
                    "--target-parity and --held-out hold the same text")
    # without --held-out the bundled samples are the evaluation set
    _one_line_error(run(*base, "--target-parity", str(SAMPLES)), "--target-parity and the default held-out set")
    assert not (tmp_path / "tok").exists()


def test_parity_without_dev_or_byte_premiums_is_refused(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    khmer = shared("ntrex128", "khm_Khmr.txt").read_text(encoding="utf-8").splitlines()[:200]
    (corpus / "khm_Khmr.txt").write_text("\n".join(khmer) + "\n", encoding="utf-8")
    shutil.copy(SAMPLES / "eng_Latn.txt", corpus / "eng_Latn.txt")  # not parallel: 200 lines vs 36
    result = run("retrain", str(corpus), "--vocab-size", "1000", "-o", str(tmp_path / "tok"), "-q",
                 "--trainer", "parity")
    _one_line_error(result, "--trainer parity needs a parallel dev set")
    assert not (tmp_path / "tok").exists()


def test_parity_dev_set_must_cover_every_training_language(parallel_sets, tmp_path):
    train, dev, devtest = parallel_sets
    partial = _slices(tmp_path / "partial", dev, 300, langs=("ben_Beng", "eng_Latn"))
    result = run("retrain", str(train), "--vocab-size", "1000", "-o", str(tmp_path / "tok"), "-q",
                 "--target-parity", str(partial), "--held-out", str(devtest))
    _one_line_error(result, "--target-parity: the dev set has no text for hin_Deva")


# --- the parity trainer's defaults: grapheme atoms, rare ones left to bytes, capped tokens ------

def _distinct_cluster_counts(train: Path) -> dict[str, int]:
    """Clusters of each pre-token (the mark-aware split) over each language's distinct lines."""
    split = regex.compile(TRAIN_PATTERNS["marks"])
    seen: dict[str, int] = {}
    for file in sorted(train.glob("*.txt")):
        for line in dict.fromkeys(file.read_text(encoding="utf-8").splitlines()):
            for cluster in (c for piece in split.findall(line) for c in graphemes(piece)):
                seen[cluster] = seen.get(cluster, 0) + 1
    return seen


def test_parity_defaults_to_grapheme_units_and_the_window_variant(parity_vs_bpe):
    parity, bpe = (parity_vs_bpe[t].record["arguments"] for t in ("parity", "bpe"))
    assert parity["units"] == "graphemes" and bpe["units"] == "bytes"
    assert parity["parity"] == ParitySettings().fragment() and parity["parity"]["variant"] == "window"


def test_rare_clusters_are_not_atoms_and_fall_back_to_bytes(parallel_sets, tmp_path):
    train, dev, devtest = parallel_sets
    counts = _distinct_cluster_counts(train)
    minimum = ParitySettings().min_atom_count
    vocab = {}
    for name, settings in (("pruned", ParitySettings()), ("all", ParitySettings(min_atom_count=0))):
        retrain([train], output=tmp_path / name, vocab_size=3000, target_parity=dev, held_out=[devtest],
                parity=settings)
        _recount(tmp_path / name / "tokenizer.json", devtest)  # every held-out line still round-trips
        vocab[name] = tokenizers.Tokenizer.from_file(str(tmp_path / name / "tokenizer.json")).get_vocab()
    kept = {c for c, n in counts.items() if n >= minimum and len(c) > 1}
    # a rare cluster can only enter the vocabulary as a step of a kept cluster's assembly
    rare = {c for c, n in counts.items() if n < minimum and len(c) > 1 and not any(k.startswith(c) for k in kept)}
    assert rare and kept <= set(vocab["pruned"]) and kept <= set(vocab["all"])
    assert not rare & set(vocab["pruned"])
    assert rare <= set(vocab["all"])


def test_max_token_clusters_caps_what_scripts_without_spaces_memorise(tmp_path):
    root = tmp_path / "sets"
    langs = ("eng_Latn", "khm_Khmr", "mya_Mymr", "tha_Thai")
    train = _slices(root / "train", shared("ntrex128"), 800, langs)
    dev = _slices(root / "dev", shared("flores200", "dev"), 300, langs)
    longest = {}
    for cap in (None, 6):
        out = tmp_path / f"cap{cap}"
        retrain([train], output=out, vocab_size=3000, target_parity=dev, held_out=[train],
                parity=ParitySettings(max_token_clusters=cap))
        vocab = tokenizers.Tokenizer.from_file(str(out / "tokenizer.json")).get_vocab()
        longest[cap] = max(len(graphemes(token)) for token in vocab)
        assert json.loads((out / "training.json").read_text("utf-8"))["arguments"]["parity"]["max_token_clusters"] == cap
    assert longest[6] <= 6 < longest[None]


def test_only_clusters_too_rare_to_be_atoms_are_cut(parallel_sets, tmp_path):
    """With the default pruning a cluster seen too rarely in training is no atom: it is spelled in
    bytes or in the pieces other clusters are built from. Every cluster that is an atom stays whole."""
    train, dev, devtest = parallel_sets
    retrain([train], output=tmp_path / "tok", vocab_size=3000, target_parity=dev, held_out=[devtest])
    tokenizer = tokenizers.Tokenizer.from_file(str(tmp_path / "tok" / "tokenizer.json"))
    vocab = tokenizer.get_vocab()
    cut = 0
    for file in sorted(devtest.glob("*.txt")):
        for line in file.read_text(encoding="utf-8").splitlines():
            starts = {start for start, _ in tokenizer.encode(line, add_special_tokens=False).offsets[1:]}
            position = 0
            for cluster in graphemes(line):
                if set(range(position + 1, position + len(cluster))) & starts:
                    cut += 1
                    assert cluster not in vocab, (file.name, cluster)
                position += len(cluster)
    assert cut  # the slices do hold rare clusters, so the check above ran


def test_words_keep_the_sentence_punctuation_of_every_script(parity_vs_bpe):
    """Chinese 。, Ethiopic ።, Myanmar ။, Khmer ។, Urdu ۔ stay with the word before them, as . and । do."""
    tokenizer = tokenizers.Tokenizer.from_file(str(parity_vs_bpe["parity"].output / "tokenizer.json"))
    checked = set()
    for lang, mark in (("zho_Hans", "。"), ("jpn_Jpan", "、"), ("amh_Ethi", "።"), ("mya_Mymr", "။"),
                       ("khm_Khmr", "។"), ("urd_Arab", "۔"), ("arb_Arab", "،")):
        lines = (shared("flores200", "devtest") / f"{lang}.txt").read_text(encoding="utf-8").splitlines()[:50]
        for line in lines:
            for piece, (start, _) in tokenizer.pre_tokenizer.pre_tokenize_str(line):
                if piece.startswith(mark):  # a mark on its own only where no letter precedes it
                    assert start == 0 or not regex.match(r"[\p{L}\p{M}]", line[start - 1]), (lang, line)
                elif regex.search(rf"[\p{{L}}\p{{M}}]{mark}", piece):
                    checked.add(lang)
    assert len(checked) == 7


def test_the_parity_knobs_on_the_command_line_reach_training_json(parallel_sets, tmp_path):
    """--parity-alpha, --min-atom-count and --max-token-clusters (0: no cap) are what training.json
    records; values the trainer cannot take are refused before any work."""
    train, dev, devtest = parallel_sets
    out = tmp_path / "tok"
    result = run("retrain", str(train), "--vocab-size", "3500", "-o", str(out), "--target-parity", str(dev),
                 "--held-out", str(devtest), "--parity-alpha", "2.5", "--min-atom-count", "1",
                 "--max-token-clusters", "0", "-q", "-f", "json")
    assert result.exit_code == 0, result.output
    recorded = json.loads((out / "training.json").read_text("utf-8"))["arguments"]["parity"]
    assert (recorded["alpha"], recorded["min_atom_count"], recorded["max_token_clusters"]) == (2.5, 1, None)
    for option, value in (("--parity-alpha", "0"), ("--min-atom-count", "-1"), ("--max-token-clusters", "-2")):
        refused = run("retrain", str(train), "--vocab-size", "1200", "-o", str(tmp_path / "no"),
                      "--target-parity", str(dev), option, value)
        assert refused.exit_code == 2 and option in refused.stderr and not (tmp_path / "no").exists()
    with pytest.raises(UsageError, match="--max-token-clusters 0"):
        retrain([train], output=tmp_path / "lib", vocab_size=1200, target_parity=dev, held_out=[devtest],
                parity=ParitySettings(max_token_clusters=0))
