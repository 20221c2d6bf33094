"""Corpus formats (issue 10): the same FLORES text as .txt, as one mixed-language .jsonl.gz with
a language field, as Parquet under FineWeb-2's {lang}/train/, compressed, Hive partitions,
Arrow (datasets.save_to_disk), fsspec URLs and standard input all give identical counts; bad
records are a clear error naming file and record, or skipped and counted."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import subprocess
import sys

import pytest
from real_files import shared

import fertility
from fertility.io.corpus import read_corpus
from fertility.io.languages import language_of

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
zstandard = pytest.importorskip("zstandard")

LANGS = ("ben_Beng", "eng_Latn", "tha_Thai")
TOKENIZERS = ["tiktoken:cl100k_base", "graphemes"]


def flores(n: int = 60) -> dict[str, list[str]]:
    folder = shared("flores200", "devtest")
    return {lang: (folder / f"{lang}.txt").read_text(encoding="utf-8").splitlines()[:n] for lang in LANGS}


def counts(paths, **kwargs):
    result = fertility.audit(TOKENIZERS, [str(p) for p in paths], jobs=1, cache=False, diagnose=False, **kwargs)
    return result, {key: value for key, value in result.counts.items()}


def write_txt(root, texts):
    root.mkdir()
    for lang, lines in texts.items():
        (root / f"{lang}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def test_txt_jsonl_gz_and_parquet_give_identical_counts_and_hash(tmp_path):
    from fertility.io.readers import ReadOptions
    texts = flores()
    txt = write_txt(tmp_path / "txt", texts)
    mixed = tmp_path / "mixed.jsonl.gz"
    with gzip.open(mixed, "wt", encoding="utf-8") as out:
        for lang, lines in texts.items():
            for line in lines:
                out.write(json.dumps({"id": 1, "text": line, "lang": lang}, ensure_ascii=False) + "\n")
    fineweb = tmp_path / "fineweb2"
    for lang, lines in texts.items():
        (fineweb / lang / "train").mkdir(parents=True)
        half = len(lines) // 2
        for k, part in enumerate((lines[:half], lines[half:])):
            pq.write_table(pa.table({"text": part, "id": list(range(len(part)))}),
                           fineweb / lang / "train" / f"00{k}_00000.parquet", row_group_size=7)
    whole, expected = counts([txt])
    as_jsonl, got_jsonl = counts([mixed], read_options=ReadOptions(lang_field="lang"))
    as_parquet, got_parquet = counts([fineweb])
    assert got_jsonl == expected and got_parquet == expected
    assert {lang for _, lang in expected} == set(LANGS)
    # the corpus hash is over the documents' language and text, not the container
    assert as_jsonl.signature.corpus["sha256"] == whole.signature.corpus["sha256"]
    assert as_parquet.signature.corpus["sha256"] == whole.signature.corpus["sha256"]
    assert as_jsonl.signature.extra["records"] == "text_field:text|lang_field:lang"


@pytest.mark.parametrize("suffix,opener", [(".gz", gzip.open), (".bz2", bz2.open), (".xz", lzma.open),
                                           (".zst", None)])
def test_compressed_text_and_hive_partitions(tmp_path, suffix, opener):
    texts = flores(20)
    whole = write_txt(tmp_path / "txt", texts)
    hive = tmp_path / "hive"
    for lang, lines in texts.items():
        (hive / f"lang={lang}").mkdir(parents=True)
        data = ("\n".join(json.dumps({"content": t}) for t in lines) + "\n").encode()
        path = hive / f"lang={lang}" / f"part-0.jsonl{suffix}"
        if opener is None:
            path.write_bytes(zstandard.ZstdCompressor().compress(data))
        else:
            with opener(path, "wb") as out:
                out.write(data)
    from fertility.io.readers import ReadOptions
    assert counts([hive], read_options=ReadOptions(text_field="content"))[1] == counts([whole])[1]


def test_language_from_compound_suffix_and_hive_folder(tmp_path):
    assert language_of(tmp_path / "ben_Beng.jsonl.zst") == ("ben_Beng", "Beng")
    assert language_of(tmp_path / "lang=hin_Deva" / "x.parquet", tmp_path) == ("hin_Deva", "Deva")
    assert language_of(tmp_path / "tha_Thai" / "train" / "000_00000.parquet", tmp_path) == ("tha_Thai", "Thai")


def test_arrow_as_save_to_disk_writes_it(tmp_path):
    texts = flores(15)
    for lang, lines in texts.items():
        folder = tmp_path / "ds" / lang
        folder.mkdir(parents=True)
        table = pa.table({"text": lines})
        with pa.OSFile(str(folder / "data-00000-of-00001.arrow"), "wb") as sink, \
                pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table, max_chunksize=4)
        (folder / "state.json").write_text("{}")
    assert counts([tmp_path / "ds"])[1] == counts([write_txt(tmp_path / "txt", texts)])[1]


def test_fsspec_memory_and_file_urls(tmp_path):
    fsspec = pytest.importorskip("fsspec")
    texts = flores(15)
    whole = write_txt(tmp_path / "txt", texts)
    fs = fsspec.filesystem("memory")
    for lang, lines in texts.items():
        with fs.open(f"/corpus-{id(tmp_path)}/{lang}/train/a.jsonl", "wb") as out:
            out.write(("\n".join(json.dumps({"text": t}) for t in lines) + "\n").encode())
    expected = counts([whole])[1]
    assert counts([f"memory://corpus-{id(tmp_path)}"])[1] == expected
    assert counts([f"file://{whole}"])[1] == expected


def test_standard_input_with_lang(tmp_path):
    lines = flores(20)["ben_Beng"]
    (tmp_path / "ben_Beng.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = [sys.executable, "-m", "fertility", "audit", "-t", "graphemes", "--no-cache", "--no-findings", "-f", "json"]
    piped = subprocess.run([*run, "-", "--lang", "ben_Beng"], input="\n".join(lines) + "\n", capture_output=True,
                           text=True, timeout=120, check=False)
    from_file = subprocess.run([*run, str(tmp_path / "ben_Beng.txt")], capture_output=True, text=True, timeout=120,
                               check=False)
    assert piped.returncode == 0, piped.stderr
    assert json.loads(piped.stdout)["rows"] == json.loads(from_file.stdout)["rows"]
    missing = subprocess.run(run + ["-"], input="x\n", capture_output=True, text=True, timeout=120, check=False)
    assert missing.returncode == 2
    assert missing.stderr.startswith("fertility: error: reading standard input (-) needs --lang")


def bad_jsonl(tmp_path):
    path = tmp_path / "ben_Beng.jsonl"
    path.write_text('{"text": "আমি"}\n{"txt": "ভাত"}\n{"text": 3}\n{"text": "খাই"}\n', encoding="utf-8")
    return path


def test_bad_record_is_a_clear_error_or_skipped_and_counted(tmp_path):
    from click.testing import CliRunner

    from fertility.cli import cli
    path = bad_jsonl(tmp_path)
    failed = CliRunner().invoke(cli, ["audit", "-t", "bytes", "--no-cache", str(path)])
    assert failed.exit_code == 2
    assert failed.stderr.startswith(f"fertility: error: {path}: record 2: no field 'text'")
    skipped = CliRunner().invoke(cli, ["audit", "-t", "bytes", "--no-cache", "--no-findings", "-f", "json",
                                       "--skip-bad-records", str(path)])
    assert skipped.exit_code == 0, skipped.stderr
    assert "skipped 2 bad records" in skipped.stderr
    data = json.loads(skipped.stdout)
    assert data["signature"]["skipped_records"] == "2"
    kept = [row for row in data["rows"] if row["lang"] == "ben_Beng"]
    assert kept[0]["n_bytes"] == len("আমি".encode()) + len("খাই".encode())


def test_non_string_record_and_json_array(tmp_path):
    path = tmp_path / "eng_Latn.jsonl"
    path.write_text('{"text": ["a"]}\n', encoding="utf-8")
    with pytest.raises(fertility.CorpusError, match=r"record 1: field 'text' \(the text\) is list, not a string"):
        read_corpus([path])
    array = tmp_path / "eng_Latn.json"
    array.write_text('[{"text": "a"}]\n', encoding="utf-8")
    with pytest.raises(fertility.CorpusError, match="a JSON array; fertility reads JSON lines"):
        read_corpus([array])
    parquet = tmp_path / "fra_Latn.parquet"
    pq.write_table(pa.table({"body": ["x"]}), parquet)
    with pytest.raises(fertility.CorpusError, match="no column 'text'; columns: body"):
        read_corpus([parquet])


def test_jsonl_json_is_byte_identical_to_txt_through_the_cli(tmp_path):
    texts = flores(30)
    whole = write_txt(tmp_path / "txt", texts)
    records = tmp_path / "rec"
    records.mkdir()
    for lang, lines in texts.items():
        (records / f"{lang}.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in lines))
    one = fertility.audit(["graphemes"], [str(whole)], jobs=1, cache=False)
    two = fertility.audit(["graphemes"], [str(records)], jobs=1, cache=False)
    assert one.counts == two.counts
    assert [f.message for f in one.findings] == [f.message for f in two.findings]


def test_bad_utf8_in_a_compressed_text_names_its_line(tmp_path):
    path = tmp_path / "eng_Latn.txt.gz"
    with gzip.open(path, "wb") as out:
        out.write(b"good\nalso good\nbad \xff byte\n")
    with pytest.raises(fertility.CorpusError, match=r"eng_Latn\.txt\.gz:3:5: not valid UTF-8"):
        read_corpus([path])
