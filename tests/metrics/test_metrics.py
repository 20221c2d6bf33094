"""Issue 11 phase 2: metrics from the counting pass, each against a hand computation on real
text with a real tokenizer (tiktoken's cl100k_base, recounted with the raw tiktoken library)."""

from __future__ import annotations

import json
import math
from collections import Counter

import pytest
import regex
from real_files import shared
from reference import cl100k_token_spans, raw_cl100k

import fertility
from fertility.engine.count import count
from fertility.io.corpus import Document
from fertility.results.model import AuditResult


@pytest.fixture(scope="module")
def cl100k():
    return fertility.load_tokenizer("tiktoken:cl100k_base")




def raw_words(text: str) -> list[tuple[int, int]]:
    return [(len(text[:m.start()].encode()), len(text[:m.end()].encode())) for m in regex.finditer(r"\S+", text)]


def hand_counts(text: str) -> tuple[int, int, int, int]:
    """(words, single-token words, tokens, continuation tokens), by plain loops."""
    tokens, words = cl100k_token_spans(text), raw_words(text)
    single = sum(1 for ws, we in words if sum(1 for ts, te in tokens if ts < we and te > ws) == 1)
    continuation = sum(1 for ts, _ in tokens if any(ws < ts < we for ws, we in words))
    return len(words), single, len(tokens), continuation


def test_single_token_words_and_continuation_tokens_by_hand(cl100k):
    # cl100k: "The", " cat", " sat", " on", " the", " mat", "." -> the word "mat." is two tokens
    # (five of six words are one token) and "." starts inside it (one continuation token of seven)
    text = "The cat sat on the mat."
    counts = count(cl100k, [Document("eng_Latn", text, "t", 0)])["eng_Latn"]
    assert (counts.n_words, counts.n_single_token_words, counts.n_tokens, counts.n_continuation_tokens) \
        == hand_counts(text) == (6, 5, 7, 1)


@pytest.mark.parametrize("lang", ["eng_Latn", "ben_Beng", "amh_Ethi"])
def test_word_metrics_equal_a_recount_on_flores(cl100k, lang):
    lines = (shared("flores200", "devtest") / f"{lang}.txt").read_text(encoding="utf-8").splitlines()[:20]
    counts = count(cl100k, [Document(lang, line, "f", i) for i, line in enumerate(lines)])[lang]
    expected = [hand_counts(line) for line in lines]
    assert counts.n_single_token_words == sum(e[1] for e in expected)
    assert counts.n_continuation_tokens == sum(e[3] for e in expected)
    assert 0 < counts.n_single_token_words <= counts.n_words
    assert 0 < counts.n_continuation_tokens < counts.n_tokens


def test_shares_in_the_rows_are_the_counts_divided(cl100k):
    files = [shared("flores200", "devtest") / f"{lang}.txt" for lang in ("eng_Latn", "zho_Hans")]
    result = fertility.audit([cl100k], files, diagnose=False, cache=False)
    rows = {row["lang"]: row for row in result.to_dict()["rows"]}
    eng = rows["eng_Latn"]
    assert eng["single_token_word_share"] == eng["n_single_token_words"] / eng["n_words"]
    assert eng["continuation_token_share"] == eng["n_continuation_tokens"] / eng["n_tokens"]
    assert rows["zho_Hans"]["single_token_word_share"] is None  # unspaced: n/a, as tokens/word
    assert rows["zho_Hans"]["continuation_token_share"] is None
    # the ALL row: spaced languages only, exact sums
    assert rows["ALL"]["single_token_word_share"] == eng["single_token_word_share"]


def test_an_older_audit_json_without_the_new_counts_still_reads(cl100k, tmp_path):
    files = [shared("flores200", "devtest") / "eng_Latn.txt"]
    data = fertility.audit([cl100k], files, diagnose=False, cache=False).to_dict()
    for row in data["rows"]:
        for key in ("n_single_token_words", "n_continuation_tokens", "single_token_word_share",
                    "continuation_token_share", "token_lengths", "renyi_efficiency"):
            del row[key]
    del data["tokens_never_produced"]
    old = AuditResult.from_dict(data)
    assert not old.token_stats and not old.unseen_tokens
    again = old.to_dict()
    assert all(row["single_token_word_share"] is None and row["n_single_token_words"] is None
               for row in again["rows"])
    path = tmp_path / "again.json"
    path.write_text(json.dumps(again), encoding="utf-8")
    assert AuditResult.load(path).to_dict()["rows"] == again["rows"]  # round-trips


def test_token_lengths_renyi_and_unseen_by_hand(cl100k, tmp_path):
    # cl100k: "The"(3) " cat"(4) " sat"(4) " on"(3) " the"(4) " mat"(4) "."(1): seven distinct ids
    text = "The cat sat on the mat."
    (tmp_path / "eng_Latn.txt").write_text(text + "\n", encoding="utf-8")
    result = fertility.audit([cl100k], [tmp_path / "eng_Latn.txt"], diagnose=False, cache=False)
    enc = raw_cl100k()
    ids = enc.encode_ordinary(text)
    vocab = len(enc._mergeable_ranks)  # ordinary tokens: specials are never counted
    stats = result.token_stats[("cl100k_base", "eng_Latn")]
    expected_lengths = [0] * 17
    for token in ids:
        expected_lengths[min(len(enc.decode_single_token_bytes(token)), 16)] += 1
    assert stats["token_lengths"] == expected_lengths
    assert expected_lengths[1] == 1 and expected_lengths[3] == 2 and expected_lengths[4] == 4
    # seven ids once each: p_i = 1/7, sum p_i^2.5 = 7^-1.5, H_2.5 = log(7^-1.5) / (1 - 2.5) = log 7
    assert len(set(ids)) == len(ids) == 7
    assert stats["renyi_efficiency"] == pytest.approx(math.log(7) / math.log(vocab))
    assert result.unseen_tokens["cl100k_base"] == {"vocab_size": vocab, "n_unseen": vocab - 7}


def test_renyi_of_a_skewed_distribution_by_hand():
    from fertility.metrics.token_stats import renyi_efficiency

    # p = (3/4, 1/4): sum p^2.5 = 0.75^2.5 + 0.25^2.5; H = log(that) / -1.5; over log V (V = 4)
    ids = Counter({5: 3, 9: 1})
    expected = math.log(0.75 ** 2.5 + 0.25 ** 2.5) / (1 - 2.5) / math.log(4)
    assert renyi_efficiency(ids, 4) == pytest.approx(expected)
    assert math.isnan(renyi_efficiency(Counter(), 4))  # no ids (a baseline): not measured


@pytest.mark.parametrize("lang", ["eng_Latn", "ben_Beng"])
def test_token_stats_on_flores_equal_a_recount(cl100k, lang):
    path = shared("flores200", "devtest") / f"{lang}.txt"
    lines = path.read_text(encoding="utf-8").splitlines()
    result = fertility.audit([cl100k], [path], diagnose=False, cache=False, chunk_bytes=50_000)
    enc = raw_cl100k()
    ids = Counter(token for line in lines for token in enc.encode_ordinary(line))
    total = sum(ids.values())
    vocab = len(enc._mergeable_ranks)
    expected = math.log(sum((c / total) ** 2.5 for c in ids.values())) / (1 - 2.5) / math.log(vocab)
    stats = result.token_stats[("cl100k_base", lang)]
    assert stats["renyi_efficiency"] == pytest.approx(expected, rel=1e-12)
    assert sum(stats["token_lengths"]) == total
    assert result.unseen_tokens["cl100k_base"]["n_unseen"] == vocab - len(ids)
    assert result.token_stats[("cl100k_base", "ALL")] == stats  # one language: ALL is the same


def test_the_report_table_shows_the_new_metrics(cl100k):
    from fertility.report import html as report_html
    from fertility.report.contents import language_rows

    path = shared("flores200", "devtest") / "eng_Latn.txt"
    result = fertility.audit([cl100k], [path], diagnose=False, cache=False)
    rows = language_rows(result)
    drawn = report_html.table(rows)
    head = drawn.split("</thead>")[0]
    assert "Rényi efficiency" in head and "single-token words" in head and "continuation tokens" in head
    renyi = result.token_stats[("cl100k_base", "eng_Latn")]["renyi_efficiency"]
    assert f"{renyi:.3f}" in drawn


@pytest.mark.parametrize("spec", ["tiktoken:cl100k_base", "spm", "hf", "tekken", "gguf-llama-bpe", "gguf-bert-bge",
                                  "bytes"])
def test_vocabulary_size_without_listing_equals_the_listing(spec):
    """A vocabulary's size, read without listing it, must count what its listing (per backend,
    backends/vocabularies.py) lists."""
    from reference import tokenizer

    vocabulary = tokenizer(spec).vocabulary()
    if vocabulary is None:  # the baselines have none
        assert spec == "bytes"
        return
    assert vocabulary.size() == len(vocabulary.entries())


def test_renyi_efficiency_does_not_depend_on_the_order_ids_were_seen():
    """Chunks merge their id counts in whatever order they were cut; the figure must not move."""
    from fertility.metrics.token_stats import renyi_efficiency

    ids = Counter({i: (i * 7919) % 1000 + 1 for i in range(5000)})
    reordered = Counter(dict(sorted(ids.items(), key=lambda kv: (kv[1], -kv[0]))))
    assert renyi_efficiency(ids, 100_000) == renyi_efficiency(reordered, 100_000)


@pytest.mark.parametrize("spec", ["tiktoken:cl100k_base", "spm", "hf", "tekken", "gguf-llama-bpe", "gguf-llama-spm",
                                  "gguf-bert-bge", "bytes"])
def test_the_ordinary_vocabulary_is_the_listing_without_special_tokens(spec):
    """Rényi efficiency's V and the ids never produced count a vocabulary's ordinary ids: for every
    backend, the listed entries that are not special, control or unused (the unknown token kept)."""
    import numpy as np
    from reference import tokenizer

    from fertility.backends.vocabularies import ORDINARY_KINDS, SPECIAL, UNKNOWN
    from fertility.metrics.token_stats import ordinary_vocabulary

    loaded = tokenizer(spec)
    vocabulary = loaded.vocabulary()
    if vocabulary is None:
        assert ordinary_vocabulary(loaded) is None
        return
    listed = vocabulary.entries()
    found = vocabulary.ordinary_ids()
    assert np.array_equal(found, [index for index, _, kind in listed if kind in ORDINARY_KINDS])
    kinds = {kind for _, _, kind in listed}
    if spec in ("spm", "hf", "gguf-bert-bge", "gguf-llama-spm", "gguf-llama-bpe"):
        assert SPECIAL in kinds and len(found) < len(listed)  # BOS/EOS, [CLS], control tokens: left out
    if spec in ("spm", "hf", "gguf-bert-bge", "gguf-llama-spm"):
        assert UNKNOWN in kinds  # and the unknown token kept
