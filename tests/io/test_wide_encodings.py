"""Text saved as UTF-16 or UTF-32. With a byte order mark it failed as UTF-8 at byte ff; without
one, Latin text in UTF-16 is valid UTF-8 with a NUL after every letter, and was counted (twice
its bytes, a NUL "line" after each newline) with exit 0. Both are refused in one line that names
the encoding; a run of NUL in a UTF-8 file is still read as text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fertility.cli import cli

ENG = "The river market opens at dawn.\nBoats arrive.\n"
FRA = "Le marché ouvre à l'aube.\nLes bateaux arrivent.\n"
AUDIT = ["audit", "-q", "--no-findings", "-f", "json", "-t", "bytes"]


@pytest.mark.parametrize("text, codec, message", [
    (ENG, "utf-16-le", "looks like UTF-16-LE text without a byte order mark"),
    (ENG, "utf-16-be", "looks like UTF-16-BE text without a byte order mark"),
    (FRA, "utf-16-le", "looks like UTF-16-LE text without a byte order mark"),
    (ENG, "utf-32-le", "looks like UTF-32-LE text without a byte order mark"),
    (ENG, "utf-32-be", "looks like UTF-32-BE text without a byte order mark"),
    (ENG, "utf-16", "UTF-16-LE text (it starts with the byte order mark ff fe), not valid UTF-8"),
    (ENG, "utf-32", "UTF-32-LE text (it starts with the byte order mark ff fe 00 00), not valid UTF-8"),
], ids=["utf16le", "utf16be", "utf16le-accents", "utf32le", "utf32be", "utf16-bom", "utf32-bom"])
def test_wide_text_is_refused_by_name(text: str, codec: str, message: str, tmp_path: Path) -> None:
    path = tmp_path / "eng_Latn.txt"
    path.write_bytes(text.encode(codec))
    if text == ENG and codec in ("utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"):
        path.read_bytes().decode("utf-8")  # the trap: valid UTF-8
    for args, name in (([str(path)], str(path)), (["-", "--lang", "eng_Latn"], "-")):
        result = CliRunner().invoke(cli, [*AUDIT, *args], input=path.read_bytes() if args[0] == "-" else None)
        assert result.exit_code == 2, result.stdout
        assert result.stderr.startswith(f"fertility: error: {name}: {message}"), result.stderr
        assert "convert the file to UTF-8" in result.stderr and len(result.stderr.splitlines()) == 1


def test_runs_of_nul_in_utf8_are_still_text(tmp_path: Path) -> None:
    path = tmp_path / "eng_Latn.txt"
    lines = [b"\0" * 100, b"a\0" * 3 + b"b", "নদী".encode() + b"\0\0"]
    path.write_bytes(b"\n".join(lines) + b"\n")
    result = CliRunner().invoke(cli, [*AUDIT, str(path)])
    assert result.exit_code == 0, result.stderr
    row = json.loads(result.stdout)["rows"][0]
    assert (row["n_docs"], row["n_bytes"]) == (3, sum(map(len, lines)))


def test_show_refuses_wide_text_too(tmp_path: Path) -> None:
    path = tmp_path / "line.txt"
    path.write_bytes(ENG.encode("utf-16-le"))
    result = CliRunner().invoke(cli, ["show", "-t", "bytes", "--file", str(path)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"fertility: error: {path}: looks like UTF-16-LE text without a byte order mark")


SAMPLES = Path(__file__).parents[2] / "corpora_samples"


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
def test_no_sample_language_in_a_wide_encoding_is_counted(codec: str, tmp_path: Path) -> None:
    """Every bundled language saved in UTF-16 or UTF-32 without a mark is refused, by name or as
    not UTF-8. Cyrillic (U+04xx) and Arabic (U+06xx) in UTF-16 are valid UTF-8 with a 04 or 06
    after every letter, and Devanagari's high byte is a tab: a test of NUL alone counted them."""
    refused = {}
    for sample in sorted(SAMPLES.glob("*.txt")):
        path = tmp_path / sample.name
        path.write_bytes(sample.read_text(encoding="utf-8").encode(codec))
        result = CliRunner().invoke(cli, [*AUDIT, str(path)])
        assert result.exit_code == 2, (sample.name, result.stdout[:200])
        assert len(result.stderr.splitlines()) == 1
        refused[sample.stem] = "without a byte order mark" in result.stderr
    assert refused["rus_Cyrl"] and refused["arb_Arab"] and refused["hin_Deva"] and refused["eng_Latn"]


def test_every_bundled_sample_in_utf8_passes_the_wide_check() -> None:
    """The other side: UTF-8 text of every bundled script, from any offset, is never taken for a
    wide encoding."""
    from fertility.io.utf8 import check_not_wide

    for sample in sorted(SAMPLES.glob("*.txt")):
        data = sample.read_bytes()
        for start in range(0, len(data), 97):
            for size in (8, 64, 1 << 16):
                check_not_wide(sample, data[start:start + size])
