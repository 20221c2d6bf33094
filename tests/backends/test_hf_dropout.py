"""A tokenizer.json that switches BPE dropout on: the library then skips merges at random on
every encode, so an audit gave different counts from run to run (42 and 43 tokens for the same
two English lines) and the fast path disagreed with the library. Dropout is switched off like
padding, and the signature says the file had it."""

from __future__ import annotations

import json
from pathlib import Path

import tokenizers
from click.testing import CliRunner
from hostile import BEN, ENG, tiny
from tokenizers import decoders, models, pre_tokenizers, trainers

from fertility.cli import cli


def _byte_level_bpe(folder: Path, *, dropout: float | None) -> Path:
    """A real byte-level BPE trained on the English lines, saved with `dropout` in its model."""
    tokenizer = tokenizers.Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=320, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tokenizer.train_from_iterator([ENG] * 20, trainer)
    config = json.loads(tokenizer.to_str())
    config["model"]["dropout"] = dropout
    path = folder / ("dropout.json" if dropout else "plain.json")
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def _audit(args: list[str]) -> tuple[dict, str]:
    result = CliRunner().invoke(cli, ["audit", "-q", "--no-findings", "-f", "json", *args])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout), result.stderr


def test_dropout_is_switched_off_and_said(tmp_path: Path) -> None:
    corpus = tiny(tmp_path)
    plain = _byte_level_bpe(tmp_path, dropout=None)
    with_dropout = _byte_level_bpe(tmp_path, dropout=0.9)

    def tokens(result: dict) -> list[tuple[str, int]]:
        return [(row["lang"], row["n_tokens"]) for row in result["rows"]]

    reference, _ = _audit(["-t", str(plain), str(corpus)])
    runs = [_audit(["-t", str(with_dropout), str(corpus), *extra]) for extra in ([], [], ["--exact-library"])]
    for result, stderr in runs:
        assert tokens(result) == tokens(reference)  # every run, fast path or library alone
        assert "differed" not in stderr  # the fast path has no dropout: it agrees now
        assert result["signature"]["tokenizers"]["dropout.json"]["dropout"] == "disabled (the file sets 0.9)"
    assert "dropout" not in reference["signature"]["tokenizers"]["plain.json"]
    # The same count by the raw library with dropout off, and at least once a different one with it on.
    raw = tokenizers.Tokenizer.from_file(str(with_dropout))
    sampled = {len(raw.encode(line).ids) for line in ENG.splitlines() for _ in range(20)}
    assert len(sampled) > 2
    raw.model.dropout = None
    english = sum(len(raw.encode(line).ids) for line in ENG.splitlines())
    assert dict(tokens(reference))["eng_Latn"] == english


def test_extend_measures_a_dropout_base_without_dropout(tmp_path: Path) -> None:
    """extend built its measuring tokenizers from the base's config, dropout and all: the held-out
    lines it reports as changed were chance. They now equal those of the same base without it,
    and the file written keeps the base's setting."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "ben_Beng.txt").write_text(BEN * 5, encoding="utf-8")
    plain = _byte_level_bpe(tmp_path, dropout=None)
    with_dropout = _byte_level_bpe(tmp_path, dropout=0.9)
    changed = []
    for base, out in ((plain, "plain-out"), (with_dropout, "dropout-out-1"), (with_dropout, "dropout-out-2")):
        result = CliRunner().invoke(cli, ["extend", str(base), str(corpus), "--add", "8", "-o", str(tmp_path / out),
                                          "--held-out", str(corpus), "-q"])
        assert result.exit_code == 0, result.stderr
        training = json.loads((tmp_path / out / "training.json").read_text(encoding="utf-8"))
        changed.append(training["held_out_changed_lines"])
    assert changed[0] == changed[1] == changed[2]
    assert changed[0]["ben_Beng"]["changed"] > 0  # the added merges do change Bengali lines
    written = json.loads((tmp_path / "dropout-out-1" / "tokenizer.json").read_text(encoding="utf-8"))
    assert written["model"]["dropout"] == 0.9
