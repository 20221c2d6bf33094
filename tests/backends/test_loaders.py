"""Loaders for formats people ship, counted as their own runtime counts: Qwen's ranks file with
its runtime NFC, `--normalize`, older Hugging Face folders, the hub cache, `fertility tokenizers`."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
import types
import unicodedata
from pathlib import Path

import pytest
from click.testing import CliRunner
from real_files import real_file, shared

from fertility import load_tokenizer
from fertility.cli import cli


def run(*args, env=None):
    return CliRunner().invoke(cli, list(args), env={"COLUMNS": "200", "NO_COLOR": "1", **(env or {})})


def qwen_reference():
    """dashscope's own QwenTokenizer (its qwen_tokenizer.py, loaded without the rest of dashscope)."""
    ranks = real_file("qwen/qwen.tiktoken")
    base, code = real_file("qwen/tokenizer_base.py"), real_file("qwen/qwen_tokenizer.py")
    package = types.ModuleType("dashscope_tokenizers")
    package.__path__ = [str(base.parent)]
    sys.modules["dashscope_tokenizers"] = package
    for name, path in (("tokenizer_base", base), ("qwen_tokenizer", code)):
        spec = importlib.util.spec_from_file_location(f"dashscope_tokenizers.{name}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    return sys.modules["dashscope_tokenizers.qwen_tokenizer"].QwenTokenizer(str(ranks))


@pytest.fixture(scope="module")
def qwen():
    return qwen_reference()


def flores_lines(lang: str) -> list[str]:
    return shared("flores200", "devtest", f"{lang}.txt").read_text(encoding="utf-8").splitlines()


def test_qwen_ranks_file_is_recognised_with_its_pattern_and_runtime_nfc():
    tokenizer = load_tokenizer(str(real_file("qwen/qwen.tiktoken")))
    info = tokenizer.info()
    assert tokenizer.name == "qwen" and info["pattern"] == "qwen"
    assert info["normalize"].startswith("nfc (runtime: Qwen's tokenizer applies NFC")


@pytest.mark.parametrize("lang", ["ben_Beng", "hin_Deva", "eng_Latn", "zho_Hans"])
def test_qwen_counts_equal_qwens_own_tokenizer_on_flores(qwen, lang):
    """Bengali's nukta letters (U+09DC/DD/DF) are NFC composition exclusions: counted without
    Qwen's NFC, the numbers would differ."""
    lines = flores_lines(lang)
    tokenizer = load_tokenizer(str(real_file("qwen/qwen.tiktoken")))
    ours = [len(e.starts) for e in tokenizer.encode(lines)]
    theirs = [len(qwen.encode(line, allowed_special=set())) for line in lines]
    assert ours == theirs


def test_without_runtime_nfc_bengali_counts_differ(qwen):
    lines = [line for line in flores_lines("ben_Beng") if not unicodedata.is_normalized("NFC", line)]
    assert lines, "FLORES Bengali devtest holds lines NFC changes"
    raw = load_tokenizer(str(real_file("qwen/qwen.tiktoken")), normalize="none")
    assert raw.info()["normalize"].startswith("none (--normalize, overriding the runtime")
    assert [len(e.starts) for e in raw.encode(lines)] != [len(qwen.encode(line, allowed_special=set())) for line in lines]


def test_spans_map_back_to_the_raw_text():
    """The text NFC changes: token spans are raw-text byte offsets, ordered, ending at its end."""
    text = "ড়াই e\u0301te 가"  # U+09DC decomposes under NFC; e + combining acute composes
    tokenizer = load_tokenizer(str(real_file("qwen/qwen.tiktoken")))
    (enc,) = tokenizer.encode([text])
    assert enc.ends[-1] == len(text.encode("utf-8")) and enc.starts[0] == 0
    assert (enc.starts[1:] >= enc.starts[:-1]).all() and (enc.ends >= enc.starts).all()


def test_cli_normalize_counts_tokens_on_normalized_text_and_units_on_raw(tmp_path):
    corpus = tmp_path / "ben_Beng.txt"
    line = "ড়াই\u09dc e\u0301te"
    corpus.write_text(line + "\n", encoding="utf-8")
    ranks = str(real_file("gpt2.tiktoken"))
    rows = {}
    for form in ("none", "nfkc"):
        result = run("audit", "-t", ranks, "--normalize", form, "-f", "json", "--no-findings", str(corpus))
        assert result.exit_code == 0, result.output
        payload = json.loads(result.stdout)
        rows[form] = next(r for r in payload["rows"] if r["lang"] == "ben_Beng")
        assert form in json.dumps(payload["signature"]["tokenizers"])
    gpt2 = load_tokenizer(ranks).encoding
    assert rows["none"]["n_tokens"] == len(gpt2.encode_ordinary(line))
    assert rows["nfkc"]["n_tokens"] == len(gpt2.encode_ordinary(unicodedata.normalize("NFKC", line)))
    assert rows["none"]["n_tokens"] != rows["nfkc"]["n_tokens"]
    assert rows["none"]["n_bytes"] == rows["nfkc"]["n_bytes"] == len(line.encode("utf-8"))


def test_bad_normalize_value_is_a_usage_error(tmp_path):
    result = run("audit", "--normalize", "nfd", str(tmp_path))
    assert result.exit_code == 2 and "nfd" in result.output


def test_normalize_with_saved_audits_is_refused(tmp_path):
    corpus = tmp_path / "eng_Latn.txt"
    corpus.write_text("Boats arrive.\n", encoding="utf-8")
    saved = []
    for name in ("a.json", "b.json"):
        result = run("audit", "-t", "bytes", "-f", "json", "--no-findings", "-o", str(tmp_path / name), str(corpus))
        assert result.exit_code == 0, result.output
        saved.append(str(tmp_path / name))
    result = run("compare", *saved, "--normalize", "nfc")
    assert result.exit_code == 2 and "--normalize only applies when tokenizing" in result.stderr


def test_check_accepts_normalize_from_the_config(tmp_path):
    corpus = tmp_path / "ben_Beng.txt"
    corpus.write_text("ড়াই\u09dc\n", encoding="utf-8")
    config = tmp_path / "fertility.toml"
    config.write_text(f'tokenizer = "{real_file("gpt2.tiktoken")}"\ncorpus = ["{corpus}"]\nnormalize = "nfkc"\n'
                      "min_chars_per_token = 0.01\n", encoding="utf-8")
    assert run("check", "--config", str(config)).exit_code == 0
    config.write_text(config.read_text(encoding="utf-8").replace('"nfkc"', '"nfq"'), encoding="utf-8")
    result = run("check", "--config", str(config))
    assert result.exit_code == 2 and "nfq" in result.stderr


# --- older Hugging Face folders and the hub cache -----------------------------------------

def gpt2_vocab_folder(folder: Path) -> Path:
    """GPT-2's own vocab.json + merges.txt, written out of llama.cpp's GPT-2 GGUF (the same
    50257 tokens and 50000 merges transformers' GPT2Tokenizer reads)."""
    from fertility.backends._gguf_read import read_metadata

    meta = read_metadata(real_file("gguf/ggml-vocab-gpt-2.gguf"))
    folder.mkdir(parents=True, exist_ok=True)
    tokens = meta["tokenizer.ggml.tokens"]
    (folder / "vocab.json").write_text(json.dumps({t: i for i, t in enumerate(tokens)}), encoding="utf-8")
    (folder / "merges.txt").write_text("#version: 0.2\n" + "\n".join(meta["tokenizer.ggml.merges"]) + "\n",
                                       encoding="utf-8")
    (folder / "tokenizer_config.json").write_text('{"tokenizer_class": "GPT2Tokenizer"}', encoding="utf-8")
    return folder


@pytest.mark.parametrize("lang", ["ben_Beng", "eng_Latn", "zho_Hans"])
def test_vocab_json_and_merges_folder_counts_like_gpt2(tmp_path, lang):
    tokenizer = load_tokenizer(str(gpt2_vocab_folder(tmp_path / "gpt2")))
    assert tokenizer.info()["backend"] == "hf" and tokenizer.name == "gpt2"
    reference = load_tokenizer(str(real_file("gpt2.tiktoken"))).encoding
    lines = flores_lines(lang)[:300]
    assert [len(e.starts) for e in tokenizer.encode(lines)] == [len(reference.encode_ordinary(t)) for t in lines]


def hub_snapshot(root: Path, repo_id: str) -> Path:
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = root / ("models--" + repo_id.replace("/", "--"))
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    return repo / "snapshots" / commit


def test_hub_cache_entry_with_only_vocab_and_merges_loads(tmp_path, monkeypatch):
    root = tmp_path / "hub"
    gpt2_vocab_folder(hub_snapshot(root, "openai-community/gpt2"))
    monkeypatch.setenv("HF_HUB_CACHE", str(root))
    tokenizer = load_tokenizer("hf:openai-community/gpt2")
    reference = load_tokenizer(str(real_file("gpt2.tiktoken"))).encoding
    assert tokenizer.name == "openai-community/gpt2"
    text = "নদীর বাজার ভোরে খোলে। The river market opens at dawn."
    assert len(tokenizer.encode([text])[0].starts) == len(reference.encode_ordinary(text))


def test_folder_and_hub_entry_with_only_tokenizer_model_and_config_load(tmp_path, monkeypatch):
    from real_files import mistral_file

    model = mistral_file("tokenizer.model.v1")
    for folder in (tmp_path / "plain", hub_snapshot(tmp_path / "hub", "mistralai/Mistral-7B-v0.1")):
        folder.mkdir(parents=True)
        shutil.copyfile(model, folder / "tokenizer.model")
        (folder / "tokenizer_config.json").write_text('{"tokenizer_class": "LlamaTokenizer"}', encoding="utf-8")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    for spec in (str(tmp_path / "plain"), "hf:mistralai/Mistral-7B-v0.1"):
        assert load_tokenizer(spec).info()["backend"] == "spm"


def test_hub_cache_entry_with_a_gguf_loads(tmp_path, monkeypatch):
    snapshot = hub_snapshot(tmp_path / "hub", "Qwen/Qwen2-0.5B-Instruct-GGUF")
    snapshot.mkdir(parents=True)
    shutil.copyfile(real_file("gguf/ggml-vocab-qwen2.gguf"), snapshot / "qwen2-0_5b-instruct-q4_0.gguf")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    assert load_tokenizer("hf:Qwen/Qwen2-0.5B-Instruct-GGUF").info()["backend"] == "gguf"


def test_folder_with_mismatched_vocab_and_merges_is_one_clear_error(tmp_path):
    folder = gpt2_vocab_folder(tmp_path / "broken")
    (folder / "vocab.json").write_text('{"a": 0}', encoding="utf-8")
    result = run("audit", "-t", str(folder), str(tmp_path))
    assert result.exit_code == 2 and str(folder) in result.stderr and "Traceback" not in result.output


# --- folders only transformers reads -------------------------------------------------------

def bert_vocab_folder(folder: Path) -> Path:
    """all-MiniLM-L6-v2's WordPiece vocabulary as the vocab.txt + tokenizer_config.json folder
    BERT models shipped before tokenizer.json."""
    config = json.loads(real_file("minilm/tokenizer.json").read_text(encoding="utf-8"))
    folder.mkdir(parents=True, exist_ok=True)
    ordered = sorted(config["model"]["vocab"].items(), key=lambda item: item[1])
    (folder / "vocab.txt").write_text("".join(token + "\n" for token, _ in ordered), encoding="utf-8")
    (folder / "tokenizer_config.json").write_text('{"tokenizer_class": "BertTokenizer", "do_lower_case": true}',
                                                  encoding="utf-8")
    return folder


@pytest.mark.parametrize("lang", ["ben_Beng", "eng_Latn", "zho_Hans"])
def test_bert_vocab_txt_folder_loads_through_transformers(tmp_path, lang):
    pytest.importorskip("transformers")
    tokenizer = load_tokenizer(str(bert_vocab_folder(tmp_path / "minilm")))
    info = tokenizer.info()
    assert info["backend"] == "transformers" and info["model"].startswith("BertTokenizer")
    reference = load_tokenizer(str(real_file("minilm/tokenizer.json")))
    lines = flores_lines(lang)[:300]
    assert [len(e.starts) for e in tokenizer.encode(lines)] == [len(e.starts) for e in reference.encode(lines)]


def test_transformers_never_runs_repository_code(tmp_path):
    """A folder asking for its own tokenizer class (auto_map) is refused, never executed."""
    pytest.importorskip("transformers")
    folder = bert_vocab_folder(tmp_path / "remote")
    (folder / "tokenizer_config.json").write_text(json.dumps(
        {"tokenizer_class": "EvilTokenizer", "auto_map": {"AutoTokenizer": ["evil.EvilTokenizer", None]}}),
        encoding="utf-8")
    (folder / "evil.py").write_text(f"open({str(tmp_path / 'ran')!r}, 'w').write('x')\n", encoding="utf-8")
    result = run("audit", "-t", str(folder), str(tmp_path))
    assert result.exit_code == 2 and str(folder) in result.stderr
    assert not (tmp_path / "ran").exists()


# --- fertility tokenizers -----------------------------------------------------------------

def test_tokenizers_lists_what_loads_offline_with_backend_and_vocab_size(tmp_path):
    import hashlib

    hub = tmp_path / "hub"
    snapshot = hub_snapshot(hub, "Qwen/Qwen2-0.5B-Instruct-GGUF")
    snapshot.mkdir(parents=True)
    shutil.copyfile(real_file("gguf/ggml-vocab-qwen2.gguf"), snapshot / "model.gguf")
    hub_snapshot(hub, "someone/empty-model").mkdir(parents=True)  # nothing to load: not listed
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    url = "https://openaipublic.blob.core.windows.net/encodings/r50k_base.tiktoken"
    shutil.copyfile(real_file("gpt2.tiktoken"), cache / hashlib.sha1(url.encode()).hexdigest())
    result = run("tokenizers", "--json", env={"HF_HUB_CACHE": str(hub), "TIKTOKEN_CACHE_DIR": str(cache)})
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    rows = {row["spec"]: row for row in payload["available"]}
    assert rows["hf:Qwen/Qwen2-0.5B-Instruct-GGUF"]["backend"] == "gguf"
    gguf_size = load_tokenizer(str(real_file("gguf/ggml-vocab-qwen2.gguf"))).info()["vocab_size"]
    assert rows["hf:Qwen/Qwen2-0.5B-Instruct-GGUF"]["vocab_size"] == gguf_size
    gpt2_size = load_tokenizer(str(real_file("gpt2.tiktoken"))).info()["vocab_size"]
    assert rows["tiktoken:r50k_base"] == {"spec": "tiktoken:r50k_base", "backend": "tiktoken",
                                          "vocab_size": gpt2_size, "where": "tiktoken cache"}
    assert "hf:someone/empty-model" not in rows
    assert {"hf", "spm", "tiktoken", "tekken", "gguf", "transformers"} <= set(payload["formats"])
    table = run("tokenizers", env={"HF_HUB_CACHE": str(hub), "TIKTOKEN_CACHE_DIR": str(cache)})
    assert table.exit_code == 0 and "hf:Qwen/Qwen2-0.5B-Instruct-GGUF" in table.stdout


def test_normalized_tokenizer_pickles():
    import pickle

    tokenizer = load_tokenizer(str(real_file("qwen/qwen.tiktoken")))
    copy = pickle.loads(pickle.dumps(tokenizer))
    text = "ড়াই e\u0301te"
    assert copy.info() == tokenizer.info()
    assert list(copy.encode([text])[0].ends) == list(tokenizer.encode([text])[0].ends)
