"""Balance arithmetic by hand: premiums, the fairness Gini, --mix parsing, the token budget.

Counts here are written out by hand (they are plain additive integers, not stand-ins for a
tokenizer); the findings built from real tokenizers are in test_diagnose.py.
"""

import math

import pytest

from fertility import Counts, UsageError
from fertility.io.parallel import not_parallel, stated
from fertility.metrics.balance import (
    PARALLEL,
    BudgetRow,
    budget,
    gini,
    inversions,
    parse_mix,
    parse_pairs,
    premiums,
    reordered,
)

ALIGNED = stated("--parallel", {"eng_Latn": 3, "ben_Beng": 3})


def counts(n_chars, n_tokens, n_docs=3):
    return Counts(n_docs=n_docs, n_chars=n_chars, n_tokens=n_tokens)


# --- premiums ---------------------------------------------------------------------------------

def test_parallel_premium_is_the_token_ratio():
    per_lang = {"eng_Latn": counts(120, 20), "ben_Beng": counts(100, 60), "deu_Latn": counts(140, 30)}
    result = premiums(per_lang, "eng_Latn", parallel=ALIGNED)
    assert result is not None and result.method == PARALLEL and result.reference == "eng_Latn"
    # 60 / 20 and 30 / 20: characters play no part when the text is the same content
    assert result.values == {"eng_Latn": 1.0, "ben_Beng": 3.0, "deu_Latn": 1.5}


def test_no_premium_over_text_that_is_not_parallel_even_with_equal_document_counts():
    per_lang = {"eng_Latn": counts(400, 100), "ben_Beng": counts(100, 50)}  # 3 documents each
    assert premiums(per_lang, "eng_Latn", parallel=not_parallel("unrelated text")) is None


def test_stating_parallel_text_with_unequal_document_counts_is_a_usage_error():
    with pytest.raises(UsageError) as err:
        stated("--parallel", {"eng_Latn": 3, "ben_Beng": 2})
    assert "--parallel" in str(err.value) and "ben_Beng 2, eng_Latn 3" in str(err.value)
    assert not stated("--parallel", {"eng_Latn": 3}).parallel  # one language: nothing to compare


def test_a_missing_reference_is_a_usage_error():
    with pytest.raises(UsageError) as err:
        premiums({"ben_Beng": counts(10, 5), "hin_Deva": counts(10, 5)}, "eng_Latn", parallel=ALIGNED)
    message = str(err.value)
    assert "\n" not in message and "eng_Latn" in message and "ben_Beng, hin_Deva" in message
    assert "--reference" in message


# --- Gini: sum |xi - xj| / (2 n^2 mean) --------------------------------------------------------

@pytest.mark.parametrize("values, expected", [
    ([1, 1, 1], 0.0),
    ([1, 3], 0.25),  # (|1-3| + |3-1|) / (2 * 4 * 2) = 4 / 16
    ([0, 0, 1], 2 / 3),  # 4 ordered pairs differ by 1: 4 / (2 * 9 * 1/3) = 4 / 6
    ([1, 2, 3, 4], 0.25),  # 2 * (1+2+3+1+2+1) = 20; 20 / (2 * 16 * 2.5) = 0.25
    ([1, math.nan, 3], 0.25),  # NaN (a language without tokens) is left out
])
def test_gini_by_hand(values, expected):
    assert gini(values) == pytest.approx(expected)


@pytest.mark.parametrize("values", [[], [0, 0], [math.nan]])
def test_gini_without_values_is_nan(values):
    assert math.isnan(gini(values))


# --- --mix and --weights parsing -------------------------------------------------------------

def test_parse_mix_normalises_shares():
    assert parse_mix("ben_Beng=0.7,eng_Latn=0.3") == pytest.approx({"ben_Beng": 0.7, "eng_Latn": 0.3})
    assert parse_mix(" ben_Beng = 7 , eng_Latn=3 ,") == pytest.approx({"ben_Beng": 0.7, "eng_Latn": 0.3})
    assert parse_pairs("ben=2,eng=1", option="--weights") == {"ben": 2.0, "eng": 1.0}


@pytest.mark.parametrize("text, bad_part", [
    ("ben_Beng", "'ben_Beng'"),
    ("ben_Beng=", "'ben_Beng='"),
    ("ben_Beng=abc", "'ben_Beng=abc'"),
    ("ben_Beng=0,eng_Latn=1", "'ben_Beng=0'"),
    ("eng_Latn=1,ben_Beng=-0.5", "'ben_Beng=-0.5'"),
    ("ben_Beng=inf", "'ben_Beng=inf'"),
    ("ben_Beng=nan", "'ben_Beng=nan'"),
    ("=0.5", "'=0.5'"),
    (",", None),
    ("", None),
])
def test_bad_mix_is_a_one_line_usage_error(text, bad_part):
    with pytest.raises(UsageError) as err:
        parse_mix(text)
    message = str(err.value)
    assert message.startswith(f"--mix {text!r}: ") and "\n" not in message
    if bad_part:
        assert f"bad part: {bad_part}" in message and "ben_Beng=0.7,eng_Latn=0.3" in message
    else:
        assert message.endswith("no LANG=NUMBER pairs")


def test_parse_pairs_names_its_option():
    with pytest.raises(UsageError, match=r"^--weights 'ben=x'"):
        parse_pairs("ben=x", option="--weights")


# --- token budget ----------------------------------------------------------------------------

def test_budget_by_hand_and_the_inversion_it_flags():
    per_lang = {"ben_Beng": counts(1000, 2000), "eng_Latn": counts(1000, 250)}
    rows = {row.lang: row for row in budget(per_lang, {"ben_Beng": 0.6, "eng_Latn": 0.4})}
    # tokens per char: ben 2000/1000 = 2, eng 250/1000 = 0.25
    # token cost of the mix: ben 0.6 * 2 = 1.2, eng 0.4 * 0.25 = 0.1 -> token shares 12/13, 1/13
    # text per token:        ben 0.6 / 2 = 0.3, eng 0.4 / 0.25 = 1.6 -> text shares 3/19, 16/19
    assert rows["ben_Beng"].content_share == 0.6 and rows["eng_Latn"].content_share == 0.4
    assert rows["ben_Beng"].token_share == pytest.approx(12 / 13)
    assert rows["eng_Latn"].token_share == pytest.approx(1 / 13)
    assert rows["ben_Beng"].text_share_by_tokens == pytest.approx(3 / 19)
    assert rows["eng_Latn"].text_share_by_tokens == pytest.approx(16 / 19)
    flagged = inversions(list(rows.values()), threshold=0.10)
    assert [row.lang for row in flagged] == ["ben_Beng", "eng_Latn"]


def test_budget_of_the_corpus_as_given_uses_character_shares():
    per_lang = {"ben_Beng": counts(300, 600), "eng_Latn": counts(100, 25)}
    rows = {row.lang: row for row in budget(per_lang)}
    # content 300/400 and 100/400; cost 600 and 25 tokens -> 600/625 and 25/625
    assert rows["ben_Beng"].content_share == 0.75 and rows["eng_Latn"].content_share == 0.25
    assert rows["ben_Beng"].token_share == pytest.approx(600 / 625)
    # text per token: 0.75 / 2 = 0.375 and 0.25 / 0.25 = 1 -> 0.375 / 1.375
    assert rows["ben_Beng"].text_share_by_tokens == pytest.approx(0.375 / 1.375)


def test_a_balanced_mix_is_not_flagged():
    # the same tokens per character (0.5) in both languages: token shares equal content shares
    per_lang = {"ben_Beng": counts(1000, 500), "eng_Latn": counts(2000, 1000)}
    rows = budget(per_lang, {"ben_Beng": 0.6, "eng_Latn": 0.4})
    for row in rows:
        assert row.token_share == pytest.approx(row.content_share)
        assert row.text_share_by_tokens == pytest.approx(row.content_share)
    assert inversions(rows) == []


def test_budget_rejects_a_mix_naming_languages_not_in_the_corpus():
    with pytest.raises(UsageError, match=r"^--mix names languages not in the corpus: fra_Latn$"):
        budget({"eng_Latn": counts(10, 2)}, {"eng_Latn": 0.5, "fra_Latn": 0.5})


def test_reorder_rule_flags_a_swap_even_when_no_share_moves_past_the_threshold():
    # content a 0.6, b 0.4; tokens per char a 1, b 1.6 -> cost 0.6 and 0.64: b now costs more
    per_lang = {"a": counts(100, 100), "b": counts(100, 160)}
    rows = {row.lang: row for row in budget(per_lang, {"a": 0.6, "b": 0.4})}
    assert rows["a"].token_share == pytest.approx(0.6 / 1.24)
    assert reordered(rows["a"], rows["b"])
    assert [row.lang for row in inversions(list(rows.values()), threshold=0.5)] == ["a", "b"]


def test_reorder_rule_ignores_content_shares_within_its_margin():
    # content 0.52 vs 0.48 differ by 0.04 <= 10% of 0.52; tokens per char 1 vs 1.2 swap them
    per_lang = {"a": counts(100, 100), "b": counts(100, 120)}
    rows = {row.lang: row for row in budget(per_lang, {"a": 0.52, "b": 0.48})}
    assert rows["b"].token_share > rows["a"].token_share  # 0.576 / 1.096 > 0.52 / 1.096
    assert not reordered(rows["a"], rows["b"])
    assert reordered(rows["a"], rows["b"], margin=0.0)
    assert inversions(list(rows.values()), threshold=0.10) == []


def test_shift_threshold_alone_flags_without_a_reorder():
    # same order in content and tokens, but the share moves by 0.2
    rows = [BudgetRow("a", 0.7, 0.9, 0.5), BudgetRow("b", 0.3, 0.1, 0.5)]
    assert not reordered(rows[0], rows[1])
    assert [row.lang for row in inversions(rows, threshold=0.10)] == ["a", "b"]
    assert inversions(rows, threshold=0.25) == []


def test_budget_normalises_or_rejects_a_mix_that_does_not_sum_to_one():
    per_lang = {"ben_Beng": counts(1000, 2000), "eng_Latn": counts(1000, 250)}
    try:
        rows = budget(per_lang, {"ben_Beng": 7, "eng_Latn": 3})
    except UsageError:
        return
    assert sum(row.content_share for row in rows) == pytest.approx(1.0)


def test_a_mix_of_one_language_is_refused():
    """One language is all of the text: its budget says nothing, so the mix was silently ignored."""
    with pytest.raises(UsageError, match=r"^--mix 'ben_Beng=1': a mix needs two or more languages \("):
        parse_mix("ben_Beng=1")
