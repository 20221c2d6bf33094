"""GGUF vocabularies counted exactly as llama.cpp counts them.

The references are llama.cpp's own: its models/ggml-vocab-*.gguf.out files hold the token ids
llama.cpp's test-tokenizer-0 produced (no BOS, special tokens not parsed) for the texts of the
matching .inp file, edge cases of whitespace, digits, emoji, CJK and many scripts included.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from real_files import real_file

from fertility import load_tokenizer
from fertility.backends._gguf_read import read_metadata
from fertility.backends.formats import sniff_format
from fertility.cli import cli
from fertility.errors import TokenizerError

# Every family of llama.cpp tokenizer the ggml-vocab files cover: BPE with 11 pre-tokenizer
# names, SentencePiece (llama-spm, phi-3), WordPiece (bert-bge) and Gemma 4's raw-UTF-8 BPE.
VOCABS = ["llama-bpe", "llama-spm", "qwen2", "qwen35", "gpt-2", "phi-3", "command-r", "deepseek-llm",
          "deepseek-coder", "starcoder", "falcon", "mpt", "refact", "bert-bge", "gemma-4"]
SEPARATOR = "\n__ggml_vocab_test__\n"


def vocab(name: str) -> Path:
    return real_file(f"gguf/ggml-vocab-{name}.gguf")


def llama_cpp_cases(name: str) -> list[tuple[str, list[int]]]:
    """(text, llama.cpp's ids) pairs, read as llama.cpp's tests/test-tokenizer-0.cpp reads them."""
    texts = real_file(f"gguf/ggml-vocab-{name}.gguf.inp").read_text(encoding="utf-8").split(SEPARATOR)
    outs = real_file(f"gguf/ggml-vocab-{name}.gguf.out").read_text(encoding="utf-8").split("\n")
    assert len(outs) >= len(texts) > 40
    return [(text, [int(i) for i in out.split()]) for text, out in zip(texts, outs)]


@pytest.fixture(scope="module", params=VOCABS)
def loaded(request):
    return request.param, load_tokenizer(str(vocab(request.param)))


def test_token_ids_equal_llama_cpp_for_every_test_text(loaded):
    name, tokenizer = loaded
    cases = llama_cpp_cases(name)
    wrong = [(text, ids, tokenizer.ids(text)) for text, ids in cases if tokenizer.ids(text) != ids]
    assert not wrong, f"{name}: {len(wrong)} of {len(cases)} texts differ from llama.cpp, e.g. {wrong[0]}"


def test_counted_spans_equal_llama_cpp_token_counts(loaded):
    """What the audit counts (the Tokenizer protocol's spans) is llama.cpp's number of tokens."""
    name, tokenizer = loaded
    cases = llama_cpp_cases(name)
    encoded = tokenizer.encode([text for text, _ in cases])
    for (text, ids), enc in zip(cases, encoded):
        assert len(enc.starts) == len(ids), (name, text)
        if len(ids):
            assert 0 <= enc.starts.min() and enc.ends.max() <= len(text.encode("utf-8"))


def test_gguf_is_recognised_by_content_whatever_its_name(tmp_path):
    renamed = tmp_path / "model.bin"
    shutil.copyfile(vocab("qwen2"), renamed)
    assert sniff_format(renamed) == "gguf"
    assert load_tokenizer(str(renamed)).info()["backend"] == "gguf"
    assert load_tokenizer(f"gguf:{renamed}").info()["model"].startswith("llama.cpp gpt2: bpe, pre qwen2")


def test_info_names_the_runtime_settings():
    info = load_tokenizer(str(vocab("llama-spm"))).info()
    assert info["backend"] == "gguf" and info["vocab_size"] == "32000"
    assert "space prefix on" in info["model"] and "BOS/EOS not added" in info["special_tokens"]


def _patched(tmp_path: Path, name: str, old: bytes, new: bytes) -> Path:
    data = vocab(name).read_bytes()
    assert data.count(old) == 1 and len(old) == len(new)
    target = tmp_path / f"{name}-patched.gguf"
    target.write_bytes(data.replace(old, new))
    return target


def run(*args):
    return CliRunner().invoke(cli, list(args), env={"COLUMNS": "200", "NO_COLOR": "1"})


def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "eng_Latn.txt").write_text("The river market opens at dawn.\nBoats arrive.\n", encoding="utf-8")
    (folder / "ben_Beng.txt").write_text("নদীর বাজার ভোরে খোলে।\nনৌকা আসে।\n", encoding="utf-8")
    return folder


def test_unknown_pre_tokenizer_is_refused_naming_it(tmp_path):
    """`tokenizer.ggml.pre` = "qwen9": llama.cpp does not know it either; never approximated."""
    key = b"tokenizer.ggml.pre\x08\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00"
    bad = _patched(tmp_path, "qwen2", key + b"qwen2", key + b"qwen9")
    result = run("audit", "-t", str(bad), str(corpus(tmp_path)))
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]
    assert str(bad) in result.stderr and "'qwen9' is not supported" in result.stderr


def test_unknown_tokenizer_model_is_refused(tmp_path):
    key = b"tokenizer.ggml.model\x08\x00\x00\x00\x04\x00\x00\x00\x00\x00\x00\x00"
    bad = _patched(tmp_path, "gpt-2", key + b"gpt2", key + b"gpt9")
    result = run("audit", "-t", str(bad), str(corpus(tmp_path)))
    assert result.exit_code == 2 and "tokenizer model 'gpt9' is not supported" in result.stderr


@pytest.mark.parametrize("keep", [4, 30, 4000])
def test_truncated_gguf_is_one_line_exit_2(tmp_path, keep):
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(vocab("llama-spm").read_bytes()[:keep])
    result = run("audit", "-t", str(cut), str(corpus(tmp_path)))
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and str(cut) in result.stderr
    assert "truncated GGUF file" in result.stderr


def test_audit_counts_gguf_tokens_as_llama_cpp(tmp_path):
    """End to end: the audit's n_tokens per language is the sum of llama.cpp's per-line counts."""
    folder = corpus(tmp_path)
    path = vocab("qwen2")
    result = run("audit", "-t", str(path), "-f", "json", "--no-findings", str(folder))
    assert result.exit_code == 0, result.output
    rows = {row["lang"]: row for row in json.loads(result.stdout)["rows"]}
    tokenizer = load_tokenizer(str(path))
    for lang in ("eng_Latn", "ben_Beng"):
        lines = (folder / f"{lang}.txt").read_text(encoding="utf-8").splitlines()
        assert rows[lang]["n_tokens"] == sum(len(tokenizer.ids(line)) for line in lines)
    signature = json.loads(result.stdout)["signature"]
    assert "gguf" in json.dumps(signature["tokenizers"])


REFERENCE = Path(__file__).resolve().parents[1] / "data" / "gguf_llama_cpp_flores.json"


def test_per_line_counts_equal_llama_cpp_on_flores_devtest(loaded):
    """llama.cpp's own per-line counts (written by benchmarks/gguf_vs_llama_cpp.py from a
    llama.cpp build) on the first FLORES devtest lines of seven scripts' languages."""
    from real_files import shared

    name, tokenizer = loaded
    reference = json.loads(REFERENCE.read_text(encoding="utf-8"))
    for lang, counts in reference["counts"][name].items():
        lines = shared("flores200", "devtest", f"{lang}.txt").read_text(encoding="utf-8").split("\n")
        lines = lines[:reference["first_lines"]]
        assert [len(e.starts) for e in tokenizer.encode(lines)] == counts, (name, lang)


@pytest.mark.slow
def test_every_flores_devtest_line_equals_a_llama_cpp_build():
    """With FERTILITY_LLAMA_LINES pointing at the tool benchmarks/gguf_vs_llama_cpp.py describes:
    ids of every line of every FLORES devtest language, for every vocabulary."""
    import os
    import sys

    tool = os.environ.get("FERTILITY_LLAMA_LINES")
    if not tool:
        pytest.skip("FERTILITY_LLAMA_LINES not set (a llama.cpp build is not part of the test setup)")
    from real_files import shared

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import gguf_vs_llama_cpp

    assert gguf_vs_llama_cpp.compare(Path(tool), shared("flores200", "devtest"), gguf_vs_llama_cpp.VOCABS) == 0


def test_signature_hash_covers_the_tokenizer_not_the_weights(tmp_path):
    """Two files with the same vocabulary but other bytes elsewhere (a renamed model) share the
    hash; a changed merge changes it."""
    original = vocab("gpt-2")
    key = b"general.name"
    data = original.read_bytes()
    same = load_tokenizer(str(original)).info()["sha256"]
    assert data.count(key) == 1
    renamed = tmp_path / "renamed.gguf"
    renamed.write_bytes(data.replace(key, b"general.nbme", 1))
    assert load_tokenizer(str(renamed)).info()["sha256"] == same
    merge = b"\xc4\xa0 t"  # GPT-2's first merge, "Ġ t"
    changed = tmp_path / "changed.gguf"
    changed.write_bytes(data.replace(merge, b"\xc4\xa0 a", 1))
    assert load_tokenizer(str(changed)).info()["sha256"] != same


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_damaged_gguf_header_never_gives_a_traceback(tmp_path, data):
    """Bytes of a real vocab file's metadata changed at random: a TokenizerError naming the
    file, or a tokenizer that counts; never another exception."""
    original = bytearray(vocab("bert-bge").read_bytes())
    for _ in range(data.draw(st.integers(1, 6))):
        position = data.draw(st.integers(4, 4_000))
        original[position] = data.draw(st.integers(0, 255))
    damaged = tmp_path / "damaged.gguf"
    damaged.write_bytes(bytes(original))
    try:
        tokenizer = load_tokenizer(str(damaged))
    except TokenizerError as err:
        assert str(damaged) in str(err) and "\n" not in str(err)
    else:
        tokenizer.encode(["The river market opens at dawn. নদীর বাজার"])


@pytest.mark.parametrize("name", ["bert-bge", "qwen2", "llama-spm"])
def test_gguf_tokenizers_pickle_for_worker_processes(name):
    import pickle

    tokenizer = load_tokenizer(str(vocab(name)))
    copy = pickle.loads(pickle.dumps(tokenizer))
    texts = [text for text, _ in llama_cpp_cases(name)]
    assert [list(e.starts) for e in copy.encode(texts)] == [list(e.starts) for e in tokenizer.encode(texts)]


# --- models pulled by Ollama ---------------------------------------------------------------

def ollama_store(root: Path, name: str, tag: str, gguf: Path) -> Path:
    """Ollama's store layout: manifests/<host>/<namespace>/<model>/<tag> naming blobs/sha256-<hex>."""
    import hashlib

    data = gguf.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    (root / "blobs").mkdir(parents=True, exist_ok=True)
    (root / "blobs" / f"sha256-{digest}").write_bytes(data)
    manifest = root / "manifests" / "registry.ollama.ai" / "library" / name / tag
    manifest.parent.mkdir(parents=True, exist_ok=True)
    manifest.write_text(json.dumps({"schemaVersion": 2, "layers": [
        {"mediaType": "application/vnd.ollama.image.template", "digest": "sha256:" + "0" * 64, "size": 1},
        {"mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:{digest}", "size": len(data)}]}))
    return root


def test_ollama_model_is_its_gguf_counted_as_llama_cpp(tmp_path, monkeypatch):
    monkeypatch.setenv("OLLAMA_MODELS", str(ollama_store(tmp_path / "models", "qwen2", "0.5b", vocab("qwen2"))))
    tokenizer = load_tokenizer("ollama:qwen2:0.5b")
    assert tokenizer.name == "qwen2:0.5b" and tokenizer.info()["backend"] == "gguf"
    for text, ids in llama_cpp_cases("qwen2"):
        assert tokenizer.ids(text) == ids
    listed = CliRunner().invoke(cli, ["tokenizers", "--json"], env={"OLLAMA_MODELS": str(tmp_path / "models")})
    assert "ollama:qwen2:0.5b" in {row["spec"] for row in json.loads(listed.stdout)["available"]}


def test_ollama_model_not_pulled_is_one_clear_line(tmp_path, monkeypatch):
    monkeypatch.setenv("OLLAMA_MODELS", str(tmp_path / "empty"))
    result = run("audit", "-t", "ollama:llama3.2", str(corpus(tmp_path)))
    assert result.exit_code == 2 and "ollama pull llama3.2" in result.stderr and "Traceback" not in result.output


def test_an_audit_with_findings_of_a_wordpiece_gguf_lists_its_vocabulary():
    """Its custom (Python) normalizer cannot be serialized; the vocabulary listing once crashed on it."""
    result = CliRunner().invoke(cli, ["audit", "-t", str(vocab("bert-bge")), "-f", "json", "-q"])
    assert result.exit_code == 0, result.output
    listed = json.loads(result.stdout)["vocabulary"]["ggml-vocab-bert-bge"]
    raw = load_tokenizer(str(vocab("bert-bge"))).tokenizer
    assert listed["size"] == raw.get_vocab_size(with_added_tokens=True)
    # control tokens ([PAD], [CLS], [SEP], [MASK]) and the unknown token, as the file's token types say
    types = read_metadata(vocab("bert-bge"))["tokenizer.ggml.token_type"].tolist()
    assert listed["n_special"] == sum(1 for kind in types if kind in (2, 3)) == 5
    assert listed["by_script"]["Beng"] == sum(
        1 for token in raw.get_vocab() if any("\u0980" <= c <= "\u09ff" for c in token))


def test_the_unknown_token_of_a_wordpiece_gguf_is_counted_whatever_its_type(tmp_path):
    """BERT GGUF files type [UNK] (tokenizer.ggml.unknown_token_id, 100) as a control token; the
    id llama.cpp emits for a word it cannot spell is still the unknown token (it showed 0 unknown
    tokens on Amharic, which the same vocabulary as a tokenizer.json spells mostly as [UNK])."""
    path = vocab("bert-bge")
    meta = read_metadata(path)
    unk = int(meta["tokenizer.ggml.unknown_token_id"])
    assert meta["tokenizer.ggml.token_type"][unk] == 3  # control
    from real_files import shared

    from fertility import audit

    lines = (shared("flores200", "devtest") / "amh_Ethi.txt").read_text(encoding="utf-8").splitlines()[:50]
    tokenizer = load_tokenizer(str(path))
    expected = sum(tokenizer.ids(line).count(unk) for line in lines)
    (tmp_path / "amh_Ethi.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = audit([tokenizer], [tmp_path / "amh_Ethi.txt"], diagnose=False, cache=False)
    counts = result.counts[(tokenizer.name, "amh_Ethi")]
    assert counts.n_unknown_tokens == expected > len(lines)
