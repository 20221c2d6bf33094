"""Golden outputs: every number the tool prints, byte for byte, against files saved before a change.

A refactor must not move a figure. These cases run the real commands (audit on FLORES devtest for a
tiktoken encoding, a Hugging Face tokenizer.json, a SentencePiece model, a GGUF file and the
grapheme baseline; compare; check with JUnit; retrain; the text formats on the bundled samples)
and compare their output with `tests/data/golden/`. Only what does not come from fertility's own
computation is normalised before the comparison: the version of fertility, of Python and of the
libraries, and the absolute paths of this machine. FLORES may not be re-hosted, so text excerpts
from it (the findings' examples) are stored as SHA-256 digests: still compared exactly, never shown.

Regenerate deliberately, after a change that is meant to move numbers, with
`python -m pytest tests/test_golden.py --update-golden`, and say in the commit which figures moved.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from real_files import mistral_file, real_file, shared

from fertility.cli import cli
from fertility.io.samples import samples_dir

GOLDEN = Path(__file__).parent / "data" / "golden"
ROOT = Path(__file__).resolve().parent.parent
ENV = {"COLUMNS": "118", "NO_COLOR": "1", "FERTILITY_FORMAT": None, "GITHUB_STEP_SUMMARY": None}


def _digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def _redact_examples(value):
    """Findings' examples quote corpus text: keep a digest of each, so they still compare exactly."""
    if isinstance(value, dict):
        return {key: ([_digest(json.dumps(item, ensure_ascii=False, sort_keys=True)) for item in item_list]
                      if key == "examples" and isinstance(item_list := value[key], list) else _redact_examples(value[key]))
                for key in value}
    if isinstance(value, list):
        return [_redact_examples(item) for item in value]
    return value


_VERSIONED_KEYS = {"fertility_version", "fertility", "python", "python_unicodedata", "library", "libraries",
                   "fast_path_library"}


def _normalise_signature(value, places: dict[str, str]):
    """Versions, machine paths and wall-clock times are not fertility's numbers: placeholders instead."""
    if isinstance(value, dict):
        return {key: ("<version>" if key in _VERSIONED_KEYS else "<seconds>" if key.endswith("_seconds")
                      else _normalise_signature(item, places)) for key, item in value.items()}
    if isinstance(value, list):
        return [_normalise_signature(item, places) for item in value]
    if isinstance(value, str):
        return _normalise_text(value, places)
    return value


def _normalise_text(text: str, places: dict[str, str]) -> str:
    for path, name in sorted(places.items(), key=lambda item: -len(item[0])):
        text = text.replace(path, name)
    return re.sub(r"version:[0-9][^|\s\"]*", "version:<version>", text)


def normalise_json(text: str, places: dict[str, str]) -> str:
    data = _normalise_signature(_redact_examples(json.loads(text)), places)
    return json.dumps(data, ensure_ascii=False, indent=1, sort_keys=False) + "\n"


def _places(tmp: Path) -> dict[str, str]:
    import sys

    return {str(tmp): "<tmp>", str(ROOT): "<project>", str(Path(sys.prefix)): "<prefix>",
            str(shared()): "<shared>", str(Path.home()): "<home>"}


def run(args: list[str], cwd: Path) -> tuple[int, str, str]:
    runner = CliRunner()
    old = Path.cwd()
    os.chdir(cwd)
    try:
        result = runner.invoke(cli, args, env=ENV, catch_exceptions=False)
    finally:
        os.chdir(old)
    return result.exit_code, result.stdout, result.stderr


def check_golden(name: str, text: str, update: bool) -> None:
    path = GOLDEN / name
    if update:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    if not path.is_file():
        pytest.fail(f"no golden file {path}: run with --update-golden to create it")
    expected = path.read_text(encoding="utf-8")
    assert text == expected, f"{name} differs from its golden file (rerun with --update-golden only if meant)"


@pytest.fixture(scope="module")
def flores() -> Path:
    return shared("flores200", "devtest")


@pytest.fixture(scope="module")
def tokenizer_specs() -> dict[str, str]:
    return {
        "cl100k": "tiktoken:cl100k_base",
        "llama3": str(real_file("llama3/tokenizer.json")),
        "spm": str(mistral_file("mistral_instruct_tokenizer_241114.model.v7")),
        "gguf": str(real_file("gguf/ggml-vocab-llama-spm.gguf")),
        "graphemes": "graphemes",
    }


@pytest.fixture
def update(request) -> bool:
    return bool(request.config.getoption("--update-golden"))


def test_audit_flores_json(flores, tokenizer_specs, tmp_path, update):
    """One audit of five tokenizers of every backend family, with findings, on 23 languages."""
    args = ["audit", "-q", "-f", "json", *[a for spec in tokenizer_specs.values() for a in ("-t", spec)], str(flores)]
    code, out, _ = run(args, tmp_path)
    assert code == 0
    check_golden("audit_flores.json", normalise_json(out, _places(tmp_path)), update)


def test_audit_flores_by_script_sampled(flores, tokenizer_specs, tmp_path, update):
    """By script, over a seeded sample: the sampling and script paths, with their intervals."""
    args = ["audit", "-q", "-f", "json", "-t", tokenizer_specs["cl100k"], "-t", tokenizer_specs["llama3"],
            "--by", "script", "--sample-docs", "200", "--seed", "7", str(flores)]
    code, out, _ = run(args, tmp_path)
    assert code == 0
    check_golden("audit_flores_script_sampled.json", normalise_json(out, _places(tmp_path)), update)


def test_compare_flores_json(flores, tokenizer_specs, tmp_path, update):
    args = ["compare", "-q", "-f", "json", tokenizer_specs["cl100k"], tokenizer_specs["llama3"], str(flores)]
    code, out, _ = run(args, tmp_path)
    assert code == 0
    check_golden("compare_flores.json", normalise_json(out, _places(tmp_path)), update)


def test_check_junit(flores, tokenizer_specs, tmp_path, update):
    """A gate with a passing and a failing threshold: exit code, table and JUnit XML."""
    config = tmp_path / "fertility.toml"
    config.write_text(f'tokenizer = "{tokenizer_specs["cl100k"]}"\ncorpus = "{flores}"\n\n'
                      '[min_chars_per_token]\n"*" = 1.0\neng_Latn = 4.0\n\n'
                      '[max_premium]\nben_Beng = 3.0\n\n[max_grapheme_cut_share]\n"*" = 0.5\n', encoding="utf-8")
    code, out, err = run(["check", "--config", str(config), "--junit", str(tmp_path / "junit.xml")], tmp_path)
    places = _places(tmp_path)
    junit = (tmp_path / "junit.xml").read_text(encoding="utf-8")
    junit = re.sub(r'time="[0-9.]+"', 'time="<time>"', re.sub(r'timestamp="[^"]+"', 'timestamp="<time>"', junit))
    text = f"exit {code}\n--- stdout\n{out}--- stderr\n{err}--- junit\n{junit}"
    check_golden("check_flores.txt", _normalise_text(text, places), update)


@pytest.mark.parametrize("fmt", ["table", "csv", "markdown", "json"])
def test_audit_samples_formats(fmt, tmp_path, update):
    """The default job on the bundled samples, in every text format (the samples are ours to show)."""
    code, out, _ = run(["audit", "-q", "-f", fmt], tmp_path)
    assert code == 0
    places = _places(tmp_path) | {str(samples_dir()): "<samples>"}
    text = normalise_json(out, places) if fmt == "json" else _normalise_text(out, places)
    check_golden(f"audit_samples.{'txt' if fmt == 'table' else 'md' if fmt == 'markdown' else fmt}", text, update)


def test_retrain(tmp_path, update):
    """A small grapheme-aware retrain on the shared monolingual text: the tokenizer's digest, the
    settings and figures of training.json, and the before/after table."""
    ben, eng = shared("mono", "ben"), shared("mono", "eng")
    out = tmp_path / "out"
    code, stdout, _ = run(["retrain", str(ben / "news"), str(eng / "news"), "--vocab-size", "3000",
                           "-o", str(out), "-q", "--compare-with", "tiktoken:cl100k_base", "-f", "json"], tmp_path)
    assert code == 0
    places = _places(tmp_path)
    training = normalise_json((out / "training.json").read_text(encoding="utf-8"), places)
    tokenizer_sha = hashlib.sha256((out / "tokenizer.json").read_bytes()).hexdigest()
    text = (f"tokenizer.json sha256 {tokenizer_sha}\n--- training.json\n{training}"
            f"--- stdout\n{normalise_json(stdout, places)}")
    check_golden("retrain_news.txt", text, update)

