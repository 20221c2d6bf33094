"""The declared size of every Parquet page a read will decompress, checked before reading it.

A Parquet page is decompressed whole, and one cell never spans pages: a cell of 300 MB
compressed to 10 KB costs over 700 MB to read, and the file's footer says only how large each
column chunk is, not its pages. Each page starts with a Thrift (compact protocol) header
that declares its uncompressed size, so the headers of the columns we read are walked first,
skipping over everything else (seeks, no page data read).
"""

from __future__ import annotations

from typing import IO, Any

from fertility.errors import CorpusError
from fertility.limits import MAX_DOCUMENT_BYTES, human

# A page may hold one cell of MAX_DOCUMENT_BYTES and some neighbours; writers cut pages at about 1 MB.
MAX_PAGE_BYTES = 2 * MAX_DOCUMENT_BYTES
_STOP, _TRUE, _FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE, _BINARY, _LIST, _SET, _MAP, _STRUCT = range(13)


class _Thrift:
    """Just enough of the Thrift compact protocol to read a PageHeader's sizes and skip the rest."""

    def __init__(self, handle: IO[bytes], position: int, name: str, where: str):
        self.handle, self.position, self.name, self.where = handle, position, name, where
        handle.seek(position)

    def problem(self, what: str) -> CorpusError:
        return CorpusError(f"{self.name}: not a readable Parquet file ({what}; {self.where})")

    def byte(self) -> int:
        data = self.handle.read(1)
        if not data:
            raise self.problem("a page header runs past the end of the file")
        self.position += 1
        return data[0]

    def varint(self) -> int:
        value = shift = 0
        while True:
            byte = self.byte()
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value
            shift += 7
            if shift > 70:
                raise self.problem("a malformed number in a page header")

    def zigzag(self) -> int:
        value = self.varint()
        return (value >> 1) ^ -(value & 1)

    def skip_bytes(self, n: int) -> None:
        self.position += n
        self.handle.seek(self.position)

    def skip(self, kind: int, depth: int = 0) -> None:
        if depth > 32:
            raise self.problem("a page header nested too deeply")
        if kind in (_TRUE, _FALSE):
            return
        if kind == _BYTE:
            self.byte()
        elif kind in (_I16, _I32, _I64):
            self.varint()
        elif kind == _DOUBLE:
            self.skip_bytes(8)
        elif kind == _BINARY:
            self.skip_bytes(self.varint())
        elif kind in (_LIST, _SET):
            head = self.byte()
            size, element = head >> 4, head & 0x0F
            if size == 15:
                size = self.varint()
            for _ in range(size):
                if element in (_TRUE, _FALSE):
                    self.byte()
                else:
                    self.skip(element, depth + 1)
        elif kind == _MAP:
            size = self.varint()
            if size:
                types = self.byte()
                for _ in range(size):
                    self.skip(types >> 4, depth + 1)
                    self.skip(types & 0x0F, depth + 1)
        elif kind == _STRUCT:
            self.fields(depth + 1)
        else:
            raise self.problem(f"an unknown field type {kind} in a page header")

    def fields(self, depth: int = 0, wanted: tuple[int, ...] = ()) -> dict[int, int]:
        """Skip a struct's fields, returning the integer ones whose ids are `wanted`."""
        found: dict[int, int] = {}
        field = 0
        while True:
            head = self.byte()
            kind = head & 0x0F
            if kind == _STOP:
                return found
            delta = head >> 4
            field = field + delta if delta else self.zigzag()
            if field in wanted and kind in (_I16, _I32, _I64):
                found[field] = self.zigzag()
            else:
                self.skip(kind, depth)


def check_pages(name: str, handle: IO[bytes], parquet: Any, columns: list[str]) -> None:
    """Refuse (naming the file, row group and page) a page of a column in `columns` whose
    declared uncompressed size is over MAX_PAGE_BYTES, before any page is decompressed."""
    metadata = parquet.metadata
    schema = [metadata.schema.column(i).path for i in range(metadata.num_columns)]
    indices = [i for i, path in enumerate(schema) if path.split(".")[0] in columns]
    position = handle.tell()
    try:
        for group in range(metadata.num_row_groups):
            for index in indices:
                chunk = metadata.row_group(group).column(index)
                # A page never starts inside the leading magic: an offset of 0 means none (pyarrow
                # writes data_page_offset 0 for a column chunk of no rows, beside its dictionary page).
                offsets = [chunk.data_page_offset] + ([chunk.dictionary_page_offset] if chunk.has_dictionary_page else [])
                offsets = [offset for offset in offsets if offset and offset >= len(b"PAR1")]
                if not offsets:
                    continue
                start = min(offsets)
                end, page = start + chunk.total_compressed_size, 0
                while start < end:
                    reader = _Thrift(handle, start, name, f"row group {group}, column {schema[index]}, page {page} "
                                                          f"at byte {start:,}")
                    sizes = reader.fields(wanted=(2, 3))
                    if 2 not in sizes or 3 not in sizes or sizes[2] < 0 or sizes[3] < 0:
                        raise reader.problem("a page header without its sizes")
                    if sizes[2] > MAX_PAGE_BYTES:
                        raise CorpusError(f"{name}: row group {group}, column {schema[index]}: a page of "
                                          f"{sizes[2]:,} bytes uncompressed (at byte {start:,}); fertility reads "
                                          f"pages of at most {human(MAX_PAGE_BYTES)} (a cell is at most "
                                          f"{human(MAX_DOCUMENT_BYTES)}: split the document)")
                    start = reader.position + sizes[3]
                    page += 1
    finally:
        handle.seek(position)
