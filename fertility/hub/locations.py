"""Where the hub is and where its files are kept, read from the environment at each call.

`HF_ENDPOINT` (a mirror, or a local test server), `HF_HUB_CACHE` / `HF_HOME` and
`HF_HUB_ETAG_TIMEOUT` mean what they mean to `huggingface_hub`; downloads, the error messages
that name a page or a cache folder, and the named corpora all read them here, so a process
that changes them is heard.
"""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_ENDPOINT = "https://huggingface.co"


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


def page_url(repo_id: str, repo_type: str) -> str:
    return f"{endpoint()}/{'datasets/' if repo_type == 'dataset' else ''}{repo_id}"
