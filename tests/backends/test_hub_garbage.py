"""HF_ENDPOINT at a server that is not a hub: a web page where JSON belongs, JSON without a
hub's fields, or redirects without end. huggingface_hub's parse errors (JSONDecodeError,
KeyError) and httpx's TooManyRedirects were tracebacks (exit 3) for hub tokenizers and named
corpora alike; each is one line naming the endpoint, exit 2. The server is a real HTTP server
on 127.0.0.1 (no hub emulation needed: it must not behave like one)."""

from __future__ import annotations

import http.server
import json
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
