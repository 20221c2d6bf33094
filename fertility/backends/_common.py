"""Helpers shared by backends: native library errors as one line, display names of files."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fertility.errors import NOT_NATIVE, TokenizerError


@contextmanager
def native_errors(source: object) -> Iterator[None]:
    """Turn a native library's failure on a corrupt file into a TokenizerError naming it.

    pyo3 panics (`PanicException`) derive from BaseException, and `tokenizers` raises bare
    `Exception`: neither is a bug of ours, and neither may pass for a failed threshold.
    """
    try:
        yield
    except NOT_NATIVE:
        raise
    except Exception as err:
        if type(err) is not Exception:  # a typed error: ours or Python's, not the Rust side's
            raise
        raise TokenizerError(f"{source}: the tokenizer library failed ({_first_line(err)}); "
                             "the file is probably corrupt") from None
    except BaseException as err:  # noqa: BLE001 - pyo3 PanicException derives from BaseException
        raise TokenizerError(f"{source}: the tokenizer library panicked ({_first_line(err)}); "
                             "the file is corrupt or inconsistent") from None


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return f"{type(err).__name__}: {text.splitlines()[0]}" if text else type(err).__name__


_GENERIC_FILES = {"tokenizer.json", "tokenizer.model", "spiece.model", "sentencepiece.bpe.model"}
_GENERIC_DIRS = {"model", "models", "tokenizer", "snapshots", ""}


def display_name(path: Path) -> str:
    """A short, recognisable name: for `x/tokenizer.json` the nearest telling folder name.

    Hub cache paths (`models--org--name/snapshots/<sha>/tokenizer.json`) give `org/name`.
    """
    if path.name not in _GENERIC_FILES:
        return path.name
    for parent in path.absolute().parents:  # not resolve(): hub snapshots symlink into blobs/
        name = parent.name
        if name.startswith("models--"):
            return name.removeprefix("models--").replace("--", "/")
        if name not in _GENERIC_DIRS and not (len(name) == 40 and all(c in "0123456789abcdef" for c in name)):
            return name
    return path.name
