"""Writing result files without ever clobbering or half-writing what a user owns.

Rules, checked before any work (`check_output_file`, `check_output_folder`, `check_readable`)
and applied when writing (`write_output`, `replace_files`):
- `-` is stdout;
- a symlink is followed: the link stays, its target is written;
- anything that is not a regular file (a character device such as /dev/null, a FIFO) is
  opened and written through, never replaced;
- a regular file is written atomically: a temp file in the same folder, renamed over it; an
  existing file keeps its mode (and owner when we may set it), a new one gets 0666 & ~umask;
- an existing regular file is replaced only with `force`.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from fertility.errors import InputError, OutputError

STDOUT = "-"


def is_stdout(path: Path | str | None) -> bool:
    return path is not None and str(path) == STDOUT


def _stat(path: Path) -> os.stat_result | None:
    """The target's status, following links; None when nothing is there (or a dangling link)."""
    try:
        return path.stat()
    except (FileNotFoundError, NotADirectoryError):  # the folder checks name what is missing
        return None
    except OSError as err:  # a link loop, a file where a folder is expected, no permission
        raise OutputError(f"{path}: cannot be used as an output ({err.strerror})") from None


def _target(path: Path) -> Path:
    """Where writing `path` lands: a symlink's (final) target, else the path itself."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def folder_of(path: Path) -> Path:
    return path.parent if str(path.parent) else Path(".")


def check_folder_writable(folder: Path, *, what: Path, role: str = "folder") -> None:
    try:
        info = folder.stat()
    except FileNotFoundError:
        raise OutputError(f"{what}: {role} {folder} does not exist") from None
    except OSError as err:
        raise OutputError(f"{what}: {role} {folder} cannot be used ({err.strerror})") from None
    if not stat.S_ISDIR(info.st_mode):
        raise OutputError(f"{what}: {folder} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"{what}: {role} {folder} is not writable")


def check_output_file(path: Path | None, *, force: bool, option: str = "--output") -> None:
    """Everything about an output file that can fail, checked before the work that fills it."""
    if path is None or is_stdout(path):
        return
    target = _target(path)
    info = _stat(target)
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise OutputError(f"{path}: is a folder; give a file name for {option}")
    if info is not None and not stat.S_ISREG(info.st_mode):  # a device or FIFO: written through
        if not os.access(target, os.W_OK):
            raise OutputError(f"{path}: is not writable")
        return
    if info is not None and not force:
        raise OutputError(f"{path}: already exists; pass --force to overwrite it")
    check_folder_writable(folder_of(target), what=path)


def check_readable(paths: Iterable[Path], *, option: str) -> None:
    """Input files/folders named by an option exist and can be read (a cheap check, no reading)."""
    for path in paths:
        if not path.exists():
            raise InputError(f"{path}: no such file or folder (given to {option})")
        if not os.access(path, os.R_OK | (os.X_OK if path.is_dir() else 0)):
            raise InputError(f"{path}: not readable (given to {option})")


@contextlib.contextmanager
def _temp_beside(target: Path) -> Iterator[Path]:
    """A new empty file next to `target` (same file system, so the rename is atomic), created
    with the umask's mode; removed unless it was renamed away."""
    folder = folder_of(target)
    for _ in range(100):
        temp = folder / f".{target.name}.{secrets.token_hex(4)}.tmp"
        try:
            os.close(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            break
        except FileExistsError:
            continue
    else:  # pragma: no cover - 100 random collisions
        raise OutputError(f"{target}: cannot create a temporary file in {folder}")
    try:
        yield temp
    finally:
        temp.unlink(missing_ok=True)


def _replace_regular(target: Path, fill: Callable[[Path], object], existing: os.stat_result | None) -> None:
    """Fill a temp file, give it the old file's mode (and owner) or the umask's, rename it over."""
    with _temp_beside(target) as temp:
        fill(temp)
        if existing is not None:
            os.chmod(temp, stat.S_IMODE(existing.st_mode))
            if (existing.st_uid, existing.st_gid) != (os.geteuid(), os.getegid()):
                with contextlib.suppress(OSError):  # only root may give a file away
                    os.chown(temp, existing.st_uid, existing.st_gid)
        os.replace(temp, target)


def write_output(path: Path, text: str, *, force: bool = False) -> None:
    """Write `text` to `path` under the module's rules; refuse an existing file unless forced."""
    if is_stdout(path):
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    check_output_file(path, force=force)
    target = _target(path)
    info = _stat(target)
    try:
        if info is not None and not stat.S_ISREG(info.st_mode):
            with open(target, "w", encoding="utf-8", newline="") as out:
                out.write(text)
            return
        _replace_regular(target, lambda temp: temp.write_text(text, encoding="utf-8", newline=""), info)
    except OSError as err:
        raise OutputError(f"{path}: cannot write ({err.strerror or err})") from None


def make_folder(path: Path) -> None:
    """A new folder with the umask's mode (tempfile.mkdtemp would make it 0700)."""
    try:
        path.mkdir(mode=0o777)
    except OSError as err:
        raise OutputError(f"{path}: cannot create the folder ({err.strerror})") from None


def replace_files(folder: Path, files: Sequence[tuple[str, Callable[[Path], object]]]) -> None:
    """Write each `(name, fill)` into an existing folder, one atomic rename per file."""
    for name, fill in files:
        target = folder / name
        try:
            _replace_regular(target, fill, _stat(target))
        except OSError as err:
            raise OutputError(f"{target}: cannot write ({err.strerror or err})") from None


def output_target(path: Path | None, *, force: bool, option: str = "--output") -> Path | None:
    """Checked before any work: None means stdout (no -o, or `-o -`)."""
    if path is None or is_stdout(path):
        return None
    check_output_file(path, force=force, option=option)
    return path


def check_append_target(path: Path | None, *, option: str) -> None:
    """A file we append to (a CI step summary): an existing writable file, or a new one in a
    writable folder."""
    if path is None:
        return
    target = _target(path)
    info = _stat(target)
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise OutputError(f"{path}: is a folder; give a file name for {option}")
    if info is not None:
        if not os.access(target, os.W_OK):
            raise OutputError(f"{path}: is not writable (given to {option})")
        return
    check_folder_writable(folder_of(target), what=path)
