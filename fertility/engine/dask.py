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

from .chunks import CHUNK_BYTES, PIECE_BYTES, Chunk, chunked
from .measure import ChunkResult, measure_chunk
from .profiles import ProfileCache


def _measure(chunk: Chunk, tokenizers: list[Tokenizer], evidence: bool) -> ChunkResult:
    import os
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    return measure_chunk(chunk, tokenizers, evidence=evidence, cache=ProfileCache(None))


def client_for(scheduler: str | None, jobs: int):
    """A client of the given scheduler, or of a new loopback LocalCluster (closed with it)."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise UsageError("--engine dask needs dask.distributed: pip install 'fertility[dask]'") from None
    if scheduler:
        try:
            return Client(scheduler, timeout="30s"), None
        except (OSError, TimeoutError, ValueError) as err:
            raise UsageError(f"--scheduler {scheduler}: cannot connect ({err})") from None
    cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address="127.0.0.1:0", silence_logs=50)  # loopback only
    return Client(cluster), cluster


def run(tokenizers: Sequence[Tokenizer], documents: Iterable[Document | Batch], *, evidence: bool, jobs: int = 1,
        scheduler: str | None = None, advance: Callable[[int], None] | None = None,
        chunk_bytes: int = CHUNK_BYTES, client=None) -> ChunkResult:
    """Like workers.run, on Dask; `client` an existing dask.distributed Client (tests)."""
    own = client is None
    cluster = None
    if own:
        client, cluster = client_for(scheduler, jobs)
    try:
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        shared = client.scatter(list(tokenizers), broadcast=True)
        total = ChunkResult()
        pending: deque = deque()
        for chunk in chunked(documents, chunk_bytes=chunk_bytes, piece_bytes=PIECE_BYTES):
            pending.append(client.submit(_measure, chunk, shared, evidence, pure=False, retries=3))
            while len(pending) >= 2 * workers:
                total = _take(total, pending.popleft().result(), advance)
        while pending:
            total = _take(total, pending.popleft().result(), advance)
        return total
    finally:
        if own:
            client.close()
            if cluster is not None:
                cluster.close()


def _take(total: ChunkResult, result: ChunkResult, advance) -> ChunkResult:
    if advance is not None:
        advance(result.n_bytes)
    return total.merge(result)


__all__ = ["client_for", "run"]
