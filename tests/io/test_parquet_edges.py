"""Columnar files that are valid but were misread. Parquet with a column chunk of no rows:
pyarrow writes its data_page_offset as 0 (beside a dictionary page), and the page check read a
"page header" from the file's magic at byte 0, calling an empty file or one with an empty row
group unreadable. An Arrow IPC file (not a stream) is named as such."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fertility.cli import cli

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

AUDIT = ["audit", "-q", "--no-findings", "-f", "json", "-t", "bytes"]


def test_an_empty_parquet_file_is_an_empty_corpus_file(tmp_path: Path) -> None:
    path = tmp_path / "eng_Latn.parquet"
    pq.write_table(pa.table({"text": pa.array([], pa.string())}), path)
    assert pq.ParquetFile(path).metadata.row_group(0).column(0).data_page_offset == 0  # the trap
    result = CliRunner().invoke(cli, [*AUDIT, str(path)])
    assert result.exit_code == 2
    assert result.stderr == f"fertility: error: {path}: empty corpus file (no non-empty lines or records)\n"


def test_an_empty_row_group_before_others_is_read_past(tmp_path: Path) -> None:
    path = tmp_path / "eng_Latn.parquet"
    texts = ["The river market opens at dawn.", "Boats arrive."]
    with pq.ParquetWriter(path, pa.schema([("text", pa.string())])) as writer:
        writer.write_table(pa.table({"text": pa.array([], pa.string())}))
        writer.write_table(pa.table({"text": pa.array(texts)}))
    assert [pq.ParquetFile(path).metadata.row_group(g).num_rows for g in (0, 1)] == [0, 2]
    result = CliRunner().invoke(cli, [*AUDIT, str(path)])
    assert result.exit_code == 0, result.stderr
    row = json.loads(result.stdout)["rows"][0]
    assert (row["n_docs"], row["n_bytes"]) == (2, sum(len(t.encode()) for t in texts))


def test_an_arrow_ipc_file_is_named_as_such(tmp_path: Path) -> None:
    """An Arrow IPC *file* (feather v2) read as a stream failed with "Expected to read 1330795073
    metadata bytes": its magic ARROW1 read as a length. It is named, with what to write instead."""
    feather = pytest.importorskip("pyarrow.feather")
    path = tmp_path / "eng_Latn.arrow"
    feather.write_feather(pa.table({"text": pa.array(["The river market opens at dawn."])}), path)
    result = CliRunner().invoke(cli, [*AUDIT, str(path)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"fertility: error: {path}: an Arrow IPC file (the random-access format "
                                    "pyarrow.feather and ipc.new_file write), not an Arrow stream;")
    assert len(result.stderr.splitlines()) == 1
