"""HF_ENDPOINT at a server that is not a hub: a web page where JSON belongs, JSON without a
hub's fields, or redirects without end. huggingface_hub's parse errors (JSONDecodeError,
KeyError) and httpx's TooManyRedirects were tracebacks (exit 3) for hub tokenizers and named
corpora alike; each is one line naming the endpoint, exit 2. The server is a real HTTP server
on 127.0.0.1 (no hub emulation needed: it must not behave like one)."""

from __future__ import annotations

import http.server
import json
import os
import resource
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from fertility.cli import cli

ANSWERS = {
    "html": (200, {"Content-Type": "application/json"}, b"<html>a captive portal</html>"),
    "json-without-fields": (200, {"Content-Type": "application/json"}, json.dumps({"sha": 5}).encode()),
    "redirect-loop": (302, {"Location": "/again"}, b""),
}


@pytest.fixture
def not_a_hub(request) -> Iterator[str]:
    status, headers, body = ANSWERS[request.param]

    class Answer(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(status)
            for key, value in {**headers, "Content-Length": str(len(body))}.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)

        do_HEAD = do_GET

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("not_a_hub", list(ANSWERS), indirect=True)
@pytest.mark.parametrize("spec", [("-t", "acme/tok", "corpus"), ("-t", "bytes", "fineweb2:ben_Beng"),
                                  ("-t", "bytes", "flores")], ids=["hub-tokenizer", "fineweb2", "flores"])
def test_a_server_that_is_not_a_hub(not_a_hub: str, spec: tuple[str, ...], tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("corpus").mkdir()
    Path("corpus/eng_Latn.txt").write_text("The river market opens at dawn.\n", encoding="utf-8")
    env = {"HF_ENDPOINT": not_a_hub, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_CACHE": str(tmp_path / "hf" / "hub"),
           "FERTILITY_CACHE_DIR": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "0", "HF_HUB_ETAG_TIMEOUT": "5"}
    result = CliRunner().invoke(cli, ["audit", "-q", *spec], env=env)
    assert result.exit_code == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"fertility: error: {spec[1] if spec[1] != 'bytes' else spec[2]}: {not_a_hub} did not "
                               "answer as a Hugging Face hub for "), lines[0]
    assert lines[0].endswith("; check HF_ENDPOINT")


ENDLESS_SERVER = r'''
import http.server, json, sys
SHA, MODE = "a" * 40, sys.argv[1]
class Answer(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass
    def send(self, status, body=None):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        if body is not None:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body is not None:
            self.wfile.write(body)
            return
        try:  # without end, until the client hangs up
            while True:
                self.wfile.write(b" " * 65536)
        except OSError:
            pass
    def do_GET(self):
        if "/revision/" in self.path:
            if MODE == "api":
                return self.send(200)
            return self.send(200, json.dumps({"id": "HuggingFaceFW/fineweb-2", "sha": SHA, "siblings": []}).encode())
        if "/tree/" in self.path:
            if MODE == "listing":
                return self.send(200)
            listing = [{"type": "file", "path": "data/ben_Beng/train/000_00000.parquet", "size": 4096}]
            return self.send(200, json.dumps(listing).encode())
        if "/resolve/" not in self.path:  # anything else huggingface_hub asks (it probes /api/... on start)
            return self.send(404, b"{}")
        self.send(206 if MODE == "range" else 200)  # the file: a range, or the whole file, without end
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answer)
print(server.server_address[1], flush=True)
server.serve_forever()
'''


PART = "HuggingFaceFW/fineweb-2@aaaaaaaaaaaa:data/ben_Beng/train"


def _run_against_endless(mode: str, args: list[str], tmp_path: Path) -> tuple[subprocess.CompletedProcess, str]:
    """The command under a 4 GB address-space ceiling (pyarrow alone maps over 1.5 GB), so reading
    an endless answer whole fails instead of taking the machine; and the server's address."""
    server = subprocess.Popen([sys.executable, "-c", ENDLESS_SERVER, mode], stdout=subprocess.PIPE, text=True)
    try:
        address = f"http://127.0.0.1:{server.stdout.readline().strip()}"  # type: ignore[union-attr]
        env = {**os.environ, "HF_ENDPOINT": address, "HF_HOME": str(tmp_path / "hf"),
               "HF_HUB_CACHE": str(tmp_path / "hf" / "hub"), "FERTILITY_CACHE_DIR": str(tmp_path / "cache"),
               "HF_HUB_OFFLINE": "0", "HF_HUB_ETAG_TIMEOUT": "5"}

        def ceiling() -> None:
            resource.setrlimit(resource.RLIMIT_AS, (4_000_000_000, 4_000_000_000))

        result = subprocess.run([sys.executable, "-m", "fertility", "audit", "-q", *args], env=env, cwd=tmp_path,
                                capture_output=True, text=True, timeout=60, preexec_fn=ceiling, check=False)
    finally:
        server.kill()
        server.wait()
    return result, address


PART = "HuggingFaceFW/fineweb-2@aaaaaaaaaaaa:data/ben_Beng/train"


@pytest.mark.parametrize("mode, message", [
    ("listing", "fineweb2:ben_Beng: the hub's file listing is over 16,777,216 bytes"),
    ("range", f"{PART}: the server sent more than the range asked (4,096 bytes)"),
    ("whole", f"{PART}: the server sent more than the size its listing gave (4,096 bytes)"),
])
def test_an_endless_answer_is_read_only_as_far_as_it_may_go(mode: str, message: str, tmp_path: Path) -> None:
    """A FineWeb-2 listing, range or file answered without end was read whole into memory (the
    process grew until it was stopped); each body is now read to its limit and refused."""
    result, _ = _run_against_endless(mode, ["-t", "bytes", "fineweb2:ben_Beng"], tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"fertility: error: {message}"), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args, repo", [(["-t", "acme/tok", "corpus"], "acme/tok"),
                                        (["-t", "bytes", "fineweb2:ben_Beng"], "HuggingFaceFW/fineweb-2")],
                         ids=["hub-tokenizer", "fineweb2"])
def test_an_endless_answer_from_the_hub_api(args: list[str], repo: str, tmp_path: Path) -> None:
    """huggingface_hub reads a repository's info whole: an endless one took memory until it ran
    out (MemoryError, exit 3, under a ceiling); its client now stops an /api/ answer at 16 MiB."""
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "eng_Latn.txt").write_text("The river market opens at dawn.\n", encoding="utf-8")
    result, address = _run_against_endless("api", args, tmp_path)
    assert result.returncode == 2, result.stderr
    what = args[1] if args[1] != "bytes" else args[2]
    assert result.stderr.startswith(f"fertility: error: {what}: {address} did not answer as a Hugging Face hub for "
                                    f"{repo} (AnswerTooLarge: an answer of over 16 MiB for {address}/api/"), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_overlapping_capped_blocks_keep_the_cap_until_the_last_ends_then_restore_the_client():
    """Two threads ask the hub at once (A enters, B enters, A leaves, B leaves): B keeps its cap
    after A has left, and after both the factory found before is back, not a capped one."""
    import threading

    from huggingface_hub.utils import _http

    from fertility.hub.responses import capped_answers

    before = getattr(_http, "_GLOBAL_CLIENT_FACTORY", None) or _http.default_client_factory
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, object] = {}

    def first() -> None:
        with capped_answers():
            a_in.set()
            b_in.wait(10)
        a_out.set()

    def second() -> None:
        a_in.wait(10)
        with capped_answers():
            b_in.set()
            a_out.wait(10)
            seen["inside B after A left"] = _http._GLOBAL_CLIENT_FACTORY
    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert seen["inside B after A left"] is not before  # still capped
    assert _http._GLOBAL_CLIENT_FACTORY is before
