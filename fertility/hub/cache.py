"""What the caches hold: where a branch pointed (the hub cache's own `refs/` layout) and which files a
finished download gave (a manifest per commit and file patterns, in fertility's cache), so that a
repository fetched once is used again with no request, and a half-finished download never passes
for a whole one."""

from __future__ import annotations

import hashlib
import json
import os
from fnmatch import fnmatch
from pathlib import Path

import regex

COMMIT = regex.compile(r"^[0-9a-f]{40}$")


def cached_commit(storage: Path, revision: str | None, *, ask_hub: bool) -> str | None:
    """The commit to look for in the cache: a full hash as given; for the bare id the one the
    cache holds for main; for a branch or tag, only offline (online the hub says where it is)."""
    if revision is not None and COMMIT.match(revision):
        return revision
    if revision is not None and ask_hub:
        return None
    try:
        ref = (storage / "refs" / (revision or "main")).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return ref if COMMIT.match(ref) else None


def files_below(folder: Path) -> list[str]:
    if not folder.is_dir():
        return []
    return [p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()]


def matches(path: str, patterns: tuple[str, ...], ignore: tuple[str, ...]) -> bool:
    return any(fnmatch(path, p) for p in patterns) and not any(fnmatch(path, p) for p in ignore)


def _manifest_path(repo_type: str, repo_id: str, commit: str, patterns: tuple[str, ...]) -> Path:
    from fertility.caches import cache_dir

    key = hashlib.sha256("\0".join(patterns).encode()).hexdigest()[:16]
    return cache_dir() / "hub" / f"{repo_type}s--{repo_id.replace('/', '--')}" / commit / f"{key}.json"


def write_manifest(repo_type: str, repo_id: str, commit: str, patterns: tuple[str, ...],
                    files: tuple[str, ...]) -> None:
    """Which files a finished download of these patterns gave (a cache that cannot be written
    only costs a request next time)."""
    path = _manifest_path(repo_type, repo_id, commit, patterns)
    record = {"repo": repo_id, "type": repo_type, "commit": commit, "patterns": list(patterns), "files": list(files)}
    write_atomic(path, json.dumps(record, indent=1).encode())


def write_atomic(path: Path, data: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temporary.write_bytes(data)
        os.replace(temporary, path)
    except OSError:
        pass


def write_ref(storage: Path, revision: str, commit: str) -> None:
    """Record where the branch pointed, in the hub cache's own layout (refs/<branch> holds the
    commit), as huggingface_hub does when it resolves a branch itself."""
    ref = storage / "refs" / revision
    try:
        if ref.read_text(encoding="utf-8").strip() == commit:
            return
    except (OSError, UnicodeDecodeError):
        pass
    write_atomic(ref, commit.encode())


def complete_files(repo_type: str, repo_id: str, commit: str, storage: Path,
                    patterns: tuple[str, ...]) -> tuple[str, ...] | None:
    """The files of a complete cached download, else None. Literal names are complete when all
    are there; wildcards need the manifest of a finished download."""
    folder = storage / "snapshots" / commit
    if not any(ch in p for p in patterns for ch in "*?["):
        return patterns if all((folder / p).is_file() for p in patterns) else None
    try:
        record = json.loads(_manifest_path(repo_type, repo_id, commit, patterns).read_text(encoding="utf-8"))
        files = tuple(record["files"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return files if all((folder / p).is_file() for p in files) else None
