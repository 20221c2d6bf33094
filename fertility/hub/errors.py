"""The hub's and the network's failures as one line naming the repository and the fix."""

from __future__ import annotations

import os
import sys

from fertility.errors import FertilityError

from .locations import endpoint, hub_cache_dir, page_url


class Unreachable(Exception):
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
    if isinstance(err, (ValueError, KeyError, TypeError, *redirect_errors())):
        # huggingface_hub parsing an answer that is not a hub's: a web page or garbage (JSONDecodeError),
        # JSON without the fields a hub sends (KeyError, TypeError), or redirects without end.
        return error(f"{what}: {endpoint()} did not answer as a Hugging Face hub for {repo_id} "
                     f"({first_line(err)}); check HF_ENDPOINT")
    raise err


def redirect_errors() -> tuple[type[BaseException], ...]:
    """A redirect loop, as whichever HTTP library huggingface_hub uses here reports it."""
    kinds: list[type[BaseException]] = []
    for module in ("httpx2", "httpx", "requests"):
        loaded = sys.modules.get(module)
        if loaded is not None and hasattr(loaded, "TooManyRedirects"):
            kinds.append(loaded.TooManyRedirects)
    return tuple(kinds)


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
