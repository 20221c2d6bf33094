"""The Hugging Face hub: the downloads hub tokenizers (`backends/named.py`) and the named corpora share.

Files come through `huggingface_hub` into its own cache (`$HF_HUB_CACHE`, `$HF_HOME/hub`), which
honours `HF_TOKEN` and `HF_ENDPOINT`; fertility adds what an audit needs on top:
- only the files asked for (a tokenizer's files, never weights);
- a repository fetched once is used from the cache without a request: the bare id takes the commit
  the cache holds for `main`, `@<commit>` that commit; `@main` or another branch asks the hub again
  (`cache.py` keeps track of finished downloads, so a half-finished one is completed);
- offline (`--offline`, `HF_HUB_OFFLINE=1`) only the cache is read, as before downloads existed;
  without a network, the cached copy, with a warning;
- one line per failure, naming the repository and the fix (`errors.py`), and a bounded wait
  when the hub does not answer.
The settings are read when a download happens, not when a library is imported, so a process
that changes `HF_ENDPOINT` or `HF_HUB_OFFLINE` is heard.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

import regex

from fertility.errors import FertilityError, FertilityWarning, TokenizerError

from .cache import COMMIT, cached_commit, complete_files, files_below, matches, write_manifest, write_ref
from .errors import Unreachable, is_unreachable, translate
from .locations import endpoint, hub_cache_dir, request_timeout
from .responses import capped_answers

_REPO = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9_-])?"
# a branch, tag or commit; `refs/pr/1` has slashes, but no part may climb out of the cache (`..`)
REVISION = r"[A-Za-z0-9][A-Za-z0-9._-]*(?:/[A-Za-z0-9][A-Za-z0-9._-]*)*"
_HUB_ID = regex.compile(rf"^(?P<repo>{_REPO}/{_REPO})(?:@(?P<revision>{REVISION}))?$")
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


def parse_hub_id(text: str) -> tuple[str, str | None] | None:
    """`org/name@rev` -> (`org/name`, `rev`); None when `text` is not shaped like a hub id."""
    match = _HUB_ID.match(text)
    if not match or "--" in match["repo"] or ".." in match["repo"]:
        return None
    if match["repo"].lower().endswith(_FILE_SUFFIXES):
        return None
    return match["repo"], match["revision"]


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
          ignore: tuple[str, ...] = (), error: type[FertilityError] = TokenizerError, what: str = "",
          usable: Callable[[Path], bool] | None = None) -> Snapshot:
    """The files of `repo_id` matching `patterns`, from the cache when a complete copy is there,
    else downloaded (unless offline). Failures raise `error` with one line: `what` names the
    thing asked for (default: the repository). Offline, with no ref naming a cached snapshot (a
    cache copied by hand), a snapshot that `usable` accepts is taken."""
    what = what or (repo_id + (f"@{revision}" if revision else ""))
    storage = hub_cache_dir() / f"{repo_type}s--{repo_id.replace('/', '--')}"
    commit = cached_commit(storage, revision, ask_hub=offline_reason() is None)
    if commit is not None:
        files = complete_files(repo_type, repo_id, commit, storage, patterns)
        if files is not None:
            return Snapshot(repo_id, repo_type, revision, commit, storage / "snapshots" / commit, files, True)
    reason = offline_reason()
    if reason is not None:
        return _from_cache_only(repo_id, repo_type, revision, storage, patterns, ignore, error, what, reason, usable)
    try:
        folder = _download(repo_id, repo_type, revision, commit, patterns, ignore, error, what)
    except Unreachable as unreachable:  # no network: what the cache holds, if anything, said once
        try:
            cached = _from_cache_only(repo_id, repo_type, revision, storage, patterns, ignore, error, what,
                                      "the hub cannot be reached", usable)
        except FertilityError:
            raise unreachable.error from None
        warnings.warn(f"{what}: cannot reach the hub at {endpoint()}; using what the cache holds (commit "
                      f"{cached.commit[:12]})", FertilityWarning, stacklevel=2)
        return cached
    commit = folder.name
    files = tuple(sorted(p for p in files_below(folder) if matches(p, patterns, ignore)))
    if revision is None or not COMMIT.match(revision):
        write_ref(storage, revision or "main", commit)
    write_manifest(repo_type, repo_id, commit, patterns, files)
    return Snapshot(repo_id, repo_type, revision, commit, folder, files, False)


def _from_cache_only(repo_id: str, repo_type: str, revision: str | None, storage: Path, patterns: tuple[str, ...],
                     ignore: tuple[str, ...], error: type[FertilityError], what: str, reason: str,
                     usable: Callable[[Path], bool] | None) -> Snapshot:
    """Offline: whatever the cache holds for that revision (also files other tools downloaded)."""
    from huggingface_hub import snapshot_download

    try:
        folder = Path(snapshot_download(
            repo_id, repo_type=repo_type, revision=revision, cache_dir=hub_cache_dir(), allow_patterns=list(patterns),
            ignore_patterns=list(ignore) or None, local_files_only=True))
    except (OSError, ValueError) as err:  # LocalEntryNotFoundError and its kin: nothing usable cached
        scanned = _scanned_snapshot(repo_id, repo_type, revision, usable)
        if scanned is None:
            raise error(f"{what}: not in the local Hugging Face cache ({hub_cache_dir()}) and offline ({reason}); "
                        "run once where the hub is reachable, without --offline and HF_HUB_OFFLINE, "
                        f"to download it{_why(err)}") from None
        folder = scanned
    files = tuple(sorted(p for p in files_below(folder) if matches(p, patterns, ignore)))
    return Snapshot(repo_id, repo_type, revision, folder.name, folder, files, True)


def _why(err: BaseException) -> str:
    return " (the cached copy is incomplete)" if type(err).__name__ == "IncompleteSnapshotError" else ""


def _scanned_snapshot(repo_id: str, repo_type: str, revision: str | None,
                      usable: Callable[[Path], bool] | None) -> Path | None:
    """A cached model snapshot that `usable` accepts, found by `huggingface_hub.scan_cache_dir`
    when no ref names one (caches copied by hand): the one main points to first, then newest."""
    if repo_type != "model" or revision is not None or usable is None:
        return None
    from huggingface_hub import scan_cache_dir

    try:
        cache = scan_cache_dir(hub_cache_dir())
    except Exception:  # noqa: BLE001 - CacheNotFound, or a cache it cannot read: nothing cached
        return None
    for repo in cache.repos:
        if repo.repo_id == repo_id and repo.repo_type == "model":
            for found in sorted(repo.revisions, key=lambda r: ("main" not in r.refs, -r.last_modified)):
                if usable(Path(found.snapshot_path)):
                    return Path(found.snapshot_path)
    return None


def _download(repo_id: str, repo_type: str, revision: str | None, commit: str | None, patterns: tuple[str, ...],
              ignore: tuple[str, ...], error: type[FertilityError], what: str) -> Path:
    """Ask the hub (bounded wait), then let huggingface_hub download the matching files."""
    from huggingface_hub import HfApi, snapshot_download

    try:  # the first question has a deadline: huggingface_hub would wait forever for a silent server
        with capped_answers():  # and it would read an answer without end whole
            info = HfApi(endpoint=endpoint()).repo_info(repo_id, repo_type=repo_type,
                                                       revision=commit or revision or "main", timeout=request_timeout())
            with hub_progress_bars(), _quiet_hub_warnings():
                return Path(snapshot_download(repo_id, repo_type=repo_type, revision=str(info.sha),
                                              cache_dir=hub_cache_dir(), allow_patterns=list(patterns),
                                              ignore_patterns=list(ignore) or None, endpoint=endpoint()))
    except FertilityError:
        raise
    except Exception as err:  # noqa: BLE001 - translate() re-raises what is not the hub's or the network's
        translated = translate(err, repo_id=repo_id, repo_type=repo_type, revision=revision, error=error, what=what)
        if is_unreachable(err):
            raise Unreachable(translated) from None
        raise translated from None


@contextmanager
def hub_progress_bars() -> Iterator[None]:
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
