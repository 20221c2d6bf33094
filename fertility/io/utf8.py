"""Strict UTF-8: a corpus byte that is not UTF-8 fails with file, line and column.

Replacing a bad byte (`errors="replace"`) would change the very byte and character counts being
measured. The text-file reader decodes its blocks itself and comes here for the message when a
block fails; `show --file` reads a whole file through here.
"""

from __future__ import annotations

from pathlib import Path

from fertility.errors import CorpusError
from fertility.limits import MAX_DOCUMENT_BYTES, human


def decode_strict(path: Path | str, data: bytes, *, first_line: int = 1, first_column: int = 1) -> str:
    """UTF-8 without replacement; the error names the line and column of the bad byte
    (`first_line`: the number of the first line in `data`; `first_column`: the column `data`
    starts at, when it continues a line)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line_start = data.rfind(b"\n", 0, err.start) + 1
        line = data.count(b"\n", 0, err.start) + first_line
        column = len(data[line_start:err.start].decode("utf-8", errors="replace")) + \
            (first_column if line_start == 0 else 1)
        bad = data[err.start:err.end].hex(" ")
        raise CorpusError(f"{path}:{line}:{column}: not valid UTF-8 (byte {bad}: {err.reason}); "
                          "convert the file to UTF-8, e.g. with iconv") from None
    return text.removeprefix("\ufeff")


def read_text_file(path: Path) -> str:
    """A whole file as strict UTF-8 (for `show --file`), with the same errors as corpora; at
    most MAX_DOCUMENT_BYTES, read in one go even from a pipe (`show` holds the text whole)."""
    try:
        with Path(path).open("rb") as handle:
            data = handle.read(MAX_DOCUMENT_BYTES + 1)
    except OSError as err:
        raise CorpusError(f"{path}: cannot read ({err.strerror})") from None
    if len(data) > MAX_DOCUMENT_BYTES:
        raise CorpusError(f"{path}: over {human(MAX_DOCUMENT_BYTES)}; `show` displays a text whole "
                          "(audit a corpus of that size instead)")
    return decode_strict(Path(path), data)
