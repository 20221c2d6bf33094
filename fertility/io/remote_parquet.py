"""The first row groups of a Parquet file on the hub, read with HTTP range requests and kept in
fertility's cache, so a sample of a multi-gigabyte file costs its footer and the text column of the
row groups it needs, once.

Only the `text` column of each row group is fetched (Parquet stores columns apart, so pyarrow asks
for that column chunk's bytes alone) and saved as its own small Parquet file; the footer's row
counts are saved beside them. A server that ignores `Range` (answers 200 with the whole file) is
still read, whole, up to WHOLE_FILE_LIMIT bytes, and refused above it, saying so.
"""

from __future__ import annotations

import io
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fertility.errors import CorpusError

READ_AHEAD = 1 << 16  # bytes fetched at least per request (pyarrow reads the footer in pieces)
WHOLE_FILE_LIMIT = 64 << 20


class _KeepAuthorizationOnSameHost(urllib.request.HTTPRedirectHandler):
    """Follow the hub's redirects to its file servers without sending them the token."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and urllib.parse.urlsplit(newurl).netloc != urllib.parse.urlsplit(req.full_url).netloc:
            new.remove_header("Authorization")
        return new


def open_url(url: str, *, headers: dict[str, str], timeout: float, byte_range: tuple[int, int] | None = None):
    request = urllib.request.Request(url, headers=dict(headers))
    if byte_range is not None:
        request.add_header("Range", f"bytes={byte_range[0]}-{byte_range[1] - 1}")
    return urllib.request.build_opener(_KeepAuthorizationOnSameHost).open(request, timeout=timeout)


def read_at_most(response: Any, limit: int, refusal: str) -> bytes:
    """A response body of at most `limit` bytes: a server sending more (or without end) is refused
    with `refusal` after `limit + 1` bytes, never read into memory whole."""
    data = response.read(limit + 1)
    if len(data) > limit:
        raise CorpusError(refusal)
    return data


def _sent_more(name: str, what: str, limit: int) -> str:
    return f"{name}: the server sent more than {what} ({limit:,} bytes); is HF_ENDPOINT a hub?"


class RangeFile(io.RawIOBase):
    """A remote file read by byte ranges: seekable, as pyarrow wants its sources."""

    def __init__(self, url: str, size: int, *, headers: dict[str, str], timeout: float, name: str):
        super().__init__()
        self.url, self.size, self.headers, self.timeout, self.name = url, size, headers, timeout, name
        self.position = 0
        self.fetched = 0  # bytes received, for the record
        self._start, self._data = 0, b""
        self._whole: bytes | None = None

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: self.size}[whence]
        self.position = max(0, base + offset)
        return self.position

    def readinto(self, buffer: Any) -> int:
        want = min(len(buffer), self.size - self.position)
        if want <= 0:
            return 0
        end = self.position + want
        if not (self._start <= self.position and end <= self._start + len(self._data)):
            self._fetch(self.position, min(self.size, max(end, self.position + READ_AHEAD)))
        offset = self.position - self._start
        buffer[:want] = self._data[offset:offset + want]
        self.position = end
        return want

    def _fetch(self, start: int, end: int) -> None:
        if self._whole is not None:
            self._start, self._data = 0, self._whole
            return
        with open_url(self.url, headers=self.headers, timeout=self.timeout, byte_range=(start, end)) as response:
            if response.status == 206:
                self._start, self._data = start, read_at_most(response, end - start,
                                                              _sent_more(self.name, "the range asked", end - start))
            elif self.size > WHOLE_FILE_LIMIT:
                raise CorpusError(f"{self.name}: the server ignores HTTP range requests, so a sample would need the "
                                  f"whole file ({self.size:,} bytes); use a hub that honours them")
            else:  # a server that ignores Range: the whole file, once
                self._whole = read_at_most(response, self.size,
                                           _sent_more(self.name, "the size its listing gave", self.size))
                self._start, self._data = 0, self._whole
        self.fetched += len(self._data)


def row_group_files(folder: Path, *, url: Callable[[], tuple[str, int]], headers: Callable[[], dict[str, str]],
                    timeout: float, name: str, enough: Callable[[int, Path], bool],
                    online: bool) -> tuple[list[Path], list[int]]:
    """Row groups 0..k of the remote file as local Parquet files (the `text` column), k the first
    at which `enough(rows so far, file)` holds; fetched from `url()` (address and size) only when
    not cached. Returns the files and the row count of each."""
    index_path = folder / "row_groups.json"
    remote: RangeFile | None = None
    try:
        index = json.loads(index_path.read_text(encoding="utf-8"))
        rows_per_group = [int(n) for n in index["rows"]]
    except (OSError, ValueError, KeyError, TypeError):
        if not online:
            raise _offline(name) from None
        remote, parquet = _open_remote(url, headers, timeout, name)
        rows_per_group = [parquet.metadata.row_group(i).num_rows for i in range(parquet.metadata.num_row_groups)]
        _write_atomic(index_path, json.dumps({"file": name, "rows": rows_per_group}).encode())
    files: list[Path] = []
    total = 0
    for group, rows in enumerate(rows_per_group):
        path = folder / f"rg-{group:05d}.parquet"
        if not path.is_file():
            if not online:
                raise _offline(name)
            if remote is None:
                remote, parquet = _open_remote(url, headers, timeout, name)
            _save_row_group(parquet, group, path, name)
        files.append(path)
        total += rows
        if enough(total, path):
            break
    return files, rows_per_group[:len(files)]


def _open_remote(url, headers, timeout, name):
    import pyarrow.parquet as pq

    address, size = url()
    remote = RangeFile(address, size, headers=headers(), timeout=timeout, name=name)
    try:
        return remote, pq.ParquetFile(remote)
    except (OSError, ValueError) as err:
        raise CorpusError(f"{name}: not a readable Parquet file ({err})") from None


def _save_row_group(parquet: Any, group: int, path: Path, name: str) -> None:
    import pyarrow.parquet as pq

    try:
        table = parquet.read_row_group(group, columns=["text"])
    except (OSError, ValueError, KeyError) as err:
        raise CorpusError(f"{name}: cannot read row group {group} ({err})") from None
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    pq.write_table(table, temporary)
    os.replace(temporary, path)


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)


def _offline(name: str) -> CorpusError:
    return CorpusError(f"{name}: this much of it is not in fertility's cache and the hub may not be asked "
                       "(--offline or HF_HUB_OFFLINE); run once online with the same sample size")


def text_bytes(path: Path) -> int:
    """UTF-8 bytes of the `text` column of a cached row group."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    column = pq.read_table(path, columns=["text"]).column("text")
    return int(pc.sum(pc.binary_length(column)).as_py() or 0)
