"""`--engine dask`: chunks become Dask tasks, on a cluster at `--scheduler ADDRESS` or on a
LocalCluster of `--jobs` worker processes listening on loopback only.

The tokenizers travel to the workers by content: the loaded objects are pickled (vocabulary
and merges inside, not a path that may exist only on the client) and scattered once to every
worker. Chunks go out in reading order, at most two per worker in flight, and their results
merge in that order, so the result is identical to the local engine's. A lost worker's task
is rerun by Dask (`retries`); a chunk's result does not depend on where it ran, so the merged
counts stay exact.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence

from fertility.backends import Tokenizer
from fertility.errors import UsageError
from fertility.io.corpus import Batch, Document
from fertility.text.pieces import PIECE_BYTES

from .chunks import CHUNK_BYTES, Chunk, chunked
from .documents import PerDocument
from .measure import measure_chunk
from .profiles import ProfileCache
from .result import ChunkResult


def _measure(chunk: Chunk, tokenizers: list[Tokenizer], evidence: bool,
             per_document: PerDocument | None = None) -> ChunkResult:
    import os
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    return measure_chunk(chunk, tokenizers, evidence=evidence, cache=ProfileCache(None), per_document=per_document)


CALL_SECONDS = 120  # scattering the tokenizers, waiting for a first worker
CHUNK_SECONDS = 900  # one chunk's counts (about a megabyte of text: seconds on any worker)


def connect_seconds() -> float:
    """Dask's own connect timeout (`distributed.comm.timeouts.connect`, 30 s unless configured,
    e.g. DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT=5s)."""
    import dask
    from dask.utils import parse_timedelta
    return float(parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"), default="seconds") or 30)


def check_scheduler(address: str, seconds: float) -> None:
    """Connect and exchange Dask's handshake within `seconds`, or fail with one line.

    Dask's own `connect` bounds the TCP connect but then waits for the handshake without a
    limit (a server that accepts and stays silent hangs it for good), and it reads a reply
    that is not Dask's (an HTTP server's) as frame lengths: an allocation of exabytes. This
    probe runs it under a deadline, in a thread of its own (a caller may be inside an event loop).
    """
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from distributed.comm import connect, parse_address
    from distributed.comm.addressing import parse_host_port
    from distributed.comm.registry import get_backend

    try:
        scheme, location = parse_address(address)
        get_backend(scheme)  # an unknown scheme (http://, the dashboard's) is refused here
        if scheme in ("tcp", "tls"):
            parse_host_port(location)
    except (ValueError, TypeError) as err:
        raise UsageError(f"--scheduler {address}: not a Dask scheduler address such as tcp://host:8786 ({err})") from None

    async def probe() -> None:
        comm = await asyncio.wait_for(connect(address, timeout=seconds), seconds)
        await comm.close()

    with ThreadPoolExecutor(1, thread_name_prefix="fertility-dask-probe") as thread:
        try:
            thread.submit(asyncio.run, probe()).result()
        except TimeoutError:
            raise UsageError(f"--scheduler {address}: no Dask handshake within {seconds:g} s (it accepts connections "
                             "but does not answer as a Dask scheduler)") from None
        except OSError as err:
            raise UsageError(f"--scheduler {address}: cannot connect ({err})") from None
        except Exception as err:  # noqa: BLE001 - what answered is not a Dask scheduler, whatever it said
            raise UsageError(f"--scheduler {address}: did not answer as a Dask scheduler (its reply could not be "
                             f"read: {type(err).__name__}); is it a web server or the dashboard?") from None


def client_for(scheduler: str | None, jobs: int):
    """A client of the given scheduler, or of a new loopback LocalCluster (closed with it)."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise UsageError("--engine dask needs dask.distributed: pip install 'fertility[dask]'") from None
    if scheduler:
        seconds = connect_seconds()
        check_scheduler(scheduler, seconds)
        try:
            client = Client(scheduler, timeout=seconds)
        except (OSError, TimeoutError, ValueError) as err:
            raise UsageError(f"--scheduler {scheduler}: cannot connect ({err})") from None
        try:
            client.wait_for_workers(1, timeout=CALL_SECONDS)
        except (OSError, TimeoutError) as err:
            client.close()
            raise UsageError(f"--scheduler {scheduler}: no worker joined within {CALL_SECONDS} s ({err})") from None
        return client, None
    cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address="127.0.0.1:0", silence_logs=50)  # loopback only
    return Client(cluster), cluster


def _result(future, address: str | None):
    """A chunk's counts, or one line when none comes back in CHUNK_SECONDS (workers gone)."""
    try:
        return future.result(timeout=CHUNK_SECONDS)
    except TimeoutError:
        raise UsageError(f"--scheduler {address or 'LocalCluster'}: no result for a chunk within {CHUNK_SECONDS} s "
                         "(are its workers still there?)") from None


def run(tokenizers: Sequence[Tokenizer], documents: Iterable[Document | Batch], *, evidence: bool, jobs: int = 1,
        scheduler: str | None = None, advance: Callable[[int], None] | None = None,
        chunk_bytes: int = CHUNK_BYTES, client=None, per_document: PerDocument | None = None) -> ChunkResult:
    """Like local.run, on Dask; `client` an existing dask.distributed Client (tests)."""
    own = client is None
    cluster = None
    if own:
        client, cluster = client_for(scheduler, jobs)
    try:
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        try:
            shared = client.scatter(list(tokenizers), broadcast=True, timeout=CALL_SECONDS)
        except TimeoutError:
            raise UsageError(f"--scheduler {scheduler or 'LocalCluster'}: the tokenizers could not be sent to the "
                             f"workers within {CALL_SECONDS} s") from None
        total = ChunkResult()
        pending: deque = deque()
        for chunk in chunked(documents, chunk_bytes=chunk_bytes, piece_bytes=PIECE_BYTES):
            pending.append(client.submit(_measure, chunk, shared, evidence, per_document, pure=False, retries=3))
            while len(pending) >= 2 * workers:
                total = _take(total, _result(pending.popleft(), scheduler), advance)
        while pending:
            total = _take(total, _result(pending.popleft(), scheduler), advance)
        return total
    finally:
        if own:
            client.close()
            if cluster is not None:
                cluster.close()


def _take(total: ChunkResult, result: ChunkResult, advance) -> ChunkResult:
    if advance is not None:
        advance(result.n_bytes)
    return total.absorb(result)


__all__ = ["client_for", "run"]
