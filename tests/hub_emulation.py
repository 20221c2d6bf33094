"""A Hugging Face hub on 127.0.0.1 for tests: a real `olah` server (a self-hosted hub mirror, from
PyPI) serving git repositories built here from local files, and a tiny HTTP server that answers as
the hub does for a gated repository.

olah, in offline mode, serves `mirrors/{models,datasets}/ORG/NAME/` git repositories through the
hub's own file API (`/api/.../revision/...`, `/api/.../tree/...`, `/resolve/...`), so the real
`huggingface_hub` client downloads from it with only `HF_ENDPOINT` changed; its log lists every
request. It cannot emulate gating, so `GatedHub` does that and nothing else: repository info
and file listings answer as for anyone, every file answers 401 (403 with a token) carrying the
hub's `X-Error-Code: GatedRepo` header, which is what `huggingface_hub` turns into GatedRepoError.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

GIT = ["git", "-c", "user.name=fertility-tests", "-c", "user.email=tests@fertility.invalid", "-c", "commit.gpgsign=false"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def git_repo(folder: Path, commits: list[dict[str, bytes | Path]]) -> list[str]:
    """A git repository (branch main, as olah requires) with one commit per dict of files
    (path in the repository -> bytes or a file to copy; a later commit overwrites); returns the
    commit hashes, oldest first."""
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run([*GIT, "init", "-q", "-b", "main", str(folder)], check=True)
    hashes = []
    for number, files in enumerate(commits):
        for name, content in files.items():
            target = folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, Path):
                shutil.copyfile(content, target)
            else:
                target.write_bytes(content)
        subprocess.run([*GIT, "-C", str(folder), "add", "-A"], check=True)
        subprocess.run([*GIT, "-C", str(folder), "commit", "-q", "-m", f"commit {number + 1}"], check=True)
        hashes.append(subprocess.run([*GIT, "-C", str(folder), "rev-parse", "HEAD"], check=True,
                                     capture_output=True, text=True).stdout.strip())
    return hashes


# Linux: ask for SIGTERM when the parent dies (prctl PR_SET_PDEATHSIG, kept across exec), then
# become the server.
_DIE_WITH_PARENT = ("import ctypes, os, signal, sys; ctypes.CDLL(None).prctl(1, signal.SIGTERM); "
                    "os.execv(sys.argv[1], sys.argv[1:])")


class Olah:
    """`olah-cli` serving `root/mirrors` offline on a free port; stopped by its process id."""

    def __init__(self, root: Path):
        self.root, self.port = root, free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        (root / "repos").mkdir(parents=True, exist_ok=True)
        (root / "config.toml").write_text(
            f'[basic]\nhost = "127.0.0.1"\nport = {self.port}\nrepos-path = "./repos"\nmirror-scheme = "http"\n'
            f'mirror-netloc = "127.0.0.1:{self.port}"\nmirror-lfs-netloc = "127.0.0.1:{self.port}"\n'
            'mirrors-path = ["./mirrors"]\n\n[accessibility]\noffline = true\n')
        self.log = root / "olah.log"
        olah = Path(sys.executable).with_name("olah-cli")
        command = [str(olah)] if olah.exists() else [sys.executable, "-m", "olah.server"]
        if sys.platform.startswith("linux"):  # the server ends with the test process, even a killed one
            command = [sys.executable, "-c", _DIE_WITH_PARENT, *command]
        with self.log.open("wb") as log:
            self.process = subprocess.Popen([*command, "-c", "config.toml"], cwd=root, stdout=log,
                                            stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"olah exited: {self.log.read_text(errors='replace')[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError("olah did not start within 60 s")

    def requests(self, since: int = 0) -> list[str]:
        """The HTTP requests logged after byte `since` of the log (`GET /api/...`)."""
        with self.log.open("rb") as handle:
            handle.seek(since)
            lines = handle.read().decode(errors="replace").splitlines()
        return [line.split('"')[1] for line in lines if '" ' in line and "HTTP/1.1" in line]

    def mark(self) -> int:
        return self.log.stat().st_size

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class GatedHub:
    """Answers as the hub does for gated repositories (and 404 RepoNotFound for anything else)."""

    COMMIT = "0123456789abcdef0123456789abcdef01234567"

    def __init__(self, repos: dict[str, list[str]]):
        """`repos`: "models/org/name" or "datasets/org/name" -> the files its listing shows."""
        self.repos = repos
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_HEAD(self):
                hub.answer(self, body=False)

            def do_GET(self):
                hub.answer(self, body=True)

        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def answer(self, handler: BaseHTTPRequestHandler, *, body: bool) -> None:
        path = handler.path.split("?")[0]
        for key, files in self.repos.items():
            kind, repo = key.split("/", 1)
            prefix = "" if kind == "models" else "datasets/"
            if path.startswith(f"/api/{kind}/{repo}/revision/"):
                return self._json(handler, {"id": repo, "sha": self.COMMIT, "gated": "manual",
                                            "siblings": [{"rfilename": f} for f in files]}, body)
            if path.startswith(f"/api/{kind}/{repo}/tree/"):
                return self._json(handler, [{"type": "file", "oid": "0" * 40, "size": 10, "path": f} for f in files],
                                  body)
            if path.startswith(f"/{prefix}{repo}/resolve/"):
                status = 403 if handler.headers.get("Authorization") else 401
                message = f"Access to {kind[:-1]} {repo} is restricted. You must have access to it and be authenticated."
                return self._send(handler, status, {"X-Error-Code": "GatedRepo", "X-Error-Message": message},
                                  json.dumps({"error": message}).encode(), body)
        return self._send(handler, 404, {"X-Error-Code": "RepoNotFound", "X-Error-Message": "Repository not found"},
                          b'{"error": "Repository not found"}', body)

    def _json(self, handler, data, body: bool) -> None:
        self._send(handler, 200, {"X-Repo-Commit": self.COMMIT}, json.dumps(data).encode(), body)

    @staticmethod
    def _send(handler, status: int, headers: dict[str, str], data: bytes, body: bool) -> None:
        handler.send_response(status)
        for name, value in {"Content-Type": "application/json", "Content-Length": str(len(data)), **headers}.items():
            handler.send_header(name, value)
        handler.end_headers()
        if body:
            handler.wfile.write(data)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def hub_env(endpoint: str, root: Path) -> dict[str, str]:
    """The environment of a process using this hub: its address and fresh caches (nothing else
    differs from a run against huggingface.co)."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("HF_", "HUGGING_FACE")) and key not in ("FERTILITY_CACHE_DIR",)}
    env.update({"HF_ENDPOINT": endpoint, "HF_HOME": str(root / "hf-home"), "HF_HUB_CACHE": str(root / "hf-cache"),
                "FERTILITY_CACHE_DIR": str(root / "fertility-cache"), "HF_HUB_DISABLE_TELEMETRY": "1"})
    return env
