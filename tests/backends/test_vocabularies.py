"""A `tokenizers` vocabulary's listing, read from the tokenizer's own parts (vocabularies.py):
each entry's bytes against the library's decoder, and the unknown token of a Unigram model,
whose id only the model's serialization holds."""

from __future__ import annotations

import tokenizers
from real_files import real_file
from tokenizers import decoders, models, pre_tokenizers, trainers

from fertility.backends import load_tokenizer
from fertility.backends.vocabularies import BYTE, NORMAL, SPECIAL, UNKNOWN, UNUSED, byte_level_spelling
from fertility.io.samples import samples_dir


def test_byte_level_entries_are_the_bytes_the_decoder_gives():
    """Llama-3: every ordinary entry that is whole UTF-8 text decodes, alone, to exactly its
    bytes; the others are byte pieces that no text decodes to, and the special tokens are listed
    as special."""
    path = real_file("llama3/tokenizer.json")
    tokenizer = tokenizers.Tokenizer.from_file(str(path))
    listed = load_tokenizer(str(path)).vocabulary().entries()
    decoder = decoders.ByteLevel()
    partial = 0
    for index, data, kind in listed:
        token = tokenizer.id_to_token(index)
        if kind == SPECIAL:
            assert tokenizer.get_added_tokens_decoder()[index].special
            continue
        assert kind == NORMAL
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            partial += 1
            continue
        assert decoder.decode([token]) == text, token
    assert partial > 100  # Llama-3 holds lone bytes and cut characters
    assert sum(kind == SPECIAL for _, _, kind in listed) == 256


def test_byte_level_spelling_reads_each_byte():
    spelling = byte_level_spelling()
    assert spelling.bytes_of("Ġhello") == b" hello"
    assert spelling.bytes_of("Ċ") == b"\n"
    assert spelling.bytes_of("ঠ") is None  # not a byte-level letter: the entry is plain text
    assert spelling.bytes_of("") == b""


def test_unigram_unknown_token_is_found_in_the_model(tmp_path):
    """A Unigram tokenizer.json keeps its unknown token as `unk_id` (no `unk_token`): the listing
    marks it, and encoding a character never seen gives that id."""
    tokenizer = tokenizers.Tokenizer(models.Unigram())
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
    tokenizer.decoder = decoders.Metaspace()
    trainer = trainers.UnigramTrainer(vocab_size=300, special_tokens=["<pad>", "<unk>"], unk_token="<unk>",
                                      show_progress=False)
    tokenizer.train_from_iterator((samples_dir() / "eng_Latn.txt").read_text(encoding="utf-8").splitlines(),
                                  trainer)
    path = tmp_path / "tokenizer.json"
    tokenizer.save(str(path))
    loaded = load_tokenizer(str(path))
    listed = loaded.vocabulary().entries()
    unknown = [index for index, _, kind in listed if kind == UNKNOWN]
    assert unknown == [tokenizer.token_to_id("<unk>")]
    assert tokenizer.encode("ঠ").ids[-1] == unknown[0]
    assert {kind for _, _, kind in listed} <= {NORMAL, SPECIAL, UNKNOWN, BYTE}
    assert [index for index, _, kind in listed if kind == SPECIAL] == [tokenizer.token_to_id("<pad>")]
    spaced = [data for _, data, kind in listed if kind == NORMAL and data.startswith(b" ")]
    assert spaced  # "▁" stands for a space


def test_tiktoken_entries_are_what_the_encoding_decodes_each_id_to():
    """The listing reads tiktoken's tables at once; it must say, id by id, what
    `decode_single_token_bytes` says: the bytes of a rank or a special token, UNUSED for a gap."""
    from real_files import mistral_file

    for spec in ("tiktoken:cl100k_base", str(real_file("multilingual.tiktoken")), str(mistral_file("tekken_240911.json"))):
        tokenizer = load_tokenizer(spec, exact_library=True)
        encoding = tokenizer.encoding
        listed = tokenizer.vocabulary().entries()
        assert [index for index, _, _ in listed] == list(range(encoding.n_vocab))
        for index, data, kind in listed:
            try:
                expected = encoding.decode_single_token_bytes(index)
            except KeyError:
                assert (data, kind) == (None, UNUSED), (spec, index)
                continue
            assert (data, kind) == (expected, NORMAL), (spec, index)
