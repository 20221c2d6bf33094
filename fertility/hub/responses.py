"""The hub's answers read to a limit: huggingface_hub reads a JSON answer (a repository's info)
whole into memory, so a server at HF_ENDPOINT that answers without end grew the process until
memory ran out. While fertility asks the hub, huggingface_hub's HTTP client gets a transport
that stops any answer past its limit; the error is a ValueError, which `errors.translate` names
as an answer that is not a hub's.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from fertility.limits import MAX_TOKENIZER_FILE_BYTES, human

API_ANSWER_BYTES = 1 << 24  # a repository's info or file listing: kilobytes on the real hub
FILE_BYTES = MAX_TOKENIZER_FILE_BYTES + (1 << 20)  # a file downloaded: no tokenizer file fertility reads is larger


class AnswerTooLarge(ValueError):
    """An answer past its limit (a ValueError: huggingface_hub lets it through unchanged)."""


# Blocks inside `capped_answers` across threads, and the factory found when the first began:
# the capped client is installed once, when the first block begins, and the saved factory put
# back when the last ends (installing closes huggingface_hub's live session, and a block that
# ended first must not uncap, or leave capped for good, a block still running).
_LOCK = threading.Lock()
_STATE: dict[str, Any] = {"depth": 0, "saved": None}


@contextmanager
def capped_answers() -> Iterator[None]:
    """huggingface_hub's client (its default, or the factory a caller set for a proxy) with capped
    answers while any block is running, that client again after the last; nothing changes where
    huggingface_hub has no client factory (versions before httpx)."""
    try:
        from huggingface_hub.utils import _http

        install, fallback = _http.set_client_factory, _http.default_client_factory
    except (ImportError, AttributeError):
        yield
        return
    with _LOCK:
        if _STATE["depth"] == 0:  # read under the lock: a block ending meanwhile restores it
            default = getattr(_http, "_GLOBAL_CLIENT_FACTORY", None) or fallback  # a caller's own

            def capped_client() -> Any:
                client = default()
                if hasattr(client, "_transport"):
                    client._transport = _capped_transport(client._transport,
                                                          sys.modules[type(client).__module__.split(".")[0]])
                return client

            _STATE["saved"] = default
            install(capped_client)
        _STATE["depth"] += 1
    try:
        yield
    finally:
        with _LOCK:
            _STATE["depth"] -= 1
            if _STATE["depth"] == 0:
                install(_STATE["saved"])
                _STATE["saved"] = None


def _capped_transport(inner: Any, httpx: Any) -> Any:
    """`inner` (an httpx transport) with answers that stop at API_ANSWER_BYTES (/api/ paths) or
    FILE_BYTES; built from the classes of the httpx that huggingface_hub uses (httpx or its fork)."""

    class CappedStream(httpx.SyncByteStream):
        def __init__(self, stream: Any, limit: int, url: str):
            self.stream, self.limit, self.url = stream, limit, url

        def __iter__(self) -> Iterator[bytes]:
            seen = 0
            for chunk in self.stream:
                seen += len(chunk)
                if seen > self.limit:
                    raise AnswerTooLarge(f"an answer of over {human(self.limit)} for {self.url[:120]}")
                yield chunk

        def close(self) -> None:
            self.stream.close()

    class CappedTransport(httpx.BaseTransport):
        def handle_request(self, request: Any) -> Any:
            response = inner.handle_request(request)
            limit = API_ANSWER_BYTES if request.url.path.startswith("/api/") else FILE_BYTES
            response.stream = CappedStream(response.stream, limit, str(request.url))
            return response

        def close(self) -> None:
            inner.close()

    return CappedTransport()
