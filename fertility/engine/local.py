"""Running chunks: in this process, or in worker processes that each load the tokenizers once.

Chunks go out in reading order, at most two per worker at a time (memory stays flat), and
their results are merged in the same order, so any number of jobs gives the same result.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from itertools import chain, islice
from pathlib import Path

from fertility.backends import Tokenizer, load_tokenizer
from fertility.engine.evidence_pretokens import prepare
from fertility.io.corpus import Batch, Document
from fertility.text import units as text
from fertility.text.pieces import PIECE_BYTES

from .chunks import CHUNK_BYTES, SAMPLE_BYTES, Chunk, chunked
from .documents import PerDocument
from .measure import measure_chunk
from .profiles import ProfileCache
from .result import ChunkResult

_WORKER: dict = {}


# fork where the platform has it (the tokenizers loaded here are inherited), else spawn
START_METHOD = "fork" if sys.platform.startswith("linux") else "spawn"


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def die_with_parent(parent: int) -> None:
    """Make this worker end when its parent does, however the parent ends (SIGKILL included):
    a worker left behind keeps the caller's stdout and stderr open, so a pipe reading them
    never sees its end. On Linux the kernel sends SIGTERM (prctl PR_SET_PDEATHSIG); elsewhere a
    thread watches the parent's pid. SIGTERM and SIGHUP kill the worker at once (the handler
    a fork inherits from the command would only unwind it after the chunk at hand)."""
    for signum in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if signum is not None:
            signal.signal(signum, signal.SIG_DFL)
    watched = False
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            watched = ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM) == 0
        except (OSError, AttributeError):
            watched = False
    if os.getppid() != parent:  # the parent ended before the kernel was told: end now
        os._exit(1)
    if not watched:
        import threading
        import time

        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(0.5)
            os._exit(1)
        threading.Thread(target=watch, daemon=True, name="fertility-parent-watch").start()


def _worker_start(specs: list[str], load_options: dict, evidence: bool, cache_folder: str | None,
                  parent: int, per_document: PerDocument | None = None) -> None:
    from .malloc import keep_freed_memory

    die_with_parent(parent)
    keep_freed_memory()  # this process is ours: chunk arrays reuse freed memory
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle, once
    os.environ["TOKENIZERS_PARALLELISM"] = "false"  # the workers are the parallelism
    os.environ["HF_HUB_OFFLINE"] = "1"  # the parent fetched every hub file: the same commit, from the cache
    if _WORKER.get("tokenizers") is None:  # not inherited by fork: load by spec, once
        _WORKER["tokenizers"] = [load_tokenizer(spec, **load_options) for spec in specs]
    _WORKER["evidence"], _WORKER["cache_folder"] = evidence, cache_folder
    _WORKER["per_document"] = per_document


def _worker_chunk(chunk: Chunk) -> ChunkResult:
    folder = _WORKER["cache_folder"]
    cache = ProfileCache(Path(folder) if folder else None)
    result = measure_chunk(chunk, _WORKER["tokenizers"], evidence=_WORKER["evidence"], cache=cache,
                           per_document=_WORKER["per_document"])
    result.cache = cache.stats
    return result


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def run(tokenizers: Sequence[Tokenizer], documents: Iterable[Document | Batch], *, evidence: bool,
        cache: ProfileCache | None = None, jobs: int = 1, specs: Sequence[str | None] | None = None,
        load_options: dict | None = None, advance: Callable[[int], None] | None = None,
        per_document: PerDocument | None = None, chunk_bytes: int = CHUNK_BYTES,
        meanwhile: Callable[[], object] | None = None) -> ChunkResult:
    """Measure `documents` with every tokenizer, chunk by chunk, and merge the results in order;
    `cache.stats` counts the profile cache's hits and misses, whichever process had them.

    With `jobs` > 1 chunks run in worker processes: forked from this one where the platform
    allows (tokenizers already loaded), else spawned and loading each tokenizer by its spec
    with `load_options` (pattern, normalize), as this process loaded it.
    `per_document`: also keep per-document values (documents.py), measured wherever the chunk
    runs and joined in reading order. `meanwhile` runs in a thread of this process once the workers have
    started (the parent is idle then: e.g. imports the output needs).
    """
    cache = cache if cache is not None else ProfileCache(None)
    chunks = chunked(documents, chunk_bytes=chunk_bytes, piece_bytes=PIECE_BYTES,
                     sample_bytes=SAMPLE_BYTES if evidence else 0)  # no findings: nothing to sample
    head = list(islice(chunks, 2))
    chunks = chain(head, chunks)
    total = ChunkResult()
    can_fork = START_METHOD == "fork"
    if jobs > 1 and len(head) > 1 and (can_fork or (specs is not None and all(specs))):
        context = multiprocessing.get_context(START_METHOD)
        _WORKER["tokenizers"] = list(tokenizers) if can_fork else None
        if can_fork:  # built once here, inherited by every worker
            text.prepare_tables()
            for tokenizer in tokenizers:
                prepare(tokenizer, evidence=evidence)
        try:
            total = _run_parallel(context, chunks, jobs, [s or "" for s in (specs or [])] if not can_fork else [],
                                  load_options or {}, evidence, cache, advance, meanwhile, per_document)
        finally:
            _WORKER.clear()
        cache.stats = cache.stats + total.cache  # the workers' hits and misses
        return total
    for chunk in chunks:  # one chunk, one process: nothing to gain from workers
        result = measure_chunk(chunk, tokenizers, evidence=evidence, cache=cache, per_document=per_document)
        total = total.absorb(result)
        if advance is not None:
            advance(result.n_bytes)
    return total


def _run_parallel(context, chunks: Iterable[Chunk], jobs: int, specs: list[str], load_options: dict,
                  evidence: bool, cache: ProfileCache, advance, meanwhile,
                  per_document: PerDocument | None = None) -> ChunkResult:
    import threading
    from concurrent.futures import ProcessPoolExecutor

    folder = str(cache.folder) if cache.folder is not None else None
    total = ChunkResult()
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_worker_start,
                               initargs=(specs, load_options, evidence, folder, os.getpid(), per_document))
    side = threading.Thread(target=meanwhile, daemon=True) if meanwhile is not None else None
    try:
        pending: deque = deque()
        for chunk in chunks:  # at most two chunks per worker in flight: memory stays flat
            pending.append(pool.submit(_worker_chunk, chunk))
            if side is not None and side.ident is None:
                side.start()  # after the first submit: with fork every worker exists by then
            while len(pending) >= 2 * jobs:
                total = _take(total, pending.popleft().result(), advance)
        while pending:
            total = _take(total, pending.popleft().result(), advance)
    except BaseException:  # an error in a chunk, a bad line read here, Ctrl-C, SIGTERM: stop the rest
        stop(pool)
        raise
    pool.shutdown(wait=True)
    if side is not None and side.ident is not None:
        side.join()
    return total


def stop(pool) -> None:
    """End the workers now (their chunks' results are no longer wanted), then the pool: waiting
    for chunks in flight would keep a terminated command alive for as long as they take."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):  # pid -> Process
        with contextlib.suppress(OSError, ValueError, AttributeError):
            process.terminate()
    pool.shutdown(wait=True, cancel_futures=True)


def _take(total: ChunkResult, result: ChunkResult, advance) -> ChunkResult:
    if advance is not None:
        advance(result.n_bytes)
    return total.absorb(result)
