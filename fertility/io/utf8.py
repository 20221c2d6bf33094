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


# Byte order marks of the encodings a "Unicode" text file is most often saved in besides UTF-8,
# longest first (UTF-32-LE's begins with UTF-16-LE's).
_WIDE_MARKS = ((b"\xff\xfe\x00\x00", "UTF-32-LE"), (b"\x00\x00\xfe\xff", "UTF-32-BE"),
               (b"\xff\xfe", "UTF-16-LE"), (b"\xfe\xff", "UTF-16-BE"))


# The high bytes of UTF-16 and UTF-32 text below U+2000: NUL and the C0 controls (Cyrillic is
# U+04xx, Devanagari U+09xx: a tab), which UTF-8 text, tab aside, hardly ever holds; line feed
# and carriage return are left out, being common in text.
_FILLER = bytes(b for b in range(0x20) if b not in (0x0A, 0x0D))


def check_not_wide(path: Path | str, head: bytes) -> None:
    """Refuse a file that begins as UTF-16 or UTF-32 text does (`head`: its first bytes). With a
    byte order mark it fails as UTF-8 anyway, but without one, Latin text in UTF-16 is valid
    UTF-8 with a NUL after every letter: it was counted, twice its bytes, as text, and Cyrillic
    or Arabic with a 04 or 06 after every letter the same. A lane of bytes that are mostly NUL
    or control bytes (some NUL: the spaces and digits) beside one that holds almost none is that
    pattern; a run of NUL (NUL in every lane) is text fertility reads."""
    for mark, name in _WIDE_MARKS:
        if head.startswith(mark):
            raise CorpusError(f"{path}: {name} text (it starts with the byte order mark {mark.hex(' ')}), not valid UTF-8; "
                              f"convert the file to UTF-8, e.g. with iconv -f {name.replace('-LE', '').replace('-BE', '')} "
                              "-t UTF-8")
    for width, name in ((2, "UTF-16"), (4, "UTF-32")):
        lanes = [head[lane::width] for lane in range(width)]
        if len(lanes[-1]) < 4:
            return
        nul = [lane.count(0) / len(lane) for lane in lanes]
        filler = [1 - len(lane.translate(None, _FILLER)) / len(lane) for lane in lanes]
        text, *others = sorted(range(width), key=filler.__getitem__)  # the lane with the fewest
        # (Devanagari's low bytes are controls up to a third of the time: U+0915 is 15 09)
        if nul[text] <= 0.02 and all(filler[k] >= 0.5 and nul[k] >= 0.01 and filler[text] <= filler[k] / 2
                                     for k in others):
            order = "LE" if text == 0 else "BE"
            raise CorpusError(f"{path}: looks like {name}-{order} text without a byte order mark (every "
                              f"{'other' if width == 2 else 'fourth'} byte is text, the rest mostly NUL or control bytes), not UTF-8; "
                              f"convert the file to UTF-8, e.g. with iconv -f {name}{order} -t UTF-8")


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
    check_not_wide(path, data[:1 << 16])
    return decode_strict(Path(path), data)
