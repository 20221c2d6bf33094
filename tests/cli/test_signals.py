"""Signals and remote ends, with real processes and real sockets.

SIGTERM during an audit once left two worker processes alive, holding the caller's stdout open,
so a pipe reading it never saw its end; a Dask scheduler address that was a web server ended in
a traceback (an HTTP reply read as frame lengths: an allocation of exabytes), and one that
accepted and stayed silent hung for minutes (Dask bounds the connect, not the handshake).
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from fertility.io.samples import samples_dir


def children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as handle:
                found += [int(child) for child in handle.read().split()]
    except OSError:
        pass
    return found


def alive(pid: int) -> bool:
    """Running (a zombie waiting for a reaper counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.fixture(scope="module")
def big_corpus(tmp_path_factory) -> Path:
    """About 6 MB of real text in two languages: long enough that the workers are mid-run."""
    root = tmp_path_factory.mktemp("big")
    for lang in ("ben_Beng", "eng_Latn"):
        text = (samples_dir() / f"{lang}.txt").read_text(encoding="utf-8")
        (root / f"{lang}.txt").write_text(text * 600, encoding="utf-8")
    return root


@contextmanager
def signals_as_a_terminal_sends_them() -> Iterator[None]:
    """A child started inside gets SIGHUP, SIGINT and SIGTERM at their defaults: a caller's nohup
    (SIGHUP ignored) or a script's background job (SIGINT ignored) would be inherited, and
    fertility rightly keeps an ignored signal ignored, so the test would measure the caller."""
    ignored = [s for s in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM) if signal.getsignal(s) is signal.SIG_IGN]
    for signum in ignored:
        signal.signal(signum, signal.SIG_DFL)
    try:
        yield
    finally:
        for signum in ignored:
            signal.signal(signum, signal.SIG_IGN)


needs_proc = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads child pids from /proc (Linux)")


@needs_proc
@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGINT, 130),
                                          (signal.SIGKILL, -signal.SIGKILL)],
                         ids=["SIGTERM", "SIGHUP", "SIGINT", "SIGKILL"])
def test_a_signal_mid_audit_leaves_no_worker_and_closes_the_pipe(big_corpus: Path, signum: int, code: int) -> None:
    command = [shutil.which("fertility") or "fertility", "audit", str(big_corpus), "-t", "tiktoken:cl100k_base",
               "-f", "json", "--jobs", "2", "--no-cache"]
    with signals_as_a_terminal_sends_them():
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        started = time.monotonic()
        while len(children(process.pid)) < 2 and process.poll() is None and time.monotonic() - started < 120:
            time.sleep(0.05)
        workers = children(process.pid)
        assert len(workers) == 2, "the audit never started its two workers"
        process.send_signal(signum)
        sent = time.monotonic()
        # the caller's end: stdout and stderr reach EOF once nothing holds them any more
        said = b""  # stderr, shown if the test fails (rarely seen: an exit 0 after SIGTERM, no EOF in 20 s)
        for stream in (process.stdout, process.stderr):
            assert stream is not None
            while True:
                ready, _, _ = select.select([stream], [], [], 20)
                assert ready, (f"no EOF on the pipe within 20 s of {signal.Signals(signum).name} (parent "
                               f"{'exited ' + str(process.poll()) if process.poll() is not None else 'running'}; "
                               f"stderr so far: {said[-2000:]!r})")
                piece = os.read(stream.fileno(), 1 << 16)
                if not piece:
                    break
                if stream is process.stderr:
                    said += piece
        assert process.wait(20) == code, f"stderr: {said[-2000:]!r}"
        assert time.monotonic() - sent < 20
        deadline = time.monotonic() + 5
        while any(alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [w for w in workers if alive(w)], "a worker outlived its parent"
    finally:
        if process.poll() is None:
            process.kill()
        for worker in children(process.pid):
            if alive(worker):
                os.kill(worker, signal.SIGKILL)
        process.wait(10)


def test_nohup_keeps_sighup_ignored() -> None:
    """A caller that ignores SIGHUP (nohup) keeps it ignored: only default handlers are replaced."""
    script = ("import signal\nsignal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
              "from fertility.cli import unwind_on_termination\nunwind_on_termination()\n"
              "print(signal.getsignal(signal.SIGHUP) is signal.SIG_IGN, signal.getsignal(signal.SIGTERM).__name__)")
    done = subprocess.run([sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["True", "_terminate"], done.stderr


# --- remote ends --------------------------------------------------------------------------------
def serve(kind: str) -> Iterator[int]:
    """A TCP server on 127.0.0.1 that accepts and stays silent, or answers every request as a web
    server would; yields its port."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()
    connections: list[socket.socket] = []

    def loop() -> None:
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                continue
            connections.append(connection)
            if kind == "http":
                connection.settimeout(5)
                try:
                    connection.recv(65536)
                    connection.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\n"
                                       b"Content-Length: 11\r\nConnection: close\r\n\r\nBad Request")
                except OSError:
                    pass
    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join(5)
        for connection in connections:
            connection.close()
        server.close()


@pytest.fixture
def silent_server() -> Iterator[int]:
    yield from serve("silent")


@pytest.fixture
def web_server() -> Iterator[int]:
    yield from serve("http")


CONNECT_SECONDS = 3


def audit_on(scheduler: str, corpus: Path) -> tuple[subprocess.CompletedProcess, float]:
    env = {**os.environ, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": f"{CONNECT_SECONDS}s"}
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "fertility", "audit", str(corpus), "-t", "bytes", "-f", "json", "-q",
                           "--engine", "dask", "--scheduler", scheduler], check=False, capture_output=True, text=True, env=env,
                          timeout=300)
    return done, time.monotonic() - started


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("small")
    shutil.copy(samples_dir() / "eng_Latn.txt", root / "eng_Latn.txt")
    return root


@pytest.mark.parametrize("server, expected", [
    ("silent_server", "no Dask handshake within 3 s (it accepts connections but does not answer"),
    ("web_server", "did not answer as a Dask scheduler (its reply could not be read"),
], ids=["silent", "http"])
def test_a_scheduler_that_is_not_one_fails_in_bounded_time(request, small_corpus: Path, server: str,
                                                           expected: str) -> None:
    pytest.importorskip("distributed")
    port = request.getfixturevalue(server)
    done, seconds = audit_on(f"tcp://127.0.0.1:{port}", small_corpus)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"fertility: error: --scheduler tcp://127.0.0.1:{port}: {expected}"), done.stderr
    assert done.stderr.count("\n") == 1
    assert done.stdout == ""
    assert seconds < 60  # start-up (imports) plus the connect timeout; it hung for minutes before


@pytest.mark.parametrize("address, expected", [
    ("http://127.0.0.1:8787", "not a Dask scheduler address such as tcp://host:8786 (unknown address scheme 'http'"),
    ("sched.example", "not a Dask scheduler address such as tcp://host:8786 (missing port number"),
])
def test_a_scheduler_address_that_cannot_be_one(small_corpus: Path, address: str, expected: str) -> None:
    pytest.importorskip("distributed")
    done, _ = audit_on(address, small_corpus)
    assert done.returncode == 2 and done.stderr.startswith(f"fertility: error: --scheduler {address}: {expected}"), \
        done.stderr
