"""Grapheme cuts, counted and drawn: `cut_boundaries` on known answers and `fertility show`."""

import pytest
from click.testing import CliRunner
from real_files import mistral_file, real_file

from fertility import load_tokenizer
from fertility.cli import cli
from fertility.engine.count import count, cut_boundaries, flagged_chars
from fertility.io.corpus import Document
from fertility.text.units import profile


@pytest.fixture(scope="module")
def tok():
    return {"cl100k": load_tokenizer("tiktoken:cl100k_base"),
            "spm": load_tokenizer(str(mistral_file("mistral_instruct_tokenizer_240323.model.v3")))}


# --- grapheme cut counting ------------------------------------------------------------------------

def cuts(tokenizer, text):
    spec = load_tokenizer(tokenizer) if isinstance(tokenizer, str) else tokenizer
    return cut_boundaries(profile(text), spec.encode([text])[0]).tolist()


def test_cut_boundaries_on_known_answers(tok):
    assert cuts("bytes", "কি") == [True] * 5  # one cluster of 2 chars, 6 bytes: every boundary cuts
    assert cuts("chars", "কি") == [True]
    assert cuts("chars", "ক খ") == [False, False]
    assert not any(cuts("graphemes", "ক্ষমা কি 👩‍👩‍👧 নয়"))
    assert not any(cuts(tok["cl100k"], "hello world, the river"))
    # SentencePiece byte fallback: ▁a | <0xF0> <0x92> <0x80> <0x80> | b, the first three of
    # zero width at the character's start: the three boundaries between them cut
    assert cuts(tok["spm"], "a\U00012000b") == [False, True, True, True, False]
    text = "a\U00012000b"
    assert flagged_chars(text, profile(text), tok["spm"].encode([text])[0]) == {"\U00012000": 1}


def test_counts_sum_the_cuts():
    docs = [Document("ben_Beng", "কি", "x", 1), Document("ben_Beng", "ক খ", "x", 2)]
    counted = count(load_tokenizer("bytes"), docs)["ben_Beng"]
    assert (counted.n_boundaries, counted.n_cut_boundaries) == (5 + 6, 5 + 4)  # ক খ: 2 cuts in each letter


# --- fertility show -----------------------------------------------------------------------------

def run(*args):
    return CliRunner().invoke(cli, list(args), env={"COLUMNS": "200", "NO_COLOR": "1"})


def test_show_marks_cuts_in_bengali():
    gpt2 = str(real_file("gpt2.tiktoken"))
    result = run("show", "-t", gpt2, "আমি ভাত খাই")
    assert result.exit_code == 0, result.output
    # GPT-2 has no Bengali merges: each 3-byte letter is two byte tokens ([আ]¦[আ]), 9 letters
    # and 2 spaces make 20 tokens; a boundary is a cut unless it falls between clusters
    assert result.stdout == (
        "r50k_base: 20 tokens, 11 chars (0.55 chars/token), 12 of 19 boundaries inside a grapheme (¦)\n"
        "  tokens:      [আ]¦[আ]|[ম]¦[ম]¦[ি]¦[ি]| |[ভ]¦[ভ]¦[া]¦[া]|[ত]¦[ত]| |[খ]¦[খ]¦[া]¦[া]|[ই]¦[ই]\n"
        "  pre-tokens:  আম¦ি| ভ¦া|ত| খ¦া|ই\n"
        "  (regex (r50k_base): 8 pre-tokens, 3 cuts inside a grapheme)\n\n")
    assert result.stderr == ""


def test_show_never_wraps_the_drawing_at_the_console_width():
    """Off a terminal the console is 80 columns (here 40): a wrapped drawing would put line
    breaks between tokens, which the text does not have."""
    result = CliRunner().invoke(cli, ["show", "-t", str(real_file("gpt2.tiktoken")), "বাংলা ভাষা, ক্ষমা"],
                                env={"COLUMNS": "40", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[:3] == [
        "r50k_base: 32 tokens, 17 chars (0.53 chars/token), 23 of 31 boundaries inside a grapheme (¦)",
        ("  tokens:      [ব]¦[ব]¦[া]¦[া]¦[ং]¦[ং]|[ল]¦[ল]¦[া]¦[া]| |[ভ]¦[ভ]¦[া]¦[া]|[ষ]¦[ষ]¦[া]¦[া]|,| "
         "|[ক]¦[ক]¦[্]¦[্]¦[্]¦[ষ]¦[ষ]|[ম]¦[ম]¦[া]¦[া]"),
        "  pre-tokens:  ব¦াং|ল¦া| ভ¦া|ষ¦া,| ক¦্¦ষম¦া"]


def test_show_writes_counts_with_thousands_separators_as_every_table_does():
    result = run("show", "-t", "bytes", "-t", str(real_file("gpt2.tiktoken")), "ক " * 500)
    assert result.exit_code == 0, result.output
    # each ক is 3 bytes (2 cuts inside it), each space 1: 2,000 byte tokens for 1,000 characters
    assert result.stdout.startswith("bytes: 2,000 tokens, 1,000 chars (0.50 chars/token), "
                                    "1,000 of 1,999 boundaries inside a grapheme (¦)\n")
    assert "r50k_base: 1,500 tokens, 1,000 chars (0.67 chars/token), 500 of 1,499 boundaries" in result.stdout


def test_show_english_has_no_cut_marker():
    result = run("show", "-t", str(real_file("gpt2.tiktoken")), "-t", "graphemes", "We eat rice")
    assert result.exit_code == 0, result.output
    assert "¦" not in result.stdout.replace("inside a grapheme (¦)", "")
    assert "  tokens:      We| eat| rice\n" in result.stdout
    assert "graphemes: 11 tokens" in result.stdout and "pre-tokens:  none (no pre-tokenizer)" in result.stdout


def test_show_reads_a_utf8_file(tmp_path):
    path = tmp_path / "text.txt"
    path.write_text("কি", encoding="utf-8")
    result = run("show", "-t", "chars", "--file", str(path))
    assert result.exit_code == 0, result.output
    assert "  tokens:      ক¦ি\n" in result.stdout


@pytest.mark.parametrize("args", [[], ["text", "--file", "x.txt"]], ids=["neither", "both"])
def test_show_needs_exactly_one_of_text_and_file(args):
    result = run("show", "-t", "bytes", *args)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == "fertility: error: give TEXT or --file FILE (exactly one)\n"


def test_show_rejects_a_non_utf8_file(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("café".encode("latin-1"))
    result = run("show", "-t", "bytes", "--file", str(path))
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("fertility: error: ")
    assert f"{path}:1:4: not valid UTF-8" in result.stderr
