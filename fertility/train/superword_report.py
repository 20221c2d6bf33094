"""What superwords' stage two added, and what its tokens do on held-out text (for training.json and stderr).

After training, `retrain --superwords` records how stage two's entries split between
superwords (tokens that span words) and longer pieces of words, and how often each kind is used
per language of the held-out text; `render_superwords` shows that record.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING

from fertility.io.corpus import Corpus

from .languages import by_language
from .superword_split import holds_junction

if TYPE_CHECKING:
    import tokenizers

    from .superwords import StageTwo


def superword_record(stage_two: StageTwo, tokenizer: tokenizers.Tokenizer, evaluation: Corpus, units: str) -> dict:
    """Both stages as trained, and what stage two's tokens do on the held-out text."""
    return {**stage_two.record,
            "vocabulary": vocabulary_share(tokenizer, first_id=stage_two.first_id, units=units),
            "held_out": superword_usage(tokenizer, by_language(evaluation.documents),
                                        first_id=stage_two.first_id, units=units)}


def superword_usage(tokenizer: tokenizers.Tokenizer, texts: dict[str, list[str]], *, first_id: int,
                    units: str, examples: int = 5) -> dict[str, dict]:
    """Per language: tokens, how many are stage-two tokens and superwords, the commonest ones."""
    vocab = tokenizer.get_vocab()
    stage_two = {i: t for t, i in vocab.items() if i >= first_id}
    superword_ids = {i for i, t in stage_two.items() if holds_junction(t, units)}
    out: dict[str, dict] = {}
    for lang, lines in sorted(texts.items()):
        ids = [i for e in tokenizer.encode_batch(lines, add_special_tokens=False) for i in e.ids]
        counts = Counter(i for i in ids if i in superword_ids)
        out[lang] = {
            "n_tokens": len(ids),
            "n_stage_two_tokens": sum(i >= first_id for i in ids),
            "n_superword_tokens": sum(counts.values()),
            "examples": [tokenizer.decode([i]) for i, _ in counts.most_common(examples)],
        }
    return out


def vocabulary_share(tokenizer: tokenizers.Tokenizer, *, first_id: int, units: str) -> dict[str, int]:
    """How stage two's entries split: superwords (across words) and longer pieces of words."""
    stage_two = [t for t, i in tokenizer.get_vocab().items() if i >= first_id]
    n_super = sum(holds_junction(t, units) for t in stage_two)
    return {"stage_two": len(stage_two), "superwords": n_super, "within_words": len(stage_two) - n_super}


def render_superwords(record: dict) -> str:
    """What stage two added, per language of the held-out text (markdown, readable as text)."""
    two, vocabulary = record["stage_two"], record["vocabulary"]
    lines = [(f"Superwords: stage two added {two['added_tokens']:,} tokens after stage one's "
              f"{record['stage_one']['vocab_size']:,}; {vocabulary['superwords']:,} of them span words, "
              f"{vocabulary['within_words']:,} are longer pieces of words"), "",
             "| lang | tokens | stage-two tokens | superword tokens | commonest superwords |",
             "|---|---:|---:|---:|---|"]
    for lang, row in record["held_out"].items():
        n = row["n_tokens"] or 1
        shown = ", ".join(json.dumps(e, ensure_ascii=False) for e in row["examples"])
        lines.append(f"| {lang} | {row['n_tokens']:,} | {row['n_stage_two_tokens'] / n:.1%} | "
                     f"{row['n_superword_tokens'] / n:.1%} | {shown} |")
    return "\n".join(lines) + "\n"
