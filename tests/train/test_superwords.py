"""retrain --superwords: a second BPE stage across the spaces between words, proven to encode
exactly as its two stages claim, on real text (NTREX-128, Bangla and English news, FLORES-200)
with tiny vocabularies."""

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest
import regex
import tokenizers
from click.testing import CliRunner
from real_files import shared

from fertility.choices import DEFAULT_SUPERWORDS
from fertility.cli import cli
from fertility.errors import UsageError
from fertility.io.samples import samples_dir
from fertility.metrics.balance import gini
from fertility.train.bpe import MARKS, SENTENCE_PUNCTUATION, train_tokenizer
from fertility.train.parity_trainer import ParitySettings, train_parity
from fertility.train.superword_split import FINAL_PUNCTUATION, PAUSE_PUNCTUATION, holds_junction, joining_pattern
from fertility.train.superwords import SuperwordSettings, add_superwords

LANGS = ("ben_Beng", "eng_Latn", "hin_Deva", "tha_Thai", "zho_Hans")
# what a corpus can throw at the joining split: runs of spaces, tabs, non-ASCII spaces, contractions,
# punctuation of every script with and without spaces after it, digits glued to words, lines
TRICKY = ["don't  stop\tnow", "a\u3000  b \u00a0c", "এটা ভালো। ওটা, ভালো।\nThe end. The start", "你好，世界。再见、朋友",
          "''s 's'x word,word word,, word., 3.5 km2 x2y", "  leading and trailing  ", "ক্ষমা ্ া", "a ,b , c"]


def _lines(path: Path, n: int | None = None) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return lines[:n] if n else lines


@pytest.fixture(scope="module")
def texts():
    """Training text (NTREX-128), a parallel dev set (FLORES dev), held-out text (FLORES devtest)."""
    return ({lang: _lines(shared("ntrex128", f"{lang}.txt"), 800) for lang in LANGS},
            {lang: _lines(shared("flores200", "dev", f"{lang}.txt"), 300) for lang in LANGS},
            {lang: _lines(shared("flores200", "devtest", f"{lang}.txt")) for lang in LANGS})


@pytest.fixture(scope="module")
def parity_first(texts):
    """Stage one by the parity trainer with grapheme units (the default with a dev set)."""
    train, dev, _ = texts
    return train_parity(train, dev=dev, ratios=None, vocab_size=2400, units="graphemes", pattern=MARKS,
                        min_frequency=2, settings=ParitySettings(), show_progress=False)


@pytest.fixture(scope="module", params=["graphemes", "bytes"])
def stages(request, texts, parity_first):
    """Stage one, and stage two on top of it: the parity trainer with grapheme units (the
    default with a dev set), plain BPE with byte units (the default without one)."""
    train, dev, _ = texts
    units = request.param
    if units == "graphemes":
        first = parity_first
        two = add_superwords(first, units=units, train=train, add=1200, trainer="parity", dev=dev,
                             settings=SuperwordSettings(1 / 3), parity=ParitySettings())
    else:  # the README's default example in small: Bangla and English news, plain BPE
        from fertility.io.corpus import Document
        train = {"ben": _lines(shared("mono", "ben", "news", "bangla_news_punctrestore_test.txt"), 2000),
                 "eng": _lines(shared("mono", "eng", "news", "wmt_newstest2013_en.txt"), 2000)}
        docs = [Document(lang, line, lang, i) for lang, lines in train.items() for i, line in enumerate(lines)]
        first = train_tokenizer(docs, vocab_size=2400, units=units)
        two = add_superwords(first, units=units, train=train, add=1200, trainer="bpe",
                             settings=SuperwordSettings(1 / 3), parity=ParitySettings())
    return units, first, two


def _bpe(pieces: list[str], ranks: dict[tuple[str, str], int]) -> list[str]:
    """Plain BPE over a sequence of strings: the lowest-ranked adjacent pair, leftmost first
    (after each merge only the two pairs beside it change)."""
    pieces, none = list(pieces), len(ranks)
    pair_ranks = [ranks.get(pair, none) for pair in itertools.pairwise(pieces)]
    while pair_ranks and (best := min(pair_ranks)) < none:
        i = pair_ranks.index(best)
        pieces[i:i + 2] = [pieces[i] + pieces[i + 1]]
        del pair_ranks[i]
        if i < len(pair_ranks):
            pair_ranks[i] = ranks.get((pieces[i], pieces[i + 1]), none)
        if i > 0:
            pair_ranks[i - 1] = ranks.get((pieces[i - 1], pieces[i]), none)
    return pieces


def _two_stages(first: tokenizers.Tokenizer, second: list[tuple[str, str]], pattern: str, line: str,
                encoding: tokenizers.Encoding | None = None, ranks: dict | None = None) -> list[str]:
    """What the two stages claim, computed apart from the composed file: stage one's tokens of the
    line (`encoding`, when already encoded), grouped by the joined pre-tokens (Python's `regex`,
    not the library's Oniguruma), then stage two's merges by rank over each group's token strings."""
    if ranks is None:
        ranks = {pair: rank for rank, pair in enumerate(second)}
    if encoding is None:
        encoding = first.encode(line, add_special_tokens=False)
    ids, offsets = encoding.ids, encoding.offsets  # each access builds a new list
    out: list[str] = []
    k = 0
    for match in regex.finditer(pattern, line):
        start, end = match.span()
        group = []
        while k < len(ids) and offsets[k][0] < end:
            assert offsets[k][0] >= start, (line, match.group())  # no stage-one token straddles it
            group.append(first.id_to_token(ids[k]))
            k += 1
        out += _bpe(group, ranks)
    assert k == len(ids)
    return out


def _split_file(tokenizer: tokenizers.Tokenizer, n_merges: int, n_ids: int) -> tokenizers.Tokenizer:
    """The composed file cut back to its first merges and ids (the joining split kept)."""
    config = json.loads(tokenizer.to_str())
    config["model"]["merges"] = config["model"]["merges"][:n_merges]
    config["model"]["vocab"] = {t: i for t, i in config["model"]["vocab"].items() if i < n_ids}
    return tokenizers.Tokenizer.from_str(json.dumps(config))


# --- the joining split ---------------------------------------------------------------------------

def test_the_two_kinds_of_sentence_punctuation_are_the_words_own():
    assert sorted(FINAL_PUNCTUATION + PAUSE_PUNCTUATION) == sorted(SENTENCE_PUNCTUATION)


@pytest.mark.parametrize("units", ["graphemes", "bytes"])
def test_joined_pre_tokens_are_runs_of_whole_words_meeting_at_junctions(units):
    """Every boundary of the joining split is a boundary of the mark-aware split, and every
    boundary it removes is a junction (a non-space then a space, or, graphemes, a comma-like
    mark then a letter): the library's engine and Python's agree on every line."""
    pattern = joining_pattern(units)
    pre = tokenizers.pre_tokenizers.Split(tokenizers.Regex(pattern), behavior="isolated")
    lines = TRICKY + [line for f in sorted(samples_dir().glob("*.txt")) for line in _lines(f)]
    joined_somewhere = 0
    for line in lines:
        words = [m.span() for m in regex.finditer(MARKS, line)]
        joined = [m.span() for m in regex.finditer(pattern, line)]
        assert joined == [span for _, span in pre.pre_tokenize_str(line)]
        word_cuts = {end for _, end in words}
        assert {end for _, end in joined} <= word_cuts and joined[-1][1] == len(line)
        for cut in word_cuts - {end for _, end in joined}:
            left, right = line[cut - 1], line[cut]
            assert right == " " or (units == "graphemes" and left in PAUSE_PUNCTUATION), (line, cut)
            assert left not in FINAL_PUNCTUATION and not left.isspace(), (line, cut)
            joined_somewhere += 1
    assert joined_somewhere > 1000


def test_junctions_by_hand():
    assert holds_junction("of the", "graphemes") and holds_junction("你好，世", "graphemes")
    assert not holds_junction(" the", "graphemes") and not holds_junction("  ", "graphemes")
    assert not holds_junction("।\"", "graphemes")
    byte_level = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)

    def as_bytes(text: str) -> str:
        return "".join(piece for piece, _ in byte_level.pre_tokenize_str(text))
    assert holds_junction(as_bytes("of the"), "bytes") and not holds_junction(as_bytes(" the"), "bytes")
    # U+3000 ends in byte 0x80, as the letter π (CF 80) does: a whitespace token holding it before a space
    # could otherwise be built across "π the"
    assert holds_junction(as_bytes("\u3000 "), "bytes") and not holds_junction(as_bytes("\t "), "bytes")
    assert not holds_junction(as_bytes("你好，世"), "bytes")  # bytes join words only at a space


# --- the proof, line by line -----------------------------------------------------------------------

def test_stage_one_comes_first_unchanged(stages):
    _units, first, two = stages
    config, composed = json.loads(first.to_str())["model"], json.loads(two.tokenizer.to_str())["model"]
    n_merges = two.record["stage_one"]["merges"]
    assert two.record["stage_one"]["merges_dropped_for_holding_a_junction"] == 0  # none in this text
    assert composed["merges"][:n_merges] == config["merges"] and n_merges == len(config["merges"])
    assert {t: i for t, i in composed["vocab"].items() if i < two.first_id} == config["vocab"]
    assert two.first_id == first.get_vocab_size()


def test_the_joining_split_alone_changes_no_token(stages, texts):
    """Claim 1: stage one's merges on joined pre-tokens build exactly stage one's tokens."""
    _, first, two = stages
    bridge = _split_file(two.tokenizer, two.record["stage_one"]["merges"], two.first_id)
    n = 0
    for lines in texts[2].values():
        for a, b in zip(first.encode_batch(lines, add_special_tokens=False),
                        bridge.encode_batch(lines, add_special_tokens=False)):
            assert a.ids == b.ids
            n += 1
    assert n == 5 * 1012


def test_the_composed_file_encodes_as_the_two_stages(stages, texts):
    """Claim 2: the one tokenizer.json gives, on every devtest line (and the tricky ones), what
    stage one then stage two's merges over each joined pre-token's tokens give."""
    units, first, two = stages
    config = json.loads(two.tokenizer.to_str())["model"]
    second = [tuple(m) for m in config["merges"][two.record["stage_one"]["merges"]:]]
    assert len(second) == two.record["stage_two"]["added_tokens"] == 1200
    vocab = two.tokenizer.get_vocab()
    lines = [line for lines in texts[2].values() for line in lines[::2]] + TRICKY  # half: the proof is slow
    used = 0
    pattern, ranks = joining_pattern(units), {pair: rank for rank, pair in enumerate(second)}
    for line, encoding, one in zip(lines, two.tokenizer.encode_batch(lines, add_special_tokens=False),
                                   first.encode_batch(lines, add_special_tokens=False)):
        expected = [vocab[t] for t in _two_stages(first, second, pattern, line, one, ranks)]
        assert encoding.ids == expected, line
        used += sum(i >= two.first_id for i in encoding.ids)
    assert used > 1000  # stage two's merges did fire (4,864 uses on these lines with byte units)


def test_loads_everywhere_and_round_trips(stages, texts, tmp_path):
    _, _, two = stages
    path = tmp_path / "tokenizer.json"
    two.tokenizer.save(str(path))
    reloaded = tokenizers.Tokenizer.from_file(str(path))
    lines = [line for lines in texts[2].values() for line in lines] + TRICKY + ["Ελληνικά 👩🏽‍🚀 🇧🇩", "a\r\nb"]
    for line, encoding in zip(lines, reloaded.encode_batch(lines, add_special_tokens=False)):
        assert reloaded.decode(encoding.ids) == line
    transformers = pytest.importorskip("transformers", reason="transformers not installed")
    fast = transformers.PreTrainedTokenizerFast(tokenizer_file=str(path))
    for line in lines[::50]:
        assert fast.encode(line, add_special_tokens=False) == reloaded.encode(line, add_special_tokens=False).ids
        assert fast.decode(fast.encode(line, add_special_tokens=False)) == line


def test_no_token_crosses_a_sentence_end_or_a_line(stages):
    """Checked on the vocabulary itself, so it holds for any text: no stage-two token holds a
    newline beside anything but whitespace, or a sentence-final mark followed by a word."""
    _, _, two = stages
    final = regex.compile(r"[" + FINAL_PUNCTUATION + r"][\s\p{L}\p{M}\p{N}]")
    stage_two = [two.tokenizer.decode([i]) for i in range(two.first_id, two.tokenizer.get_vocab_size())]
    assert sum(" " in t.strip() for t in stage_two) > 50  # superwords there are
    for token in stage_two:
        assert "\n" not in token or token.isspace(), token
        assert not final.search(token), token
    text = "এটা ভালো। ওটা ভালো।\nThe end. The start and the end.\n\n你好。世界"
    encoding = two.tokenizer.encode(text, add_special_tokens=False)
    starts = {start for start, _ in encoding.offsets}
    for cut in (m.end() for m in regex.finditer(r"[।.。\n]", text)):
        assert cut in starts or cut == len(text), text[cut:]


def test_stage_two_keeps_parity_where_plain_bpe_loses_it(texts, parity_first):
    """English with four times the text of the others (as real corpora come): stage two by the
    parity rule stays fairer than stage one was, plain BPE hands English the superwords.
    Devtest Gini of premiums, same stage one."""
    train, dev, devtest = texts
    first = parity_first
    skewed = {**train, "eng_Latn": train["eng_Latn"] * 4}

    def gini_of(tokenizer) -> float:
        n = {lang: sum(len(e.ids) for e in tokenizer.encode_batch(lines, add_special_tokens=False))
             for lang, lines in devtest.items()}
        return gini([n[lang] / n["eng_Latn"] for lang in n])
    ginis = {trainer: gini_of(add_superwords(first, units="graphemes", train=skewed, add=600, trainer=trainer,
                                             dev=dev, settings=SuperwordSettings(0.25),
                                             parity=ParitySettings()).tokenizer)
             for trainer in ("parity", "bpe")}
    assert ginis["parity"] < gini_of(first) and ginis["parity"] < ginis["bpe"] / 2, ginis


def test_byte_units_drop_the_stage_one_merges_a_junction_would_let_cross(tmp_path):
    """A non-ASCII space before a space ends in the byte 0x80, as the letter π does: stage one
    merges that byte with a space inside whitespace tokens, and that merge would fire across
    "π the" once words are joined. It is dropped, and the proof holds on exactly such text."""
    from fertility.io.corpus import Document
    lines = ["σπ\u3000 \u3000 \u3000  τα"] * 40 + ["μια σπ σπ τα σπ τα"] * 40
    train = {"ell_Grek": lines}
    first = train_tokenizer([Document("ell_Grek", t, "f", i) for i, t in enumerate(lines)], vocab_size=300)
    byte_level = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    pi_space = "".join(p for p, _ in byte_level.pre_tokenize_str("π "))[1:]  # 0x80 then the space
    crossing = [m for m in json.loads(first.to_str())["model"]["merges"] if pi_space in "".join(m)]
    assert crossing  # the trap is set
    two = add_superwords(first, units="bytes", train=train, add=10, trainer="bpe",
                         settings=SuperwordSettings(0.1), parity=ParitySettings())
    assert two.record["stage_one"]["merges_dropped_for_holding_a_junction"] >= len(crossing)
    config = json.loads(first.to_str())
    config["model"]["merges"] = [m for m in config["model"]["merges"] if not holds_junction("".join(m), "bytes")]
    pruned = tokenizers.Tokenizer.from_str(json.dumps(config))
    composed = json.loads(two.tokenizer.to_str())["model"]
    second = [tuple(m) for m in composed["merges"][two.record["stage_one"]["merges"]:]]
    vocab = two.tokenizer.get_vocab()
    for line in ["μια σπ τα", "σπ τα σπ\u3000  τα", lines[0], lines[-1], "σπ  τα"]:
        assert two.tokenizer.encode(line, add_special_tokens=False).ids == \
            [vocab[t] for t in _two_stages(pruned, second, joining_pattern("bytes"), line)]
        assert two.tokenizer.decode(two.tokenizer.encode(line, add_special_tokens=False).ids) == line


# --- the command --------------------------------------------------------------------------------

def _slices(folder: Path, source: Path, n: int, langs=LANGS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for lang in langs:
        (folder / f"{lang}.txt").write_text("\n".join(_lines(source / f"{lang}.txt", n)) + "\n", encoding="utf-8")
    return folder


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], env={"COLUMNS": "200", "NO_COLOR": "1"})


def test_retrain_superwords_on_the_command_line(tmp_path):
    langs = ("ben_Beng", "eng_Latn", "zho_Hans")
    train = _slices(tmp_path / "train", shared("ntrex128"), 400, langs)
    dev = _slices(tmp_path / "dev", shared("flores200", "dev"), 200, langs)
    devtest = _slices(tmp_path / "devtest", shared("flores200", "devtest"), 200, langs)
    out = tmp_path / "tok"
    result = run("retrain", train, "--vocab-size", 3000, "--target-parity", dev, "--held-out", devtest,
                 "-o", out, "-q", "--superwords", "0.25")
    assert result.exit_code == 0, result.output
    record = json.loads((out / "training.json").read_text("utf-8"))
    assert record["arguments"]["superwords"] == {"fraction": 0.25}
    words = record["superwords"]
    assert words["stage_one"]["vocab_size"] == 3000 - 750 and words["trainer"] == "parity"
    assert words["stage_one"]["vocab_size"] + words["stage_two"]["added_tokens"] == record["vocab_size"] == 3000
    assert words["pattern_regex"] == joining_pattern("graphemes") and record["pattern_regex"] == MARKS
    tokenizer = tokenizers.Tokenizer.from_file(str(out / "tokenizer.json"))
    # the report: per held-out language, the share of stage-two and superword tokens, recounted here
    for lang, row in words["held_out"].items():
        lines = _lines(devtest / f"{lang}.txt")
        ids = [i for e in tokenizer.encode_batch(lines, add_special_tokens=False) for i in e.ids]
        assert row["n_tokens"] == len(ids) and row["n_stage_two_tokens"] == sum(i >= 2250 for i in ids)
        superwords = sum(i >= 2250 and holds_junction(tokenizer.id_to_token(i), "graphemes") for i in ids)
        assert row["n_superword_tokens"] == superwords
    assert words["held_out"]["eng_Latn"]["n_superword_tokens"] > 0
    assert "Superwords: stage two added 750 tokens after stage one's 2,250" in result.output
    assert "| eng_Latn |" in result.output.split("Superwords:")[1]


def test_superwords_alone_takes_the_default_share_and_the_installed_command_runs(tmp_path):
    out = tmp_path / "tok"
    done = subprocess.run([sys.executable, "-m", "fertility", "retrain", str(samples_dir()), "--vocab-size", "3000",
                           "--trainer", "parity", "--superwords", "-o", str(out), "-q", "-f", "json"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    record = json.loads((out / "training.json").read_text("utf-8"))
    assert record["arguments"]["superwords"]["fraction"] == DEFAULT_SUPERWORDS
    assert record["superwords"]["stage_one"]["vocab_size"] == 3000 - round(3000 * DEFAULT_SUPERWORDS)
    assert record["parity_ratios"]["from"] == "training corpus"  # stage two followed the same target ratios
    json.loads(done.stdout)  # stdout is the audit, nothing else


@pytest.mark.parametrize(("args", "message"), [
    (["--superwords", "1.5"], "fertility: error: --superwords 1.5: out of range (expected a finite number in (0, 1))"),
    (["--superwords", "0"], "fertility: error: --superwords 0.0: out of range"),
    (["--superwords", "0.2", "--baseline-pattern", "gpt2"], "fertility: error: --superwords needs the default"),
    (["--superwords", "0.999"], "fertility: error: --superwords 0.999 leaves stage one 3 tokens"),
    (["--superwords", "0.0001"], "fertility: error: --superwords 0.0001 of --vocab-size 3000 is not one token"),
    (["--superwords", "nan"], "fertility: error: --superwords 'nan': expected a finite number in (0, 1)"),
    (["--vocab-size", "200000", "--superwords", "0.1"], "at most 131,068 of them; --vocab-size 200000 leaves"),
])
def test_bad_superword_options_exit_2_before_any_work(tmp_path, args, message):
    result = run("retrain", samples_dir(), "--vocab-size", 3000, "-o", tmp_path / "tok", *args)
    assert result.exit_code == 2 and message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "tok").exists()


def test_library_refuses_a_share_outside_0_1(tmp_path):
    from fertility.train.retrain import retrain
    with pytest.raises(UsageError, match="between 0 and 1"):
        retrain([samples_dir()], output=tmp_path / "tok", vocab_size=3000, superwords=SuperwordSettings(1.0))
