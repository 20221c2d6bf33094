"""Ollama manifests are files a user did not write: `ollama:NAME` reads only inside the model
store, and a malformed manifest is one line naming it.

A layer digest of `../..` once loaded a file outside the store; layers that were null or strings
ended in tracebacks. Here hypothesis writes the manifests, digests and names.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from real_files import real_file

from fertility.backends import load_tokenizer
from fertility.backends._ollama import OLLAMA_MODEL_LAYER, ollama_manifest
from fertility.errors import TokenizerError

MODEL = "application/vnd.ollama.image.model"
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
                    max_leaves=12)
suppress = settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=80, deadline=None)


@pytest.fixture
def store(tmp_path: Path, monkeypatch) -> Path:
    root = tmp_path / "models"
    (root / "blobs").mkdir(parents=True)
    monkeypatch.setenv("OLLAMA_MODELS", str(root))
    return root


def write_manifest(store: Path, document: object, *, name: str = "tiny") -> Path:
    path = store / "manifests" / "registry.ollama.ai" / "library" / name / "latest"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def load_error(spec: str = "ollama:tiny") -> str:
    with pytest.raises(TokenizerError) as caught:
        load_tokenizer(spec)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_the_media_type_is_ollamas() -> None:
    assert OLLAMA_MODEL_LAYER == MODEL


@suppress
@given(document=st.one_of(JSON, st.fixed_dictionaries({"layers": JSON}),
                          st.fixed_dictionaries({"layers": st.lists(st.fixed_dictionaries(
                              {"mediaType": st.one_of(st.just(MODEL), JSON), "digest": JSON}), max_size=3)})))
def test_any_manifest_without_a_real_blob_is_one_line(store: Path, document: object) -> None:
    manifest = write_manifest(store, document)
    message = load_error()
    assert message.startswith((str(manifest), "ollama:tiny:")), message


@suppress
@given(digest=st.one_of(st.text(max_size=80), st.from_regex(r"sha256:[0-9a-fA-F./-]{60,70}", fullmatch=True),
                        st.sampled_from(["../../secret.gguf", "sha256:../../../secret", "sha256-" + "a" * 64,
                                         "sha256:" + "A" * 64, "sha512:" + "a" * 64, "sha256:" + "a" * 64 + "\n"])))
def test_a_digest_must_be_sha256_and_hex(store: Path, digest: str) -> None:
    manifest = write_manifest(store, {"layers": [{"mediaType": MODEL, "digest": digest}]})
    message = load_error()
    if digest.startswith("sha256:") and len(digest) == 71 and all(c in "0123456789abcdef" for c in digest[7:]):
        assert "is missing from the store" in message  # well formed: only the blob is absent
    else:
        assert message.startswith(f"{manifest}: the model layer's digest")


@given(name=st.text(max_size=40))
def test_a_model_name_never_leaves_the_manifests_folder(name: str) -> None:
    root = Path(os.environ.get("OLLAMA_MODELS") or Path.home() / ".ollama" / "models") / "manifests"
    try:
        path = ollama_manifest(name)
    except TokenizerError as err:
        assert str(err).startswith(f"ollama:{name}: not an Ollama model name")
        return
    assert os.path.normpath(path).startswith(str(root) + os.sep)
    assert ".." not in path.relative_to(root).parts


def _blob(store: Path, source: Path) -> str:
    data = source.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    (store / "blobs" / f"sha256-{digest}").write_bytes(data)
    return f"sha256:{digest}"


def test_a_valid_manifest_loads_and_a_blob_linked_outside_the_store_does_not(store: Path, tmp_path: Path) -> None:
    gguf = real_file("gguf/ggml-vocab-qwen2.gguf")
    digest = _blob(store, gguf)
    write_manifest(store, {"layers": [{"mediaType": "application/vnd.ollama.image.license", "digest": digest},
                                      {"mediaType": MODEL, "digest": digest}]})
    assert load_tokenizer("ollama:tiny").name == "tiny:latest"
    outside = tmp_path / "elsewhere.gguf"
    outside.write_bytes(gguf.read_bytes())
    fake = "sha256:" + "b" * 64
    (store / "blobs" / f"sha256-{'b' * 64}").symlink_to(outside)
    write_manifest(store, {"layers": [{"mediaType": MODEL, "digest": fake}]}, name="linked")
    assert "is a link to a file outside the store" in load_error("ollama:linked")


@pytest.mark.parametrize("body, problem", [
    ("[" * 100_000 + "]" * 100_000, "not JSON"),
    ('{"layers": [{"mediaType": 7}]}', "layer 1 has no mediaType"),
    ('{"layers": {"mediaType": "x"}}', "'layers' is dict, not a list"),
    ('{"layers": []}', "0 layers of type application/vnd.ollama.image.model"),
    ('"layers"', "a JSON str, not an object"),
])
def test_malformed_manifests_say_what_is_wrong(store: Path, body: str, problem: str) -> None:
    path = store / "manifests" / "registry.ollama.ai" / "library" / "tiny" / "latest"
    path.parent.mkdir(parents=True)
    path.write_text(body, encoding="utf-8")
    assert problem in load_error()


def test_a_manifest_that_is_a_fifo_does_not_block(store: Path) -> None:
    path = store / "manifests" / "registry.ollama.ai" / "library" / "tiny" / "latest"
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    assert "not a regular file" in load_error()
