"""A byte-level BPE trained without `initial_alphabet` holds only the bytes of its training text,
and with no unknown token and no byte fallback the library drops every other byte without a
token: Bengali audited with an English-trained one counted 4 tokens for 82 bytes (7.5 bytes per
token, better than English's 4), and a script of bytes it never saw would count 0. Such a file
is refused; bytes that never occur in UTF-8 may be missing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tokenizers
from click.testing import CliRunner
from hostile import BEN, ENG, tiny
from tokenizers import decoders, models, pre_tokenizers, trainers

from fertility.cli import cli


def _trained(*, alphabet: bool) -> dict:
    tokenizer = tokenizers.Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    initial = pre_tokenizers.ByteLevel.alphabet() if alphabet else []
    tokenizer.train_from_iterator([ENG] * 20, trainers.BpeTrainer(vocab_size=320, initial_alphabet=initial,
                                                                  show_progress=False))
    return json.loads(tokenizer.to_str())


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return tiny(tmp_path)


def _audit(tokenizer: Path, corpus: Path):
    return CliRunner().invoke(cli, ["audit", "-q", "--no-findings", "-f", "json", "-t", str(tokenizer), str(corpus)])


def test_a_byte_level_bpe_missing_bytes_is_refused(tmp_path: Path, corpus: Path) -> None:
    path = tmp_path / "english-only.json"
    config = _trained(alphabet=False)
    path.write_text(json.dumps(config), encoding="utf-8")
    raw = tokenizers.Tokenizer.from_file(str(path))
    assert len(raw.encode(BEN.splitlines()[0]).ids) < 6  # the trap itself: most of the line is dropped
    result = _audit(path, corpus)
    assert result.exit_code == 2, result.stderr
    # Missing: every byte but those of the training text, the 13 that UTF-8 never holds, the two
    # leads of unassigned planes and the 30 C0 controls other than tab, line feed and return (and DEL).
    missing = sorted(set(range(0x09, 0xF1)) - {0x0B, 0x0C, *range(0x0E, 0x20), 0x7F, 0xC0, 0xC1}
                     - set(ENG.encode("utf-8"))) + [0xF3, 0xF4]
    shown = " ".join(f"{b:02x}" for b in missing[:8])
    assert result.stderr.startswith(f"fertility: error: {path}: byte-level BPE without {len(missing)} of the bytes "
                                    f"UTF-8 text is made of (bytes {shown} ...) and without an unknown "
                                    "token or byte fallback"), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_bytes_that_utf8_never_holds_may_be_missing(tmp_path: Path, corpus: Path) -> None:
    full = _trained(alphabet=True)
    trimmed = json.loads(json.dumps(full))
    # GPT-2's alphabet spells the printable Latin-1 bytes as themselves: c0, c1 and f5-ff among them.
    never = [chr(c) for c in (0xC0, 0xC1, *range(0xF5, 0x100))]
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    assert all(c in alphabet for c in never)
    for symbol in never:
        del trimmed["model"]["vocab"][symbol]
    (tmp_path / "full.json").write_text(json.dumps(full), encoding="utf-8")
    (tmp_path / "trimmed.json").write_text(json.dumps(trimmed), encoding="utf-8")
    results = [_audit(tmp_path / name, corpus) for name in ("full.json", "trimmed.json")]
    assert [r.exit_code for r in results] == [0, 0], [r.stderr for r in results]
    rows = [[(row["lang"], row["n_tokens"]) for row in json.loads(r.stdout)["rows"]] for r in results]
    assert rows[0] == rows[1]


def test_an_unknown_token_makes_missing_bytes_visible(tmp_path: Path, corpus: Path) -> None:
    """With an unknown token the missing bytes are counted as unknown tokens, so the file loads."""
    config = _trained(alphabet=False)
    config["model"]["vocab"]["<unk>"] = len(config["model"]["vocab"])
    config["model"]["unk_token"] = "<unk>"
    path = tmp_path / "with-unk.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    result = _audit(path, corpus)
    assert result.exit_code == 0, result.stderr
    bengali = next(row for row in json.loads(result.stdout)["rows"] if row["lang"] == "ben_Beng")
    assert bengali["n_unknown_tokens"] > 0


@pytest.mark.parametrize("name", ["falcon", "starcoder"])
def test_real_vocabularies_without_control_bytes_or_unassigned_leads_load(tmp_path: Path, corpus: Path,
                                                                          name: str) -> None:
    """Falcon's vocabulary lacks 15 C0 control bytes and StarCoder's the lead byte F1 (planes
    4-7, where nothing is assigned); saved as tokenizer.json (no unknown token, no byte
    fallback), both are correct tokenizers and must load: real text round-trips through them."""
    from fertility.backends import load_tokenizer

    gguf = Path(__file__).parents[1] / ".fixtures" / "gguf" / f"ggml-vocab-{name}.gguf"
    if not gguf.is_file():
        pytest.skip(f"{gguf.name} not fetched")
    built = load_tokenizer(str(gguf), exact_library=True).tokenizer
    spelled = set(built.get_vocab())
    assert [c for c in pre_tokenizers.ByteLevel.alphabet() if c not in spelled]  # some bytes are missing
    path = tmp_path / f"{name}.json"
    built.save(str(path))
    text = ENG + BEN
    assert built.decode(built.encode(text, add_special_tokens=False).ids) == text
    result = _audit(path, corpus)
    assert result.exit_code == 0, result.stderr
