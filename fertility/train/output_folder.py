"""The folder `retrain` and `extend` write: `tokenizer.json` and its record `training.json`.

`tokenizer.json` loads with `tokenizers.Tokenizer.from_file` and
`transformers.PreTrainedTokenizerFast`; `training.json` says how it was made. A new folder is
written under a hidden sibling name and renamed into place, so an interrupted run leaves nothing
half-written; an existing output is never replaced without force, and force replaces only these
two files, so a user's own files are never lost.
"""

from __future__ import annotations

import os
import secrets
import shutil
from pathlib import Path

from fertility.errors import OutputError
from fertility.io.output import check_folder_writable, folder_of, make_folder, replace_files
from fertility.results import contract

TOKENIZER_FILE = "tokenizer.json"
RECORD_FILE = "training.json"
OUR_FILES = (TOKENIZER_FILE, RECORD_FILE)  # all that --force may replace in an output folder


def check_output(output: Path, *, force: bool) -> None:
    """Fail before hours of training, not after; `--force` replaces only what fertility wrote."""
    if output.exists() and not output.is_dir():
        raise OutputError(f"{output}: exists and is not a folder")
    if not output.is_dir():
        if output.is_symlink():
            raise OutputError(f"{output}: is a dangling link; give a folder")
        check_folder_writable(folder_of(output), what=output, role="parent folder")
        return
    try:
        entries = sorted(output.iterdir())
    except OSError as err:
        raise OutputError(f"{output}: cannot list the folder ({err.strerror})") from None
    foreign = [p.name for p in entries if p.name not in OUR_FILES or not p.is_file() or p.is_symlink()]
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise OutputError(f"{output}: holds files fertility did not write ({shown}); "
                          "it is never emptied: give a new or empty folder")
    if entries and not force:
        raise OutputError(f"{output}: already holds {', '.join(p.name for p in entries)}; "
                          "pass --force to replace them")
    if not os.access(output, os.W_OK | os.X_OK):
        raise OutputError(f"{output}: folder is not writable")


def write_folder(tokenizer_json: str, record: dict, output: Path, *, force: bool, schema: str = "retrain") -> None:
    """A new folder is filled under a hidden name and renamed into place; an existing one (only
    ever holding our two files, checked again now) gets each file replaced atomically.
    `record` is training.json, of the `schema` it is stamped with (retrain or extend)."""
    text = contract.dump(schema, record)
    files = [(TOKENIZER_FILE, lambda path: path.write_text(tokenizer_json, encoding="utf-8")),
             (RECORD_FILE, lambda path: path.write_text(text, encoding="utf-8"))]
    check_output(output, force=force)
    if output.is_dir():
        replace_files(output, files)
        return
    staging = folder_of(output) / f".{output.name}.{secrets.token_hex(4)}.tmp"
    make_folder(staging)
    try:
        replace_files(staging, files)
        _move_into_place(staging, output)
    finally:
        if staging.exists():
            shutil.rmtree(staging)


def _move_into_place(staging: Path, output: Path) -> None:
    try:
        staging.rename(output)  # fails if a folder appeared there meanwhile: nothing is replaced
    except OSError as err:
        raise OutputError(f"{output}: cannot move the new tokenizer into place ({err.strerror}); "
                          f"nothing was replaced") from None
