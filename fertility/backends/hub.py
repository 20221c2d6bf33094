"""The Hugging Face hub: tokenizers by repository id (`org/name[@revision]`), and the downloads the
named corpora share.

Files come through `huggingface_hub` into its own cache (`$HF_HUB_CACHE`, `$HF_HOME/hub`), which
honours `HF_TOKEN` and `HF_ENDPOINT`; fertility adds what an audit needs on top:
- only the files asked for (a tokenizer's files, never weights: the patterns below);
- a repository fetched once is used from the cache without a request: the bare id takes the commit
  the cache holds for `main`, `@<commit>` that commit; `@main` or another branch asks the hub again.
  Which files made up a download is recorded in fertility's cache (a manifest per commit and file
  patterns), so a half-finished download is never taken for a whole one;
- offline (`--offline`, `HF_HUB_OFFLINE=1`) only the cache is read, as before this module existed;
- one line per failure (gated, missing, no network, no tokenizer file), naming the repository and
  the fix, and a bounded wait when the hub does not answer.
The settings are read when a download happens, not when a library is imported, so a process
that changes `HF_ENDPOINT` or `HF_HUB_OFFLINE` is heard.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path
from typing import TYPE_CHECKING, Any

import regex

from ..errors import FertilityError, FertilityWarning, TokenizerError

if TYPE_CHECKING:
    from . import Tokenizer

DEFAULT_ENDPOINT = "https://huggingface.co"
# A tokenizer's files at the top of a model repository: what the backends read, what
# transformers reads beside them (config.json names the tokenizer class of old repositories).
# Weights (.safetensors, .bin, .pth, .gguf ...) match none of them.
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json",
                   "vocab.json", "merges.txt", "vocab.txt", "tekken.json", "*.model", "*.model.v*",
                   "*.tiktoken", "config.json")
TOP_LEVEL_ONLY = ("*/*",)  # a model folder's tokenizer sits at its top; subfolders hold other parts
_REPO = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9_-])?"
# a branch, tag or commit; `refs/pr/1` has slashes, but no part may climb out of the cache (`..`)
REVISION = r"[A-Za-z0-9][A-Za-z0-9._-]*(?:/[A-Za-z0-9][A-Za-z0-9._-]*)*"
_HUB_ID = regex.compile(rf"^(?P<repo>{_REPO}/{_REPO})(?:@(?P<revision>{REVISION}))?$")
COMMIT = regex.compile(r"^[0-9a-f]{40}$")
# Names that are file paths, not repositories: `models/tokenizer.json` that does not exist is a
# missing file, not a hub id.
_FILE_SUFFIXES = (".json", ".model", ".tiktoken", ".gguf", ".txt", ".jsonl", ".parquet", ".arrow")


@dataclass(frozen=True)
class HubSettings:
    """Per call: cache only (`--offline`), and whether huggingface_hub may draw its progress bars
    (None: when stderr is a terminal)."""

    offline: bool = False
    progress: bool | None = None


_SETTINGS: ContextVar[HubSettings | None] = ContextVar("fertility_hub_settings", default=None)


def current_settings() -> HubSettings:
    return _SETTINGS.get() or HubSettings()


@contextmanager
def hub_settings(*, offline: bool = False, progress: bool | None = None) -> Iterator[HubSettings]:
    """Use these settings for every hub access inside the block (the CLI wraps each command)."""
    settings = HubSettings(offline=offline, progress=progress)
    token = _SETTINGS.set(settings)
    try:
        yield settings
    finally:
        _SETTINGS.reset(token)


def offline_reason() -> str | None:
    """Why only the cache may be read, or None when the hub may be asked."""
    if current_settings().offline:
        return "--offline"
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        return "HF_HUB_OFFLINE is set"
    return None


def endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def hub_cache_dir() -> Path:
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    home = Path(os.environ.get("HF_HOME", Path.home() / ".cache" / "huggingface"))
    return home / "hub"


def request_timeout() -> float:
    """Seconds to wait for the hub's first answer: huggingface_hub itself waits forever there."""
    try:
        return float(os.environ.get("HF_HUB_ETAG_TIMEOUT") or 10)
    except ValueError:
        return 10.0


def parse_hub_id(text: str) -> tuple[str, str | None] | None:
    """`org/name@rev` -> (`org/name`, `rev`); None when `text` is not shaped like a hub id."""
    match = _HUB_ID.match(text)
    if not match or "--" in match["repo"] or ".." in match["repo"]:
        return None
    if match["repo"].lower().endswith(_FILE_SUFFIXES):
        return None
    return match["repo"], match["revision"]


def page_url(repo_id: str, repo_type: str) -> str:
    return f"{endpoint()}/{'datasets/' if repo_type == 'dataset' else ''}{repo_id}"


@dataclass(frozen=True)
class Snapshot:
    """Files of one commit of a repository, on disk in the hub cache."""

    repo_id: str
    repo_type: str
    revision: str | None  # as asked (None: the bare id)
    commit: str
    folder: Path
    files: tuple[str, ...]  # paths inside the repository, in order
    from_cache: bool
    endpoint: str = field(default_factory=endpoint)

    def describe(self) -> dict[str, str]:
        """Signature fragment: what to pin for an exact rerun."""
        return {"repo": self.repo_id, "revision": self.revision or "main",
                "commit": self.commit, "endpoint": self.endpoint}


def fetch(repo_id: str, *, patterns: tuple[str, ...], repo_type: str = "model", revision: str | None = None,
          ignore: tuple[str, ...] = (), error: type[FertilityError] = TokenizerError, what: str = "") -> Snapshot:
    """The files of `repo_id` matching `patterns`, from the cache when a complete copy is there,
    else downloaded (unless offline). Failures raise `error` with one line: `what` names the
    thing asked for (default: the repository)."""
    what = what or (repo_id + (f"@{revision}" if revision else ""))
    storage = hub_cache_dir() / f"{repo_type}s--{repo_id.replace('/', '--')}"
    commit = _cached_commit(storage, revision, ask_hub=offline_reason() is None)
    if commit is not None:
        files = _complete_files(repo_type, repo_id, commit, storage, patterns)
        if files is not None:
            return Snapshot(repo_id, repo_type, revision, commit, storage / "snapshots" / commit, files, True)
    reason = offline_reason()
    if reason is not None:
        return _from_cache_only(repo_id, repo_type, revision, storage, patterns, ignore, error, what, reason)
    try:
        folder = _download(repo_id, repo_type, revision, commit, patterns, ignore, error, what)
    except _Unreachable as unreachable:  # no network: what the cache holds, if anything, said once
        try:
            cached = _from_cache_only(repo_id, repo_type, revision, storage, patterns, ignore, error, what,
                                      "the hub cannot be reached")
        except FertilityError:
            raise unreachable.error from None
        warnings.warn(f"{what}: cannot reach the hub at {endpoint()}; using what the cache holds (commit "
                      f"{cached.commit[:12]})", FertilityWarning, stacklevel=2)
        return cached
    commit = folder.name
    files = tuple(sorted(p for p in _files_below(folder) if _matches(p, patterns, ignore)))
    if revision is None or not COMMIT.match(revision):
        write_ref(storage, revision or "main", commit)
    _write_manifest(repo_type, repo_id, commit, patterns, files)
    return Snapshot(repo_id, repo_type, revision, commit, folder, files, False)


def _cached_commit(storage: Path, revision: str | None, *, ask_hub: bool) -> str | None:
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


def _files_below(folder: Path) -> list[str]:
    if not folder.is_dir():
        return []
    return [p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()]


def _matches(path: str, patterns: tuple[str, ...], ignore: tuple[str, ...]) -> bool:
    return any(fnmatch(path, p) for p in patterns) and not any(fnmatch(path, p) for p in ignore)


def _manifest_path(repo_type: str, repo_id: str, commit: str, patterns: tuple[str, ...]) -> Path:
    from ..profiles import cache_dir

    key = hashlib.sha256("\0".join(patterns).encode()).hexdigest()[:16]
    return cache_dir() / "hub" / f"{repo_type}s--{repo_id.replace('/', '--')}" / commit / f"{key}.json"


def _write_manifest(repo_type: str, repo_id: str, commit: str, patterns: tuple[str, ...],
                    files: tuple[str, ...]) -> None:
    """Which files a finished download of these patterns gave (a cache that cannot be written
    only costs a request next time)."""
    path = _manifest_path(repo_type, repo_id, commit, patterns)
    record = {"repo": repo_id, "type": repo_type, "commit": commit, "patterns": list(patterns), "files": list(files)}
    _write_atomic(path, json.dumps(record, indent=1).encode())


def _write_atomic(path: Path, data: bytes) -> None:
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
    _write_atomic(ref, commit.encode())


def _complete_files(repo_type: str, repo_id: str, commit: str, storage: Path,
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


def _from_cache_only(repo_id: str, repo_type: str, revision: str | None, storage: Path, patterns: tuple[str, ...],
                     ignore: tuple[str, ...], error: type[FertilityError], what: str, reason: str) -> Snapshot:
    """Offline: whatever the cache holds for that revision (also files other tools downloaded)."""
    from huggingface_hub import snapshot_download

    try:
        folder = Path(snapshot_download(
            repo_id, repo_type=repo_type, revision=revision, cache_dir=hub_cache_dir(), allow_patterns=list(patterns),
            ignore_patterns=list(ignore) or None, local_files_only=True))
    except (OSError, ValueError) as err:  # LocalEntryNotFoundError and its kin: nothing usable cached
        scanned = _scanned_snapshot(repo_id, repo_type, revision)
        if scanned is None:
            raise error(f"{what}: not in the local Hugging Face cache ({hub_cache_dir()}) and offline ({reason}); "
                        "run once where the hub is reachable, without --offline and HF_HUB_OFFLINE, "
                        f"to download it{_why(err)}") from None
        folder = scanned
    files = tuple(sorted(p for p in _files_below(folder) if _matches(p, patterns, ignore)))
    return Snapshot(repo_id, repo_type, revision, folder.name, folder, files, True)


def _why(err: BaseException) -> str:
    return " (the cached copy is incomplete)" if type(err).__name__ == "IncompleteSnapshotError" else ""


def _scanned_snapshot(repo_id: str, repo_type: str, revision: str | None) -> Path | None:
    """A cached model snapshot holding a tokenizer, found by `huggingface_hub.scan_cache_dir`
    when no ref names one (caches copied by hand): the one main points to first, then newest."""
    if repo_type != "model" or revision is not None:
        return None
    from huggingface_hub import scan_cache_dir

    from . import folder_tokenizer

    try:
        cache = scan_cache_dir(hub_cache_dir())
    except Exception:  # noqa: BLE001 - CacheNotFound, or a cache it cannot read: nothing cached
        return None
    for repo in cache.repos:
        if repo.repo_id == repo_id and repo.repo_type == "model":
            for found in sorted(repo.revisions, key=lambda r: ("main" not in r.refs, -r.last_modified)):
                if folder_tokenizer(Path(found.snapshot_path)) is not None:
                    return Path(found.snapshot_path)
    return None


def _download(repo_id: str, repo_type: str, revision: str | None, commit: str | None, patterns: tuple[str, ...],
              ignore: tuple[str, ...], error: type[FertilityError], what: str) -> Path:
    """Ask the hub (bounded wait), then let huggingface_hub download the matching files."""
    from huggingface_hub import HfApi, snapshot_download

    try:  # the first question has a deadline: huggingface_hub would wait forever for a silent server
        info = HfApi(endpoint=endpoint()).repo_info(repo_id, repo_type=repo_type,
                                                   revision=commit or revision or "main", timeout=request_timeout())
        with _progress_bars(), _quiet_hub_warnings():
            return Path(snapshot_download(repo_id, repo_type=repo_type, revision=str(info.sha),
                                          cache_dir=hub_cache_dir(), allow_patterns=list(patterns),
                                          ignore_patterns=list(ignore) or None, endpoint=endpoint()))
    except FertilityError:
        raise
    except Exception as err:  # noqa: BLE001 - translate() re-raises what is not the hub's or the network's
        translated = translate(err, repo_id=repo_id, repo_type=repo_type, revision=revision, error=error, what=what)
        if is_unreachable(err):
            raise _Unreachable(translated) from None
        raise translated from None


class _Unreachable(Exception):
    """The hub could not be asked (network): the cache may still serve."""

    def __init__(self, error: FertilityError):
        super().__init__(str(error))
        self.error = error


def is_unreachable(err: BaseException) -> bool:
    from huggingface_hub.utils import LocalEntryNotFoundError

    return isinstance(err, (*network_errors(), LocalEntryNotFoundError)) or isinstance(err.__cause__, network_errors())


def translate(err: Exception, *, repo_id: str, repo_type: str, revision: str | None, error: type[FertilityError],
              what: str) -> FertilityError:
    """huggingface_hub's (and the network's) failures as one line naming the fix; anything else
    is re-raised (a bug, reported with its traceback)."""
    from huggingface_hub.utils import (
        GatedRepoError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    kind = "dataset" if repo_type == "dataset" else "model"
    token = " (HF_TOKEN is set, but its account has no access yet)" if os.environ.get("HF_TOKEN") else ""
    if isinstance(err, GatedRepoError):
        return error(f"{what}: {repo_id} is a gated {kind}: accept its terms at {page_url(repo_id, repo_type)} "
                     f"(logged in), then set HF_TOKEN to an access token of that account{token}")
    if isinstance(err, RevisionNotFoundError):
        return error(f"{what}: the hub has no revision {revision!r} of {repo_id} (a branch, tag or full commit hash)")
    if isinstance(err, RepositoryNotFoundError):
        private = "; if it is private, set HF_TOKEN" if not token else ""
        return error(f"{what}: no such local file or folder, and {endpoint()} has no {kind} repository {repo_id}"
                     + (f" at revision {revision!r}" if revision else "") + private)
    network = network_errors()
    cause = err.__cause__ if isinstance(err, LocalEntryNotFoundError) and err.__cause__ is not None else err
    if isinstance(cause, network) or isinstance(err, LocalEntryNotFoundError):
        return error(f"{what}: cannot reach the hub at {endpoint()} ({first_line(cause)}) and it is not in the "
                     f"local cache ({hub_cache_dir()}); check the network or HF_ENDPOINT, or give a local path")
    if isinstance(err, HfHubHTTPError):
        status = getattr(getattr(err, "response", None), "status_code", "?")
        return error(f"{what}: the hub at {endpoint()} answered HTTP {status} for {repo_id} ({first_line(err)})")
    if isinstance(err, OSError):  # the cache folder: not writable, not a folder, disk full
        return error(f"{what}: cannot write the Hugging Face cache {hub_cache_dir()} ({err.strerror or err}); "
                     "set HF_HUB_CACHE to a writable folder")
    raise err


def network_errors() -> tuple[type[BaseException], ...]:
    """Transport failures of whichever HTTP library huggingface_hub uses here (already imported)."""
    import socket
    import urllib.error

    kinds: list[type[BaseException]] = [ConnectionError, TimeoutError, socket.timeout, urllib.error.URLError]
    for module, names in (("httpx2", ("TransportError",)), ("httpx", ("TransportError",)),
                          ("requests", ("ConnectionError", "Timeout"))):
        loaded = sys.modules.get(module)
        kinds += [getattr(loaded, name) for name in names if loaded is not None and hasattr(loaded, name)]
    return tuple(kinds)


def first_line(err: BaseException) -> str:
    text = str(err).strip()
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return f"{type(err).__name__}: {line[:160]}" if line else type(err).__name__


@contextmanager
def _progress_bars() -> Iterator[None]:
    """huggingface_hub's bars on stderr only when it is a terminal and the user did not ask -q."""
    from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars

    wanted = current_settings().progress
    show = (wanted is None or wanted) and sys.stderr.isatty()
    switch = not show and not are_progress_bars_disabled()
    if switch:
        disable_progress_bars()
    try:
        yield
    finally:
        if switch:
            enable_progress_bars()


@contextmanager
def _quiet_hub_warnings() -> Iterator[None]:
    """huggingface_hub logs "No files matched" when a pattern finds nothing; we say it ourselves."""
    import logging

    hub_logger = logging.getLogger("huggingface_hub")
    level = hub_logger.level
    hub_logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        hub_logger.setLevel(level)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# --- tokenizers by repository id -----------------------------------------------------------------

class Described:
    """A loaded tokenizer under another name, with more in its signature (where it came from);
    everything else is the loaded tokenizer's own."""

    def __init__(self, inner: Tokenizer, *, name: str, extra: dict[str, Any]):
        self.inner, self.name, self.extra = inner, name, extra

    def __getattr__(self, attribute: str):
        if attribute == "inner":  # not set yet (unpickling): no recursion
            raise AttributeError(attribute)
        return getattr(self.inner, attribute)

    def encode(self, texts):
        return self.inner.encode(texts)

    def pre_tokenizer(self):
        return self.inner.pre_tokenizer()

    def info(self) -> dict[str, Any]:
        return {**self.inner.info(), **self.extra}


def load_from_hub(reference: str, *, spec: str, pattern: str | None = None) -> Tokenizer:
    """`org/name[@revision]`: its tokenizer files (downloaded once), loaded as a local folder is."""
    from . import folder_tokenizer, load_folder

    parsed = parse_hub_id(reference)
    if parsed is None:
        raise TokenizerError(f"{spec}: not a hub repository id (org/name, optionally @revision)")
    repo_id, revision = parsed
    snapshot = fetch(repo_id, patterns=TOKENIZER_FILES, ignore=TOP_LEVEL_ONLY, revision=revision, what=spec)
    found = folder_tokenizer(snapshot.folder)  # also a .gguf the user downloaded into that snapshot
    if found is None:
        raise TokenizerError(f"{spec}: {repo_id} holds no tokenizer file at commit {snapshot.commit[:12]} "
                             "(tokenizer.json, vocab.json + merges.txt, a SentencePiece .model, tekken.json, "
                             ".tiktoken or tokenizer_config.json); weights and .gguf files are never downloaded: "
                             "download a .gguf yourself and give its path")
    tokenizer = load_folder(snapshot.folder, spec=spec, pattern=pattern)
    files = " ".join(f"{name}:{sha256_of(snapshot.folder / name)}" for name in snapshot.files)
    extra = {f"hub_{key}": value for key, value in snapshot.describe().items()}
    extra["hub_files"] = files
    extra["hub_spec"] = f"{repo_id}@{snapshot.commit}"  # the spec of an exact rerun
    return Described(tokenizer, name=repo_id, extra=extra)
