"""Hostile inputs for every reader and loader, built on the fly, and a runner that measures them.

Shared by tests/io/test_memory_ceiling.py (which holds every case to a memory ceiling) and
benchmarks/hostile_inputs.py (which prints peak memory and time per case, for any copy of
fertility). Big inputs are sparse files or compressed streams of a few kilobytes; each is just
large enough that reading it whole would cost far more than the ceiling.
"""

from __future__ import annotations

import base64
import bz2
import json
import lzma
import os
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

MB = 1 << 20
BOMB = 8 * MB  # a line this long, read whole, cost well over a gigabyte in per-character arrays
SPARSE = 300 * MB  # files that would be read whole are this large (sparse: no disk used)
ENG = "The river market opens at dawn.\nBoats arrive.\n"
BEN = "নদীর বাজার ভোরে খোলে।\nনৌকা আসে।\n"
AUDIT = ("audit", "-q", "-f", "json", "--jobs", "1")


@dataclass(frozen=True)
class Run:
    args: list[str]
    feed: Callable[[], object] | None = None  # writes into a pipe or FIFO while the command runs
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Hostile:
    """One hostile input: `build(folder)` writes it and says how to run the command on it;
    `error` is a piece of the one-line error expected (exit 2), or "" for a correct result
    that `check(stdout JSON, stderr)` confirms."""

    id: str
    reader: str
    build: Callable[[Path], Run]
    error: str = ""
    check: Callable[[dict, str], bool] | None = None


# --- builders -----------------------------------------------------------------------------------

def tiny(folder: Path) -> Path:
    corpus = folder / "corpus"
    corpus.mkdir(exist_ok=True)
    (corpus / "eng_Latn.txt").write_text(ENG, encoding="utf-8")
    (corpus / "ben_Beng.txt").write_text(BEN, encoding="utf-8")
    return corpus


def sparse(path: Path, size: int, head: bytes = b"") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:
        out.write(head)
        out.truncate(size)
    return path


def zeros(total: int, block: int = MB):
    for _ in range(total // block):
        yield b"\0" * block


def compressed(path: Path, kind: str, chunks) -> Path:
    """Chunks of bytes streamed through a compressor into `path` (never held whole)."""
    import zstandard
    makers = {".gz": lambda: zlib.compressobj(6, zlib.DEFLATED, 31), ".bz2": lambda: bz2.BZ2Compressor(9),
              ".xz": lambda: lzma.LZMACompressor(), ".zst": lambda: zstandard.ZstdCompressor().compressobj()}
    compressor = makers[kind]()
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:
        for chunk in chunks:
            out.write(compressor.compress(chunk))
        out.write(compressor.flush())
    return path


def nul_line(suffix: str) -> Callable[[Path], Run]:
    def build(folder: Path) -> Run:
        name = folder / "nul" / f"ben_Beng.txt{suffix}"
        if suffix:
            compressed(name, suffix, zeros(BOMB))
        else:
            sparse(name, BOMB)
        return Run([*AUDIT, "-t", "bytes", "--no-findings", str(name.parent)])
    return build


FLAGS = 120_000  # flags in one line (960 KB: one piece, so every flag is counted whole)


def flags_line(folder: Path) -> Run:
    """One line of flag emoji: `regex`'s `\\X` alone is quadratic in a run of regional
    indicators (this line took minutes before text.units.cluster_bounds)."""
    corpus = folder / "flags"
    corpus.mkdir(parents=True, exist_ok=True)
    (corpus / "eng_Latn.txt").write_text("\U0001F1E9\U0001F1EA" * FLAGS + "\n", encoding="utf-8")
    return Run([*AUDIT, "-t", "graphemes", str(corpus)])


def one_flag_per_grapheme(result: dict, stderr: str) -> bool:
    row = next(r for r in result["rows"] if r["lang"] != "ALL")
    return row["n_docs"] == 1 and row["n_chars"] == 2 * FLAGS and row["n_graphemes"] == FLAGS == row["n_tokens"]


def one_document_of(size: int) -> Callable[[dict, str], bool]:
    def check(result: dict, stderr: str) -> bool:
        row = next(r for r in result["rows"] if r["lang"] != "ALL")
        return row["n_docs"] == 1 and row["n_bytes"] == size and row["n_tokens"] == size
    return check


def write_zeros(out, total: int = BOMB) -> None:
    """`total` NUL bytes into an open pipe; a reader that stops early is not our problem here."""
    try:
        with out:
            for _ in range(total // MB):
                out.write(b"\0" * MB)
    except OSError:
        pass


def fifo_writer(path: Path, deadline: float = 60.0) -> Callable[[], None]:
    """Open the FIFO once a reader has (never blocking forever if none comes), then write."""
    def feed() -> None:
        until = time.monotonic() + deadline
        while time.monotonic() < until:
            try:
                descriptor = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                time.sleep(0.02)
                continue
            os.set_blocking(descriptor, True)
            write_zeros(os.fdopen(descriptor, "wb"))
            return
    return feed


def stdin_stream(folder: Path) -> Run:
    return Run([*AUDIT, "-t", "bytes", "--no-findings", "-", "--lang", "ben_Beng"])


def fifo_line(folder: Path) -> Run:
    path = folder / "ben_Beng.txt"
    os.mkfifo(path)
    return Run([*AUDIT, "-t", "bytes", "--no-findings", str(path)], feed=fifo_writer(path))


def url_bomb(folder: Path) -> Run:
    path = compressed(folder / "url" / "ben_Beng.txt.gz", ".gz", zeros(BOMB))
    return Run([*AUDIT, "-t", "bytes", "--no-findings", f"file://{path}"])


def per_file(folder: Path) -> Run:
    path = folder / "pf" / "ben_Beng.txt"
    path.parent.mkdir()
    with path.open("wb") as out:
        for _ in range(BOMB // MB):
            out.write((b"abcdefghijklmnopqrstuvwxyz01234 " * 3 + b"abcdefghijklmnopqrstuvwxyz0123\n") * (MB // 128))
    return Run([*AUDIT, "-t", "bytes", "--no-findings", "--per-file", str(path)])


def long_record(folder: Path) -> Run:
    from fertility.limits import MAX_DOCUMENT_BYTES
    path = folder / "ben_Beng.jsonl"
    with path.open("wb") as out:
        out.write(b'{"text": "')
        for _ in range(MAX_DOCUMENT_BYTES // MB + 1):
            out.write(b"a" * MB)
        out.write(b'"}\n')
    return Run([*AUDIT, "-t", "bytes", "--no-findings", str(path)])


def long_record_skipped(folder: Path) -> Run:
    from fertility.limits import MAX_DOCUMENT_BYTES

    def chunks():
        yield b'{"text": "'
        for _ in range(MAX_DOCUMENT_BYTES // MB + 16):
            yield b"a" * MB
        yield b'"}\n{"text": "a short record"}\n'
    path = compressed(folder / "ben_Beng.jsonl.gz", ".gz", chunks())
    return Run([*AUDIT, "-t", "bytes", "--no-findings", "--skip-bad-records", str(path)])


def parquet_cell(folder: Path) -> Run:
    import pyarrow as pa
    import pyarrow.parquet as pq
    path = folder / "pq" / "ben_Beng.parquet"
    path.parent.mkdir()
    big = "a" * (140 * MB)
    pq.write_table(pa.table({"text": ["short", big]}), path, compression="zstd", use_dictionary=False)
    return Run([*AUDIT, "-t", "bytes", "--no-findings", str(path.parent)])


def arrow_body(folder: Path) -> Run:
    import io

    import pyarrow as pa
    sink = io.BytesIO()
    table = pa.table({"text": ["hello", "world"]})
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    data = bytearray(sink.getvalue())
    schema_end = 8 + struct.unpack("<i", data[4:8])[0]
    meta_length = struct.unpack("<i", data[schema_end + 4:schema_end + 8])[0]
    body = len(data) - 8 - (schema_end + 8 + meta_length)
    at = data.index(struct.pack("<q", body), schema_end + 8)  # the batch's declared body length
    data[at:at + 8] = struct.pack("<q", 1 << 40)
    path = folder / "arrow" / "ben_Beng.arrow"
    path.parent.mkdir()
    path.write_bytes(bytes(data))
    return Run([*AUDIT, "-t", "bytes", "--no-findings", str(path.parent)])


# GGUF headers, written by hand (the format: llama.cpp's gguf.md)
def gguf_string(text: str | bytes) -> bytes:
    data = text.encode() if isinstance(text, str) else text
    return struct.pack("<Q", len(data)) + data


def gguf_kv(key: str, kind: int, value: bytes) -> bytes:
    return gguf_string(key) + struct.pack("<I", kind) + value


def gguf_header(pairs: list[bytes], n_kv: int | None = None) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", 3, 0, len(pairs) if n_kv is None else n_kv) + b"".join(pairs)


def gguf_strings(items: list[str]) -> bytes:
    return struct.pack("<IQ", 8, len(items)) + b"".join(gguf_string(s) for s in items)


def gguf_numbers(fmt: str, kind: int, values: list) -> bytes:
    return struct.pack("<IQ", kind, len(values)) + struct.pack(f"<{len(values)}{fmt}", *values)


def spm_gguf(tokens: list[str]) -> bytes:
    """A SentencePiece (llama) GGUF vocabulary: <unk>, the 256 byte tokens, then `tokens`."""
    every = ["<unk>", *(f"<0x{b:02X}>" for b in range(256)), *tokens]
    types = [2, *([6] * 256), *([1] * len(tokens))]
    scores = [0.0, *([0.0] * 256), *(-float(i) for i in range(len(tokens)))]
    return gguf_header([gguf_kv("tokenizer.ggml.model", 8, gguf_string("llama")),
                        gguf_kv("tokenizer.ggml.tokens", 9, gguf_strings(every)),
                        gguf_kv("tokenizer.ggml.scores", 9, gguf_numbers("f", 6, scores)),
                        gguf_kv("tokenizer.ggml.token_type", 9, gguf_numbers("i", 5, types))])


def tokenizer_run(name: str, content: Callable[[Path], Path]) -> Callable[[Path], Run]:
    def build(folder: Path) -> Run:
        return Run([*AUDIT, "--no-findings", "-t", str(content(folder)), str(tiny(folder))])
    return build


def gguf_string_count(folder: Path) -> Path:
    path = folder / "strings.gguf"
    path.write_bytes(gguf_header([gguf_kv("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, 1 << 28))]))
    return path


def gguf_array_bomb(folder: Path) -> Path:
    """An array of 2**24 arrays whose headers are the zeros of a sparse file: empty arrays."""
    head = gguf_header([gguf_kv("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 9, 1 << 24))])
    return sparse(folder / "bomb.gguf", 200 * MB, head)


def gguf_number_count(folder: Path) -> Path:
    path = folder / "numbers.gguf"
    path.write_bytes(gguf_header([gguf_kv("tokenizer.ggml.scores", 9, struct.pack("<IQ", 10, 1 << 40))]))
    return path


def gguf_long_token(folder: Path) -> Path:
    path = folder / "long-token.gguf"
    path.write_bytes(spm_gguf(["▁", "a", "▁a", "aa", "b", "ab", "a" * (3 * MB)]))
    return path


def gguf_many_lengths(folder: Path) -> Path:
    path = folder / "lengths.gguf"
    path.write_bytes(spm_gguf(["a" * k for k in range(1, 1201)]))
    return path


def tiktoken_long_token(folder: Path) -> Run:
    """Every single byte, then one token of 20 MB: the vocabulary-by-script listing classified
    every character of the vocabulary at once, 8 bytes a character in each of several arrays."""
    path = folder / "long-token.tiktoken"
    lines = [base64.b64encode(bytes([b])) + b" %d" % b for b in range(256)]
    path.write_bytes(b"\n".join([*lines, base64.b64encode(b"a" * (20 * MB)) + b" 256"]) + b"\n")
    return Run([*AUDIT, "-t", f"tiktoken:{path}", "--pattern", "gpt2", str(tiny(folder))])


def huge_id(folder: Path) -> Path:
    path = folder / "tokenizer.json"
    config = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
              "pre_tokenizer": {"type": "Whitespace"}, "post_processor": None, "decoder": None,
              "model": {"type": "WordLevel", "vocab": {"[UNK]": 0, "the": 1, "river": 2 ** 32 - 2},
                        "unk_token": "[UNK]"}}
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def oversized(name: str, head: bytes) -> Callable[[Path], Path]:
    return lambda folder: sparse(folder / name, SPARSE, head)


def saved_audit_oversized(folder: Path) -> Run:
    import fertility
    corpus = tiny(folder)
    good = fertility.audit(["bytes"], [corpus], diagnose=False, cache=False).to_json()
    (folder / "a.json").write_text(good, encoding="utf-8")
    sparse(folder / "b.json", SPARSE, b'{"fertility_version": "0.1.0", "rows": [')
    return Run(["compare", str(folder / "a.json"), str(folder / "b.json"), "-f", "json"])


def million_shards(folder: Path) -> Run:
    """The most shards a part may claim: the missing ones are counted, never listed."""
    import fertility
    corpus = tiny(folder)
    part = fertility.audit(["bytes"], [corpus], shard=(1, 10 ** 6), cache=False).to_json()
    (folder / "part-1.json").write_text(part, encoding="utf-8")
    return Run(["merge", str(folder / "part-1.json"), "-f", "json"])


def cache_entries(folder: Path, replace: Callable[[Path], None]) -> Run:
    """An audit whose profile cache entries were replaced by something hostile."""
    import fertility
    from fertility.engine.profiles import ProfileCache
    corpus = tiny(folder)
    cache = folder / "cache"
    fertility.audit(["bytes"], [corpus], diagnose=False, cache=ProfileCache(cache))
    entries = sorted(cache.rglob("*.npy"))
    assert entries
    for entry in entries:
        entry.unlink()
        replace(entry)
    return Run([*AUDIT, "-t", "bytes", "--no-findings", str(corpus)], env={"FERTILITY_CACHE_DIR": str(cache)})


def same_counts_as_the_tiny_corpus(result: dict, stderr: str) -> bool:
    rows = {r["lang"]: r for r in result["rows"]}
    return rows["ben_Beng"]["n_bytes"] == len("".join(BEN.split("\n")).encode()) and \
        rows["eng_Latn"]["n_graphemes"] == len("".join(ENG.split("\n"))) and "profile cache" in stderr


CASES: list[Hostile] = [
    Hostile("text-nul-line", "plain text: one 8 MB line of NUL, no newline, no whitespace", nul_line(""),
            check=one_document_of(BOMB)),
    Hostile("gz-nul-bomb", ".gz: 8 KB inflating to one 8 MB line of NUL", nul_line(".gz"), check=one_document_of(BOMB)),
    Hostile("zst-nul-bomb", ".zst: one 8 MB line of NUL", nul_line(".zst"), check=one_document_of(BOMB)),
    Hostile("xz-nul-bomb", ".xz: one 8 MB line of NUL", nul_line(".xz"), check=one_document_of(BOMB)),
    Hostile("bz2-nul-bomb", ".bz2: one 8 MB line of NUL", nul_line(".bz2"), check=one_document_of(BOMB)),
    Hostile("text-flags-line", "plain text: one line of 120,000 flag emoji (regional indicator pairs)", flags_line,
            check=one_flag_per_grapheme),
    Hostile("stdin-nul-stream", "standard input: 8 MB of NUL through a pipe, no newline", stdin_stream,
            check=one_document_of(BOMB)),
    Hostile("fifo-nul-line", "a FIFO: 8 MB of NUL, no newline", fifo_line, check=one_document_of(BOMB)),
    Hostile("url-gz-bomb", "fsspec file:// URL of a .gz bomb", url_bomb, check=one_document_of(BOMB)),
    Hostile("dev-zero", "a device as corpus", lambda folder: Run([*AUDIT, "-t", "bytes", "/dev/zero"]),
            error="/dev/zero: a device, not a corpus file"),
    Hostile("per-file-64k-lines", "--per-file: 8 MB in 65,536 lines, one document", per_file,
            check=lambda result, _: result["rows"][0]["n_docs"] == 1),
    Hostile("jsonl-65mb-record", "JSON lines: a 65 MB record", long_record, error="record 1: a record of over 64 MiB"),
    Hostile("jsonl-gz-80mb-record-skipped", ".jsonl.gz: an 80 MB record, --skip-bad-records", long_record_skipped,
            check=lambda result, stderr: result["signature"]["skipped_records"] == "1"),
    Hostile("parquet-140mb-cell", "Parquet: a 140 MB cell compressed to 14 KB", parquet_cell,
            error="a page of 146,800,"),
    Hostile("arrow-1tb-body", "Arrow stream: a record batch declaring a 1 TB body", arrow_body,
            error="declares more bytes than memory can hold"),
    Hostile("gguf-2e28-strings", "GGUF header: 2**28 strings declared in a 60-byte file",
            tokenizer_run("gguf", gguf_string_count), error="truncated GGUF file, or a corrupt count"),
    Hostile("gguf-empty-array-bomb", "GGUF header: 2**24 empty arrays in a 200 MB sparse file",
            tokenizer_run("gguf", gguf_array_bomb), error="strings and arrays in the metadata"),
    Hostile("gguf-2e40-numbers", "GGUF header: 2**40 numbers declared", tokenizer_run("gguf", gguf_number_count),
            error="truncated GGUF file, or a corrupt count"),
    Hostile("gguf-spm-3mb-token", "SentencePiece GGUF with one 3 MB token", tokenizer_run("gguf", gguf_long_token),
            check=lambda result, _: result["rows"][0]["n_tokens"] > 0),
    Hostile("gguf-spm-1200-lengths", "SentencePiece GGUF with tokens of 1,200 different lengths",
            tokenizer_run("gguf", gguf_many_lengths), error="too costly to rebuild"),
    Hostile("tokenizer-json-huge-id", "tokenizer.json with a token id of 2**32 - 2", tokenizer_run("hf", huge_id),
            error="the id of token 'river' is 4,294,967,294, out of range"),
    Hostile("tokenizer-json-300mb", "tokenizer.json of 300 MB (sparse)",
            tokenizer_run("hf", oversized("tokenizer.json", b'{"model": ')), error="more than any real"),
    Hostile("tiktoken-300mb", ".tiktoken of 300 MB (sparse)",
            tokenizer_run("tiktoken", oversized("big.tiktoken", b"IQ== 0\n")), error="more than any real"),
    Hostile("tiktoken-20mb-token", ".tiktoken with one token of 20 MB", tiktoken_long_token,
            check=lambda result, _: result["vocabulary"]["long-token.tiktoken"]["by_script"] == {"Zyyy": 76,
                                                                                                "Latn": 53}),
    Hostile("spm-model-300mb", "SentencePiece .model of 300 MB (sparse)",
            tokenizer_run("spm", oversized("big.model", b"\x0a\x05hello")), error="more than any real"),
    Hostile("tekken-300mb", "Tekken JSON of 300 MB (sparse)",
            tokenizer_run("tekken", oversized("tekken.json", b'{"config": {"pattern": "x"}, ')),
            error="more than any real"),
    Hostile("saved-audit-300mb", "compare: a saved audit of 300 MB (sparse)", saved_audit_oversized,
            error="over the 64 MiB any audit takes"),
    Hostile("merge-million-shards", "merge: a part claiming 10**6 shards (the most allowed)", million_shards,
            error="shards 2, 3, 4"),
    Hostile("cache-fifo", "profile cache entries replaced by FIFOs",
            lambda folder: cache_entries(folder, os.mkfifo), check=same_counts_as_the_tiny_corpus),
    Hostile("cache-1gb-entry", "profile cache entries replaced by 1 GB sparse files",
            lambda folder: cache_entries(folder, lambda path: sparse(path, 1 << 30, b"fertility-profile-3\n")),
            check=same_counts_as_the_tiny_corpus),
    Hostile("show-dev-zero", "show --file /dev/zero",
            lambda folder: Run(["show", "-t", "bytes", "--file", "/dev/zero"]), error="over 64 MiB"),
]


# --- the runner ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Measured:
    exit_code: int | None  # None: killed (time or memory)
    peak_rss_mb: float
    seconds: float
    stdout: str
    stderr: str
    killed: str = ""


def command(python: str = sys.executable) -> list[str]:
    """The installed `fertility` command beside this Python, else `python -m fertility`."""
    script = Path(python).parent / "fertility"
    return [str(script)] if script.exists() and python == sys.executable and not os.environ.get("PYTHONPATH") \
        else [python, "-m", "fertility"]


# Runs the command as its child and writes the child's peak RSS (wait4) to the file named first:
# a process started from this one would inherit this one's peak (Linux keeps ru_maxrss across
# fork and exec), and building the inputs here may take hundreds of MB.
LAUNCHER = """import os, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as out:
    out.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status) & 0xFF)
"""


def _rss_mb(pid: int) -> float:
    """The current RSS of `pid`'s children (the launcher's command), in MB."""
    total = 0.0
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return 0.0
    for child in children:
        try:
            for line in Path(f"/proc/{child}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) / 1024
        except OSError:
            pass
    return total


def run(case: Hostile, folder: Path, *, timeout: float = 60.0, kill_above_mb: float = 2500.0,
        prefix: list[str] | None = None, env: dict[str, str] | None = None) -> Measured:
    """Build the case in `folder`, run the command, and measure its peak RSS (wait4's
    ru_maxrss, through a launcher) and wall time; a watchdog kills it past `timeout` or past
    `kill_above_mb` of RSS (then the peak reported is at least that)."""
    folder.mkdir(parents=True, exist_ok=True)
    spec = case.build(folder)
    environment = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120", **(env or {}), **spec.env}
    environment.setdefault("FERTILITY_CACHE_DIR", str(folder / "no-cache-here"))
    stdin = subprocess.PIPE if "-" in spec.args and "--lang" in spec.args else subprocess.DEVNULL
    out, err, peak = folder / "stdout", folder / "stderr", folder / "peak-rss"
    start = time.monotonic()
    killed, watched = "", 0.0
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen([sys.executable, "-c", LAUNCHER, str(peak), *(prefix or command()), *spec.args],
                                   stdin=stdin, stdout=stdout, stderr=stderr, cwd=folder, env=environment,
                                   start_new_session=True)
        feeders = []
        if stdin == subprocess.PIPE:
            feeders.append(threading.Thread(target=write_zeros, args=(process.stdin,), daemon=True))
        if spec.feed is not None:
            feeders.append(threading.Thread(target=spec.feed, daemon=True))
        for feeder in feeders:
            feeder.start()
        while process.poll() is None:
            elapsed = time.monotonic() - start
            watched = max(watched, _rss_mb(process.pid))
            if elapsed > timeout or watched > kill_above_mb:
                killed = f"killed after {elapsed:.0f} s" if elapsed > timeout else f"killed above {kill_above_mb:.0f} MB"
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                break
            time.sleep(0.02)
    seconds = time.monotonic() - start
    for feeder in feeders:
        feeder.join(timeout=1)
    peak_mb = int(peak.read_text()) / 1024 if peak.exists() else watched
    result = Measured(None if killed else process.returncode, peak_mb, seconds, out.read_text(errors="replace"),
                      err.read_text(errors="replace"), killed)
    shutil.rmtree(folder, ignore_errors=True)
    return result
