"""Unit counting and script detection on hand-checked strings."""

import random

import numpy as np
import pytest
import regex

from fertility.text import units
from fertility.text.units import (
    char_to_byte_offsets,
    count_graphemes,
    detect_script,
    is_spaced,
    profile,
    segmenter_info,
)


def test_profile_counts_by_hand():
    # "ক্ষমা" is ক ্ ষ ম া: 5 code points of 3 bytes; graphemes under Unicode 15.1+: ক্ষ, মা = 2
    # "🇧🇩" is two regional indicators (4 bytes each) forming one grapheme
    text = "ক্ষমা 🇧🇩 ok"
    p = profile(text)
    assert p.n_chars == 5 + 1 + 2 + 1 + 2
    assert p.n_bytes == 5 * 3 + 1 + 8 + 1 + 2
    assert p.n_graphemes == 2 + 1 + 1 + 1 + 2
    assert p.n_words == 3
    assert list(p.word_starts) == [0, 16, 25]
    assert list(p.word_ends) == [15, 24, 27]


def test_indic_conjunct_is_one_grapheme_and_recorded():
    info = segmenter_info()
    assert info["indic_conjunct_clusters"] == ("yes" if count_graphemes("ক্ষ") == 1 else "no")
    assert info["segmenter"].startswith("regex ")
    assert info["segmenter_unicode"] >= "15.1"


def test_char_to_byte_offsets_matches_encode():
    text = "aé€😀ক"
    offsets = char_to_byte_offsets(text)
    expected = [len(text[:i].encode("utf-8")) for i in range(len(text) + 1)]
    assert offsets.tolist() == expected
    assert char_to_byte_offsets("").tolist() == [0]


def test_words_use_unicode_whitespace():
    # no-break space and ideographic space separate words too
    assert profile("a\u00a0b\u3000c  d\te").n_words == 5
    assert profile("   ").n_words == 0
    assert isinstance(profile("").word_starts, np.ndarray)


@pytest.mark.parametrize("text, script", [
    ("বাংলা ভাষার লিপি", "Beng"),
    ("हिन्दी भाषा", "Deva"),
    ("தமிழ் மொழி", "Taml"),
    ("اللغة العربية", "Arab"),
    ("Русский язык", "Cyrl"),
    ("中文文本测试", "Hani"),
    ("日本語のテキスト", "Jpan"),
    ("한국어 텍스트", "Hang"),
    ("ภาษาไทย", "Thai"),
    ("አማርኛ ቋንቋ", "Ethi"),
    ("English text, 2024!", "Latn"),
    ("12345 !?", "Zyyy"),
])
def test_detect_script(text, script):
    assert detect_script(text) == script


def test_unspaced_scripts():
    assert not is_spaced("Hani") and not is_spaced("Jpan") and not is_spaced("Thai")
    assert is_spaced("Beng") and is_spaced("Latn") and is_spaced("Hang")


# --- grapheme clusters in linear time ------------------------------------------------------------

_X = regex.compile(r"\X")
_ALPHABET = ["\U0001F1E9", "\U0001F1EA", "\U0001F1EB", "a", "\u0301", "\u200d", "\U0001F44D", "\U0001F3FD",
             "\u0600", "\u0903", "\u0995", "\u09cd", "\r", "\n", "\0", " ", "\u1100", "\u1161", "\U00020000",
             "\U000E0100"]


def test_clusters_equal_the_segmenters_on_random_text():
    """Regional indicators (a third of the draws) among every other kind of character that takes
    part in a cluster rule: emoji with modifiers and ZWJ, Prepend, spacing marks, Indic conjuncts,
    CR LF, Hangul jamo, astral letters."""
    rng = random.Random(7)
    for _ in range(3000):
        text = "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 30)))
        expected = _X.findall(text)
        assert units.graphemes(text) == expected, text
        assert units.count_graphemes(text) == len(expected)
        lengths = np.diff(units.cluster_bounds(text))
        assert lengths.tolist() == [len(g) for g in expected]


@pytest.mark.parametrize("n", [1, 2, 3, 1001, 1002])
def test_a_long_run_of_regional_indicators_pairs_from_its_start(n):
    text = "x" + "\U0001F1E9" * n + "\u0301 y"
    assert units.graphemes(text) == _X.findall(text)
    assert units.profile(text).n_graphemes == len(_X.findall(text))
