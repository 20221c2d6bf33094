"""FineWeb-2 by row groups: its files are gigabytes, so a language's sample is the first row
groups of its first Parquet file, fetched by HTTP range requests and kept in fertility's cache.

The hub's Python client downloads whole files, so this module speaks to the hub itself: which
commit to read (as fertility's cache records it, offline too), the dataset's file listing, and
the hub's errors (gated, missing, unreachable) as one line each. `catalog.py` turns what it
fetches into a named corpus.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
from pathlib import Path
from typing import Any

from fertility.errors import CorpusError


def _storage(repo: str) -> Path:
    from fertility.caches import cache_dir

    return cache_dir() / "hub" / f"datasets--{repo.replace('/', '--')}"


def dataset_commit(repo: str, revision: str | None, *, online: bool, what: str) -> str:
    """The commit to read: a full hash as given; the bare name the one fertility's cache holds for
    main (else the hub's); a branch or tag the hub's (offline: the cache's)."""
    from fertility.hub.cache import COMMIT, write_ref
    from fertility.hub.errors import translate
    from fertility.hub.locations import endpoint, request_timeout
    from fertility.hub.responses import capped_answers

    if revision is not None and COMMIT.match(revision):
        return revision
    ref = _storage(repo) / "refs" / (revision or "main")
    if revision is None or not online:
        try:
            cached = ref.read_text(encoding="utf-8").strip()
            if COMMIT.match(cached):
                return cached
        except (OSError, UnicodeDecodeError):
            if not online:
                raise CorpusError(f"{what}: not in fertility's cache and the hub may not be asked (--offline or "
                                  "HF_HUB_OFFLINE); run once online") from None
    from huggingface_hub import HfApi

    try:
        with capped_answers():
            commit = str(HfApi(endpoint=endpoint()).repo_info(repo, repo_type="dataset", revision=revision or "main",
                                                              timeout=request_timeout()).sha)
    except Exception as err:  # noqa: BLE001 - translate() re-raises what is not the hub's or the network's
        raise translate(err, repo_id=repo, repo_type="dataset", revision=revision, error=CorpusError,
                        what=what) from None
    write_ref(_storage(repo), revision or "main", commit)
    return commit


def first_row_groups(repo: str, commit: str, lang: str, split: str, *, docs: int | None, size: int | None,
                     online: bool, what: str) -> tuple[list[Path], list[int]]:
    """The cached files of the first row groups of `lang`'s first `split` file (one file a row
    group), as many as `docs` documents or `size` bytes of text need, and their row counts."""
    from fertility.hub.locations import endpoint, request_timeout

    from .remote_parquet import row_group_files, text_bytes

    folder = _storage(repo) / commit / "data" / lang / split
    seen = {"bytes": 0}

    def enough(rows: int, path: Path) -> bool:
        if docs is not None:
            return rows >= docs
        seen["bytes"] += text_bytes(path)
        return seen["bytes"] >= (size or 0)

    def first_file() -> tuple[str, int]:
        listing = _get_json(f"{endpoint()}/api/datasets/{repo}/tree/{commit}/data/{lang}/{split}", what=what,
                            missing=f"FineWeb-2 has no {lang} ({split} split) at commit {commit[:12]}")
        files = sorted((e for e in listing if isinstance(e, dict) and str(e.get("path", "")).endswith(".parquet")),
                       key=lambda e: e["path"])
        if not files:
            raise CorpusError(f"{what}: FineWeb-2 has no Parquet file for {lang} ({split}) at commit {commit[:12]}")
        size_of = (files[0].get("lfs") or {}).get("size") or files[0].get("size")
        if not isinstance(size_of, int) or size_of <= 0:
            raise CorpusError(f"{what}: the hub's listing gives no size for {files[0]['path']}")
        quoted = urllib.parse.quote(files[0]["path"])
        return f"{endpoint()}/datasets/{repo}/resolve/{commit}/{quoted}", size_of

    try:
        return row_group_files(folder, url=first_file, headers=_headers, timeout=request_timeout(),
                               name=f"{repo}@{commit[:12]}:data/{lang}/{split}", enough=enough, online=online)
    except urllib.error.HTTPError as err:
        raise _http_error(err, repo, what) from None
    except (urllib.error.URLError, TimeoutError, ConnectionError) as err:
        raise CorpusError(f"{what}: cannot reach the hub at {endpoint()} ({err}); check the network or "
                          "HF_ENDPOINT") from None
    except OSError as err:  # writing the row groups into the cache
        raise CorpusError(f"{what}: cannot write fertility's cache {folder} ({err.strerror or err}); set "
                          "FERTILITY_CACHE_DIR to a writable folder") from None


def _headers() -> dict[str, str]:
    from huggingface_hub.utils import build_hf_headers

    return dict(build_hf_headers())


MAX_LISTING_BYTES = 1 << 24  # a folder's file listing: FineWeb-2's largest is tens of kilobytes


def _get_json(url: str, *, what: str, missing: str) -> Any:
    from fertility.hub.locations import request_timeout

    from .remote_parquet import open_url, read_at_most

    try:
        with open_url(url, headers=_headers(), timeout=request_timeout()) as response:
            return json.loads(read_at_most(response, MAX_LISTING_BYTES,
                                           f"{what}: the hub's file listing is over {MAX_LISTING_BYTES:,} bytes "
                                           "(a real one is a few kilobytes); is HF_ENDPOINT a hub?"))
    except urllib.error.HTTPError as err:
        if err.code == 404 and err.headers.get("X-Error-Code") not in ("GatedRepo", "RepoNotFound"):
            raise CorpusError(f"{what}: {missing}") from None
        raise
    except ValueError as err:
        raise CorpusError(f"{what}: the hub's file listing is not JSON ({err})") from None


def _http_error(err: urllib.error.HTTPError, repo: str, what: str) -> CorpusError:
    from fertility.hub.locations import endpoint, page_url

    code = err.headers.get("X-Error-Code") if err.headers is not None else None
    if code == "GatedRepo":
        return CorpusError(f"{what}: {repo} is a gated dataset: accept its terms at {page_url(repo, 'dataset')} "
                           "(logged in), then set HF_TOKEN to an access token of that account")
    if code == "RepoNotFound" or err.code in (401, 404):
        return CorpusError(f"{what}: {endpoint()} has no dataset {repo} (HTTP {err.code}); if it is private, set HF_TOKEN")
    return CorpusError(f"{what}: the hub at {endpoint()} answered HTTP {err.code} ({err.reason})")
