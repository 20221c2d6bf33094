"""The backend contract: every loaded tokenizer implements the whole `Tokenizer` protocol (no
caller asks what a tokenizer can do), vocabularies agree with their listings, and a tokenizer
of the user's own, built on `TokenizerBase`, is audited like any backend."""

from __future__ import annotations

import re

import numpy as np
import pytest

import fertility
from fertility.backends import Encoded, TokenizerBase, Tokens, load_tokenizer
from fertility.backends import Tokenizer as TokenizerProtocol
from fertility.backends.spans import concatenate
from fertility.backends.vocabularies import ORDINARY_KINDS
from tests.real_files import mistral_file, real_file

TEXTS = ["The river market opens at dawn.", "নদীর বাজার ভোরে খোলে।", ""]


def _specs() -> list[str]:
    """A tokenizer of every backend: baselines, tiktoken, Tekken, tokenizer.json (byte-level BPE
    and WordPiece), SentencePiece, GGUF (BPE and WordPiece)."""
    return ["bytes", "graphemes", str(real_file("gpt2.tiktoken")),
            str(mistral_file("tekken_240911.json")), str(real_file("llama3/tokenizer.json")),
            str(real_file("minilm/tokenizer.json")), str(mistral_file("mistral_instruct_tokenizer_240323.model.v3")),
            str(real_file("gguf/ggml-vocab-llama-bpe.gguf")), str(real_file("gguf/ggml-vocab-bert-bge.gguf"))]


@pytest.mark.parametrize("index", range(9))
def test_every_backend_implements_the_whole_protocol(index):
    tokenizer = load_tokenizer(_specs()[index])
    assert isinstance(tokenizer, TokenizerProtocol)
    many = tokenizer.encode_many(TEXTS)
    checked, check = tokenizer.encode_checked(TEXTS)
    assert checked.counts.tolist() == many.counts.tolist()
    assert check is None or check.difference is None
    counted = tokenizer.count_tokens(TEXTS)
    assert counted == [len(e.starts) for e in tokenizer.encode(TEXTS)] == many.counts.tolist()
    runtime = tokenizer.runtime_normalization
    assert runtime is None or runtime[0] in ("nfc", "nfkc")
    vocabulary = tokenizer.vocabulary()
    if _specs()[index] in ("bytes", "graphemes"):
        assert vocabulary is None
        return
    listed = vocabulary.entries()
    assert [index for index, _, _ in listed] == list(range(len(listed)))  # sorted by id, no gap
    assert vocabulary.size() == len(listed)
    ordinary = vocabulary.ordinary_ids()
    assert ordinary.tolist() == [i for i, _, kind in listed if kind in ORDINARY_KINDS]


class Words(TokenizerBase):
    """One token per run of non-space characters: the simplest tokenizer of one's own."""

    name = "words"

    def encode(self, texts: list[str]) -> list[Encoded]:
        out = []
        for text in texts:
            data = text.encode("utf-8")
            spans = [(m.start(), m.end()) for m in re.finditer(rb"\S+", data)]
            out.append(Encoded(np.array([s for s, _ in spans], dtype=np.int64),
                               np.array([e for _, e in spans], dtype=np.int64)))
        return out

    def encode_many(self, texts: list[str]) -> Tokens:
        return concatenate(self.encode(texts), [len(t.encode("utf-8")) for t in texts])

    def info(self) -> dict[str, str]:
        return {"backend": "words (a test's own)"}

    def pre_tokenizer(self):
        return None


def test_a_tokenizer_of_ones_own_is_audited_like_any_backend():
    texts = {"eng_Latn": ["The river market opens at dawn.", "Boats arrive with fish and rice."],
             "ben_Beng": ["নদীর বাজার ভোরে খোলে।", "নৌকা মাছ আর চাল নিয়ে আসে।"]}
    result = fertility.audit({"mine": Words()}, texts, parallel=True, cache=False)
    for lang, lines in texts.items():
        counts = result.counts[("mine", lang)]
        assert counts.n_tokens == sum(len(line.split()) for line in lines)
        assert counts.n_chars == sum(len(line) for line in lines)
    assert result.signature.tokenizers["mine"]["backend"] == "words (a test's own)"


def test_a_loaded_tokenizer_at_a_python_prompt_says_what_it_is():
    """object's repr named a private module and an address (`<fertility.backends._gigatoken.
    FastPath object at 0x...>`): now the name, the backend, and the wrappers in order."""
    assert repr(load_tokenizer("bytes")) == "<Bytes 'bytes'>"
    gpt2 = load_tokenizer(str(real_file("gpt2.tiktoken")))
    on = "on" if gpt2.active else "off"
    assert repr(gpt2) == f"<FastPath 'r50k_base' ({on}) over <TiktokenTokenizer 'r50k_base'>>"
    normalized = load_tokenizer(str(real_file("gpt2.tiktoken")), normalize="nfc")
    assert repr(normalized) == "<Normalized 'r50k_base' (NFC) over <FastPath 'r50k_base' (off) over " \
                               "<TiktokenTokenizer 'r50k_base'>>>"  # off: its ids would skip the normalization
