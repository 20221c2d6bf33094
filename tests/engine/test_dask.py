"""`--engine dask` (issue 10): chunks as Dask tasks on a real LocalCluster (2 workers, loopback
only) give the local engine's result byte for byte, even when a worker dies mid-run."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
from real_files import shared

import fertility
from fertility.report import tables as render

distributed = pytest.importorskip("dask.distributed")

LANGS = ("ben_Beng", "eng_Latn", "amh_Ethi")
TOKENIZERS = ["tiktoken:cl100k_base", "graphemes"]


def files():
    folder = shared("flores200", "devtest")
    return [str(folder / f"{lang}.txt") for lang in LANGS]


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address="127.0.0.1:0") as local:
        yield local


@pytest.fixture(scope="module")
def local_json():
    return render.to_json(fertility.audit(TOKENIZERS, files(), jobs=1, cache=False, chunk_bytes=40_000))


def test_dask_equals_the_local_run_byte_for_byte(cluster, local_json):
    result = fertility.audit(TOKENIZERS, files(), cache=False, chunk_bytes=40_000, engine="dask",
                             scheduler=cluster.scheduler_address)
    assert render.to_json(result) == local_json


def test_a_worker_killed_mid_run_changes_nothing(cluster, local_json):
    client = distributed.Client(cluster.scheduler_address)
    out = {}

    def audit():
        try:
            out["json"] = render.to_json(fertility.audit(TOKENIZERS, files(), cache=False, chunk_bytes=40_000,
                                                         engine="dask", scheduler=cluster.scheduler_address))
        except BaseException as err:  # noqa: BLE001 - shown by the assertion below, not lost in the thread
            out["error"] = err
    thread = threading.Thread(target=audit)
    thread.start()
    deadline = time.monotonic() + 60
    while not any(client.processing().values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    busy = [worker for worker, tasks in client.processing().items() if tasks]
    assert busy, "no task ever ran"
    pids = client.run(os.getpid, workers=busy[:1])
    assert busy[0] in pids, f"worker {busy[0]} did not answer: {pids}"
    pid = pids[busy[0]]
    os.kill(pid, signal.SIGKILL)  # a worker of this test's cluster; its nanny starts a new one
    thread.join(timeout=300)
    client.close()
    assert "error" not in out, repr(out.get("error"))
    assert out["json"] == local_json


def test_command_line_dask_with_a_local_cluster(local_json):
    from click.testing import CliRunner

    from fertility.cli import cli
    done = CliRunner().invoke(cli, ["audit", *files(), "-t", TOKENIZERS[0], "-t", TOKENIZERS[1], "--no-cache",
                                    "--engine", "dask", "--jobs", "2", "--no-findings", "-f", "json"])
    assert done.exit_code == 0, done.stderr
    whole = render.to_json(fertility.audit(TOKENIZERS, files(), jobs=1, cache=False, diagnose=False))
    assert done.stdout.strip() == whole.strip()
