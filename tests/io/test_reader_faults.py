"""Every reader either reads its source to a verified end or fails with one line naming the
file and where: compressed streams truncated or damaged anywhere, Arrow streams cut between
record batches, Parquet cut short, JSON lines with lone surrogates or deep nesting, long lines
read in pieces exactly as a whole line is cut, and a profile cache that is tampered with or
holds things that are not files. The memory side of the same inputs is tests/io/test_memory_ceiling.py.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import json
import lzma
import os
from functools import cache
from pathlib import Path

import numpy as np
import pytest
import regex
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from real_files import real_file, shared

import fertility
from fertility.cli import cli
from fertility.errors import CorpusError, FertilityWarning, TokenizerError
from fertility.io.corpus import CorpusStream
from fertility.io.decompress import decompressed
from fertility.text import pieces as long_lines
from fertility.text.pieces import PieceCutter, pieces

zstandard = pytest.importorskip("zstandard")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

@cache
def ben_text() -> bytes:
    """60 kB of FLORES Bengali: read when a test asks (skips when the shared corpora are absent)."""
    return shared("flores200", "devtest", "ben_Beng.txt").read_bytes()[:60_000]


def compress(kind: str, data: bytes, *, members: int = 1) -> bytes:
    """`data` compressed as `kind`, cut into `members` members (streams, frames) laid end to end."""
    def one(part: bytes) -> bytes:
        return {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress,
                ".zst": zstandard.ZstdCompressor(write_checksum=True).compress}[kind](part)
    step = -(-len(data) // members)
    return b"".join(one(data[i:i + step]) for i in range(0, len(data), step)) or one(b"")


def read_all(kind: str, data: bytes) -> bytes:
    return decompressed(io.BytesIO(data), kind, f"x.txt{kind}").read()


KINDS = [".gz", ".bz2", ".xz", ".zst"]


# --- compressed streams -----------------------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("members", [1, 3])
def test_whole_streams_and_concatenated_members_are_read_whole(kind, members):
    assert read_all(kind, compress(kind, ben_text(), members=members)) == ben_text()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(KINDS), members=st.integers(1, 3), cut=st.floats(0.0, 0.999))
def test_a_stream_cut_anywhere_is_an_error_never_a_short_read(kind, members, cut):
    data = compress(kind, ben_text(), members=members)
    keep = int(len(data) * cut)
    with pytest.raises(CorpusError, match=r"x\.txt\.\w+: (truncated|corrupt) \w+ (file|data)"):
        read_all(kind, data[:keep] if keep else data[:1])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(KINDS), where=st.floats(0.3, 0.9), flip=st.integers(1, 255))
def test_a_damaged_body_is_an_error_or_the_exact_text(kind, where, flip):
    """Checksums (gzip CRC32, bzip2 CRC, xz CRC64, zstd XXH64) catch a changed byte; a change
    in a part the codec does not check (a header field) may still decode to the very text."""
    data = bytearray(compress(kind, ben_text()))
    data[int(len(data) * where)] ^= flip
    try:
        assert read_all(kind, bytes(data)) == ben_text()
    except CorpusError as err:
        assert "x.txt" in str(err) and "byte" in str(err)


@pytest.mark.parametrize("kind", KINDS)
def test_junk_after_a_complete_stream_is_refused_naming_its_offset(kind):
    data = compress(kind, ben_text())
    with pytest.raises(CorpusError, match=f"at compressed byte {len(data):,} after a complete"):
        read_all(kind, data + b"junk that is not another stream")


def test_gzip_and_xz_padding_between_members_is_read():
    assert read_all(".gz", compress(".gz", ben_text()) + b"\0" * 5) == ben_text()
    assert read_all(".xz", compress(".xz", ben_text()[:100]) + b"\0" * 4 + compress(".xz", ben_text()[100:])) == ben_text()
    with pytest.raises(CorpusError, match="not a multiple of 4"):
        read_all(".xz", compress(".xz", ben_text()) + b"\0" * 3)


def test_skippable_zstd_frames_are_skipped():
    skippable = (0x184D2A53).to_bytes(4, "little") + (5).to_bytes(4, "little") + b"12345"
    assert read_all(".zst", skippable + compress(".zst", ben_text()) + skippable) == ben_text()


def test_the_output_of_a_bomb_comes_out_a_bounded_step_at_a_time():
    """8 MB of NUL compressed to a few KB: no single read of the codec yields more than a step."""
    for kind in KINDS:
        data = compress(kind, b"\0" * (8 << 20))
        stream = decompressed(io.BytesIO(data), kind, "bomb")
        raw = stream.raw  # type: ignore[attr-defined]
        sizes = [len(chunk) for chunk in raw._chunks]
        assert sum(sizes) == 8 << 20 and max(sizes) <= 1 << 18, (kind, max(sizes))


@pytest.mark.parametrize("kind", KINDS)
def test_a_truncated_corpus_file_through_the_cli_is_one_line_exit_2(tmp_path, kind):
    folder = tmp_path / "c"
    folder.mkdir()
    data = compress(kind, ben_text())
    (folder / f"ben_Beng.txt{kind}").write_bytes(data[:len(data) * 2 // 3])
    result = CliRunner().invoke(cli, ["audit", "-q", "-t", "bytes", str(folder)])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"ben_Beng.txt{kind}: truncated" in lines[0] and "Traceback" not in result.stderr


def test_a_zst_cut_inside_its_first_block_is_truncated_not_empty(tmp_path):
    (tmp_path / "ben_Beng.txt.zst").write_bytes(compress(".zst", ben_text())[:40])
    with pytest.raises(CorpusError, match="truncated zstd file: the data ends at byte 40"):
        list(CorpusStream([tmp_path]).batches())


# --- Arrow and Parquet ------------------------------------------------------------------------

def arrow_stream(rows: int, batch: int) -> tuple[bytes, list[int]]:
    """An Arrow IPC stream and the byte offsets where each record batch message ends."""
    table = pa.table({"text": [f"line {i} নদী" for i in range(rows)]})
    sink = io.BytesIO()
    ends = []
    with pa.ipc.new_stream(sink, table.schema) as writer:
        for start in range(0, rows, batch):
            writer.write_table(table.slice(start, batch))
            ends.append(sink.tell())
    return sink.getvalue(), ends


def test_an_arrow_stream_cut_between_record_batches_is_refused(tmp_path):
    data, ends = arrow_stream(1000, 100)
    folder = tmp_path / "ds"
    folder.mkdir()
    path = folder / "ben_Beng.arrow"
    path.write_bytes(data)
    assert sum(len(b.texts) for b in CorpusStream([folder]).batches()) == 1000
    for end in [ends[4], ends[0], len(data) - 8, len(data) - 3, ends[2] + 17]:  # 500 of 1,000 rows, ...
        path.write_bytes(data[:end])
        with pytest.raises(CorpusError, match=r"ben_Beng\.arrow: (truncated Arrow stream|not a readable Arrow)"):
            list(CorpusStream([folder]).batches())
    path.write_bytes(data[:ends[4]])
    with pytest.raises(CorpusError, match="after 500 rows, without its end-of-stream marker"):
        list(CorpusStream([folder]).batches())


def test_parquet_cut_short_or_with_a_huge_page_is_refused(tmp_path):
    table = pa.table({"text": [f"line {i}" for i in range(500)]})
    path = tmp_path / "ben_Beng.parquet"
    pq.write_table(table, path, row_group_size=100)
    data = path.read_bytes()
    assert sum(len(b.texts) for b in CorpusStream([path]).batches()) == 500
    for keep in (len(data) - 9, len(data) // 2, 10):
        path.write_bytes(data[:keep])
        with pytest.raises(CorpusError, match="ben_Beng.parquet: not a readable Parquet file"):
            list(CorpusStream([path]).batches())


def test_parquet_page_sizes_are_read_from_every_page_header(tmp_path, monkeypatch):
    """The page walk visits exactly the pages the writer made (small pages: many of them)."""
    from fertility.io import parquet_pages
    table = pa.table({"text": [f"line {i} " * 20 for i in range(3000)], "lang": ["ben_Beng"] * 3000})
    for options in ({"data_page_size": 2048}, {"data_page_version": "2.0", "use_dictionary": False, "data_page_size": 8192},
                    {"write_page_index": True, "compression": "gzip", "row_group_size": 700, "data_page_size": 4096}):
        path = tmp_path / "x.parquet"
        pq.write_table(table, path, **options)
        seen: list[int] = []

        def spy(self, depth=0, wanted=(), original=parquet_pages._Thrift.fields, seen=seen):
            found = original(self, depth, wanted)
            if wanted:
                seen.append(found[2])
            return found
        monkeypatch.setattr(parquet_pages._Thrift, "fields", spy)
        with path.open("rb") as handle:
            parquet_pages.check_pages("x", handle, pq.ParquetFile(handle), ["text"])
        monkeypatch.undo()
        assert len(seen) > 1 and all(0 < size < 1 << 20 for size in seen), options
        monkeypatch.setattr(parquet_pages, "MAX_PAGE_BYTES", min(seen) - 1)
        with path.open("rb") as handle, pytest.raises(CorpusError, match="a page of .* bytes uncompressed"):
            parquet_pages.check_pages("x", handle, pq.ParquetFile(handle), ["text"])
        monkeypatch.undo()


# --- JSON lines -------------------------------------------------------------------------------

def jsonl(tmp_path: Path, *lines: str, name: str = "ben_Beng.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize("escape", ["\\ud800", "\\udfff", "x\\udc00y", "\\ud83d"])
def test_a_lone_surrogate_is_a_bad_record_never_text(tmp_path, escape):
    path = jsonl(tmp_path, '{"text": "fine"}', f'{{"text": "{escape}"}}')
    with pytest.raises(CorpusError, match=r"ben_Beng\.jsonl: record 2: an escaped lone surrogate"):
        list(CorpusStream([path]).batches())
    with pytest.warns(FertilityWarning, match="skipped 1 bad records"):
        result = fertility.audit(["bytes"], [str(path)], diagnose=False, cache=False,
                                 read_options=fertility_options(skip=True))
    assert result.counts[("bytes", "ben_Beng")].n_docs == 1 and result.signature.extra["skipped_records"] == "1"


def fertility_options(*, skip: bool = False, lang: str | None = None):
    from fertility.io.readers import ReadOptions
    return ReadOptions(skip_bad_records=skip, lang_field=lang)


def test_paired_surrogate_escapes_are_one_astral_character(tmp_path):
    path = jsonl(tmp_path, '{"text": "a\\ud83d\\ude00b"}')
    result = fertility.audit(["chars"], [str(path)], diagnose=False, cache=False)
    assert result.counts[("chars", "ben_Beng")].n_chars == 3 and result.counts[("chars", "ben_Beng")].n_bytes == 6


def test_a_lone_surrogate_in_the_language_field_is_refused(tmp_path):
    path = jsonl(tmp_path, '{"text": "fine", "lang": "ben\\udc80"}', name="mixed.jsonl")
    with pytest.raises(CorpusError, match="record 1: an escaped lone surrogate"):
        list(CorpusStream([path], options=fertility_options(lang="lang")).batches())


@pytest.mark.parametrize("depth", [2_000, 200_000])
def test_deep_nesting_is_a_bad_record_not_a_recursion_error(tmp_path, depth):
    path = jsonl(tmp_path, '{"text": "ok"}', '{"text": "x", "deep": ' + "[" * depth + "]" * depth + "}")
    with pytest.raises(CorpusError, match="record 2: JSON nested too deeply"):
        list(CorpusStream([path]).batches())


# --- long lines in pieces ---------------------------------------------------------------------

LINE = st.lists(st.sampled_from(["নদীর", "বাজার", "a", "\0", "ক্ষ", "👩\u200d👧", "\u0600x", "e\u0301", " ", "\t",
                                 "\r", "\u3000", "x" * 7]), max_size=60).map("".join)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(LINE, min_size=1, max_size=8), block=st.integers(3, 40), piece=st.integers(8, 48),
       crlf=st.booleans(), last_newline=st.booleans())
def test_lines_read_in_pieces_are_cut_exactly_as_whole_lines(tmp_path, monkeypatch, lines, block, piece, crlf,
                                                            last_newline):
    """Small blocks and pieces make every line long: the stream's pieces of a line are
    `pieces(line)`, each fits, joined they are the line, and the corpus hash and document count
    are those of the whole lines. (Blocks are smaller than pieces, as BLOCK_BYTES and PIECE_BYTES are.)"""
    assume(block < piece)
    monkeypatch.setattr(long_lines, "PIECE_BYTES", piece)
    monkeypatch.setattr(CorpusStream, "BLOCK_BYTES", block)
    ending = "\r\n" if crlf else "\n"
    path = tmp_path / str(abs(hash((tuple(lines), block, piece, crlf, last_newline)))) / "ben_Beng.txt"
    path.parent.mkdir(exist_ok=True)
    body = ending.join(lines) + (ending if last_newline else "")
    path.write_bytes(body.encode())
    expected = [line for line in (body.split("\n")) if line.removesuffix("\r").strip() or
                len(line.removesuffix("\r").encode()) > piece]
    expected = [line.removesuffix("\r") for line in expected]
    if not expected:
        return
    stream = CorpusStream([path])
    docs: list[list[str]] = []
    for batch in stream.batches():
        for k, text in enumerate(batch.texts):
            if k == 0 and batch.continues:
                docs[-1].append(text)
            else:
                docs.append([text])
    assert ["".join(parts) for parts in docs] == expected
    for parts, line in zip(docs, expected):
        if len(line.encode()) > piece:
            assert parts == pieces(line, max_bytes=piece)
            assert all(len(p.encode()) <= piece for p in parts)
    digest = hashlib.sha256()
    for line in expected:
        digest.update(f"ben_Beng\0{line}\0".encode())
    digest.update(b"line")
    assert stream.corpus().sha256 == digest.hexdigest() and stream.n_documents == len(expected)
    whole = CorpusStream([path])
    assert [d.text for d in whole.documents()] == expected and whole.corpus().sha256 == digest.hexdigest()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(LINE, min_size=1, max_size=10), block=st.integers(3, 40), piece=st.integers(8, 48))
def test_per_file_documents_arrive_in_pieces_of_the_joined_lines(tmp_path, monkeypatch, lines, block, piece):
    assume(block < piece)
    monkeypatch.setattr(long_lines, "PIECE_BYTES", piece)
    monkeypatch.setattr(CorpusStream, "BLOCK_BYTES", block)
    path = tmp_path / str(abs(hash((tuple(lines), block, piece)))) / "ben_Beng.txt"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(("\n".join(lines) + "\n").encode())
    kept = [line.removesuffix("\r") for line in lines
            if line.removesuffix("\r").strip() or len(line.removesuffix("\r").encode()) > piece]
    if not kept:
        return
    texts: list[str] = []
    for batch in CorpusStream([path], doc_mode="file").batches():
        assert batch.continues == bool(texts)
        texts += batch.texts
    assert "".join(texts) == " ".join(kept) and texts == pieces(" ".join(kept), max_bytes=piece)


def test_the_cutter_given_any_parts_cuts_as_the_whole():
    text = shared("flores200", "devtest", "tha_Thai.txt").read_text(encoding="utf-8").replace(" ", "")[:40_000]
    whole = pieces(text, max_bytes=5000)
    for step in (1, 7, 999, 5001, 40_000):
        cutter = PieceCutter(5000)
        got = []
        for i in range(0, len(text), step):
            got += cutter.feed(text[i:i + step], last=i + step >= len(text))
        assert got == whole


def test_a_piece_without_whitespace_ends_at_a_cluster_boundary():
    text = "ক্ষমা" * 50_000 + "👍🏽" * 30_000 + "🇩🇪" * 3_000  # `\\X`, the reference, is quadratic in flags
    starts = {m.start() for m in regex.finditer(r"\X", text)} | {len(text)}
    cut = pieces(text, max_bytes=4096)
    assert "".join(cut) == text and all(len(p.encode()) <= 4096 for p in cut)
    position = 0
    for piece in cut:
        position += len(piece)
        assert position in starts


def test_a_bad_byte_deep_in_a_long_line_names_its_line_and_column(tmp_path):
    line = "নদী " * 400_000  # 4.8 MB: read in segments
    data = b"first\n" + line.encode() + b"\xff tail\n"
    (tmp_path / "ben_Beng.txt").write_bytes(data)
    with pytest.raises(CorpusError, match=f"ben_Beng.txt:2:{len(line) + 1}: not valid UTF-8"):
        list(CorpusStream([tmp_path]).batches())


# --- the profile cache ------------------------------------------------------------------------

@cache
def cache_text() -> dict[str, str]:
    return {"ben_Beng": shared("flores200", "devtest", "ben_Beng.txt").read_text(encoding="utf-8")[:30_000],
            "eng_Latn": "Family 👩‍👩‍👧 and flags 🇩🇪🇫🇷 with skin tones 👍🏽 and 𠀀𠀁 astral Han.\n" * 40}


def cache_corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    for lang, text in cache_text().items():
        (folder / f"{lang}.txt").write_text(text, encoding="utf-8")
    return folder


def audit_json(corpus: Path, cache: Path | None) -> tuple[dict, str]:
    args = ["audit", "-q", "-f", "json", "-t", "graphemes", "-t", "bytes", "--jobs", "1", str(corpus)]
    env = {"FERTILITY_CACHE_DIR": str(cache)} if cache else {}
    result = CliRunner().invoke(cli, args + ([] if cache else ["--no-cache"]), env=env)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    return {(r["tokenizer"], r["lang"]): {k: v for k, v in r.items() if k.startswith("n_")} for r in data["rows"]}, \
        result.stderr


def rewrite(entry: Path, edit) -> None:
    """Edit an entry's header or bits and give it a valid checksum again, as a tamperer would."""
    data = entry.read_bytes()
    magic = data.index(b"\n") + 1
    body = data[magic + 64:]
    header, bits = body[:body.index(b"\n") + 1], bytearray(body[body.index(b"\n") + 1:])
    header, bits = edit(header, bits)
    body = header + bytes(bits)
    entry.write_bytes(data[:magic] + hashlib.sha256(body).hexdigest().encode() + body)


TAMPERS = {
    "all-bits-zero": lambda h, b: (h, bytearray(len(b))),
    "all-bits-one": lambda h, b: (h, bytearray(b"\xff" * len(b))),
    "one-bit-flipped": lambda h, b: (h, b[:len(b) // 2] + bytes([b[len(b) // 2] ^ 0x10]) + b[len(b) // 2 + 1:]),
    "bits-shifted": lambda h, b: (h, b[1:] + b[:1]),
    "header-claims-fewer-chars": lambda h, b: (h.replace(h.split()[3], str(int(h.split()[3]) - 8).encode()), b[:-1]),
}


@pytest.mark.parametrize("tamper", list(TAMPERS))
def test_a_tampered_entry_with_a_valid_checksum_is_recomputed_never_trusted(tmp_path, tamper):
    corpus, cache = cache_corpus(tmp_path), tmp_path / "cache"
    expected, _ = audit_json(corpus, None)
    first, _ = audit_json(corpus, cache)
    entries = sorted(cache.rglob("*.npy"))
    assert first == expected and entries
    for entry in entries:
        rewrite(entry, TAMPERS[tamper])
    again, stderr = audit_json(corpus, cache)
    assert again == expected
    assert f"{len(entries)} {'entry' if len(entries) == 1 else 'entries'} did not match the text" in stderr
    third, stderr = audit_json(corpus, cache)  # rewritten: trusted again, silently
    assert third == expected and "profile cache" not in stderr


def test_an_entry_made_for_other_text_is_never_reused(tmp_path):
    corpus, cache = cache_corpus(tmp_path), tmp_path / "cache"
    expected, _ = audit_json(corpus, None)
    audit_json(corpus, cache)
    entries = sorted(cache.rglob("*.npy"))
    other = tmp_path / "other"
    other.mkdir()
    (other / "ben_Beng.txt").write_text(cache_text()["ben_Beng"].replace("া", "ি"), encoding="utf-8")
    audit_json(other, cache)
    foreign = [e for e in sorted(cache.rglob("*.npy")) if e not in entries]
    for entry in entries:  # every entry of the corpus replaced by one made for other text
        entry.write_bytes(foreign[0].read_bytes())
    again, stderr = audit_json(corpus, cache)
    assert again == expected and "did not match the text" in stderr


def special(kind: str, path: Path) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "link-to-dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "socket":  # bound at a short path (AF_UNIX limits its length), then moved in place
        import socket
        import tempfile
        short = Path(tempfile.mkdtemp(dir="/tmp")) / "s"
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(short))
        server.close()
        short.rename(path)
        short.parent.rmdir()
    elif kind == "huge-sparse":
        with path.open("wb") as out:
            out.truncate(1 << 30)


@pytest.mark.parametrize("kind", ["fifo", "folder", "link-to-dev-zero", "socket", "huge-sparse"])
def test_what_is_not_an_entry_is_skipped_unopened(tmp_path, kind):
    """A FIFO hung the audit; a link to /dev/zero or a 1 GB file would be read whole. Run as a
    process with a timeout, so that a regression fails instead of hanging the suite."""
    import subprocess
    import sys
    corpus, cache = cache_corpus(tmp_path), tmp_path / "cache"
    expected, _ = audit_json(corpus, None)
    audit_json(corpus, cache)
    for entry in sorted(cache.rglob("*.npy")):
        entry.unlink()
        special(kind, entry)
    done = subprocess.run([sys.executable, "-m", "fertility", "audit", "-q", "-f", "json", "-t", "graphemes",
                           "-t", "bytes", "--jobs", "2", str(corpus)], capture_output=True, text=True,
                          check=False, timeout=120, env={**os.environ, "FERTILITY_CACHE_DIR": str(cache)})
    assert done.returncode == 0, done.stderr
    got = {(r["tokenizer"], r["lang"]): {k: v for k, v in r.items() if k.startswith("n_")}
           for r in json.loads(done.stdout)["rows"]}
    assert got == expected
    words = "did not match the text" if kind == "huge-sparse" else "not a regular file"
    assert done.stderr.count("profile cache") == 1 and words in done.stderr


CLUSTER_ALPHABET = ["ক", "্", "ষ", "া", "👍", "🏽", "\u200d", "👩", "🇩", "🇪", "a", " ", "\u0301", "\0", "\r", "\n", "가",
                    "\u1100", "\u1161", "\u11a8", "\u0600", "𠀀", "𑀓", "𑁆", "\u0915", "\u094d", "\ufe0f", "❤",
                    "\U0001F3FB", "\U000E0020", "\U0001D165"]


@settings(max_examples=400, deadline=None)
@given(texts=st.lists(st.lists(st.sampled_from(CLUSTER_ALPHABET), max_size=14).map("".join), min_size=1, max_size=4))
def test_the_checks_never_reject_a_true_entry(texts):
    """Wherever the checks decide, they agree with `\\X`, on texts of emoji, flags, astral and
    Indic characters: a correct entry is never rejected (no false alarms)."""
    from fertility.text.units import PairJoins, code_points
    pairs = PairJoins(texts, code_points("".join(texts)))
    assert not ((pairs.segmented(texts) != pairs.expected()) & ~pairs.undecided()).any()


# --- GGUF ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["llama-spm", "phi-3"])
def test_spm_merges_from_length_cuts_equal_every_cut(name):
    """The merges derived trying only cuts whose sides have token lengths are exactly those of
    trying every cut (recomputed here the slow way, on real llama.cpp vocabularies)."""
    from fertility.backends import _gguf_models
    from fertility.backends._gguf_read import read_metadata
    path = real_file(f"gguf/ggml-vocab-{name}.gguf")
    meta = read_metadata(path)
    tokens = meta["tokenizer.ggml.tokens"]
    types = meta["tokenizer.ggml.token_type"].astype(np.int64)
    scores = meta["tokenizer.ggml.scores"].astype(np.float64)
    vocab: dict[str, int] = {}
    for index, token in enumerate(tokens):
        vocab.setdefault(token, index)
    slow = []
    for index in sorted(range(len(tokens)), key=lambda i: (-scores[i], i)):
        token = tokens[index]
        if types[index] == 6 or len(token) < 2 or vocab[token] != index:
            continue
        slow += [(token[:c], token[c:]) for c in range(1, len(token)) if token[:c] in vocab and token[c:] in vocab]
    captured = {}
    real_bpe = _gguf_models.models.BPE

    def spy(**kwargs):
        captured.update(kwargs)
        return real_bpe(**kwargs)
    import unittest.mock
    with unittest.mock.patch.object(_gguf_models.models, "BPE", side_effect=spy):
        _gguf_models._spm(path, meta, tokens, types)
    assert captured["merges"] == slow and len(slow) > 1000


@settings(max_examples=80, deadline=None)
@given(declared=st.integers(0, 2 ** 64 - 1), kind=st.sampled_from([0, 4, 6, 8, 9, 10, 12]),
       tail=st.binary(max_size=64), n_kv=st.integers(0, 2 ** 64 - 1))
def test_declared_counts_beyond_the_file_are_refused_before_allocating(tmp_path_factory, declared, kind, tail, n_kv):
    import struct

    from fertility.backends._gguf_read import read_metadata
    path = tmp_path_factory.mktemp("gguf") / "x.gguf"
    key = b"tokenizer.ggml.tokens"
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, min(n_kv, 1)) + struct.pack("<Q", len(key)) + key
                     + struct.pack("<IIQ", 9, kind, declared) + tail)
    try:
        meta = read_metadata(path)
    except TokenizerError as err:
        assert str(path) in str(err)
    else:
        value = meta.get("tokenizer.ggml.tokens")
        assert value is None or len(value) * 1 <= len(tail)
