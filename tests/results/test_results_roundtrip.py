"""One result type (issue 9): the object that writes the audit JSON also reads it back.

Real audits (cl100k and the bytes baseline on three languages of the bundled parallel samples)
go through `AuditResult.to_dict` / `from_dict` / `load` and through the CLI. Hand-edited and
truncated files must be one clear line naming the file and the problem (exit 2), never a
traceback (before: exit 3 from `compare`).
"""

from __future__ import annotations

import json
import math
import shutil
from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from real_files import real_file

import fertility
from fertility.cli import cli
from fertility.errors import InputError
from fertility.io.samples import samples_dir
from fertility.metrics.counts import COUNT_COLUMNS, Counts
from fertility.results.model import AuditResult
from fertility.results.signature import Signature

CL100K = "tiktoken:cl100k_base"
LANGS = ("ben_Beng", "eng_Latn", "zho_Hans")


def run(*args, env=None):
    return CliRunner().invoke(cli, [str(a) for a in args], env={"COLUMNS": "200", "NO_COLOR": "1", **(env or {})})


@pytest.fixture(scope="module")
def result(small) -> AuditResult:
    """Two tokenizers with findings: the richest result there is."""
    return fertility.audit([CL100K, "bytes"], [small])


@pytest.fixture(scope="module")
def saved(tmp_path_factory, small) -> dict[str, Path]:
    """Audit JSON files as the CLI writes them: one tokenizer each, with and without findings."""
    folder = tmp_path_factory.mktemp("saved")
    made = {"cl100k": ("-t", CL100K), "gpt2": ("-t", real_file("gpt2.tiktoken")),
            "gpt2_nofindings": ("-t", real_file("gpt2.tiktoken"), "--no-findings")}
    paths = {}
    for name, args in made.items():
        paths[name] = folder / f"{name}.json"
        done = run("audit", "-q", "-f", "json", "-o", paths[name], *args, small)
        assert done.exit_code == 0, done.output
    return paths


# --- round trip ---------------------------------------------------------------------------

def test_to_dict_from_dict_round_trips_a_real_audit(result):
    data = json.loads(json.dumps(result.to_dict()))  # through JSON text, as a file would
    back = AuditResult.from_dict(data)
    assert back.tokenizers == result.tokenizers == ("cl100k_base", "bytes")
    assert back.counts == result.counts
    assert back.scripts == result.scripts
    assert back.signature == result.signature
    # a finding's free-form `measured` holds tuples that JSON turns into lists: compare as JSON
    as_json = [json.loads(json.dumps(f.as_dict())) for f in result.findings]
    assert [f.as_dict() for f in back.findings] == as_json and len(as_json) > 0
    assert back.has_findings
    # and once more: the second writing is the first, key for key
    assert json.loads(json.dumps(back.to_dict())) == data
    assert back.to_frame().equals(result.to_frame())


def test_the_cli_json_is_what_to_dict_writes(result, small):
    """The audit JSON format is unchanged: same keys, same order, rows from to_frame."""
    out = run("audit", "-q", "-t", CL100K, "-t", "bytes", "-f", "json", small)
    assert out.exit_code == 0, out.output
    payload = json.loads(out.stdout)
    assert list(payload) == ["schema_version", "fertility_version", "signature", "signature_short", "by", "rows",
                             "findings", "reference", "balance", "vocabulary", "tokens_never_produced", "pretokens"]
    # issue 11's keys after the old ones
    expected = json.loads(json.dumps(result.to_dict()))
    assert payload["rows"] == expected["rows"]
    assert payload["findings"] == expected["findings"]
    assert payload["signature_short"] == result.signature.short()
    # without findings there is no "findings" key: not "no finding was found"
    bare = json.loads(run("audit", "-q", "-t", "bytes", "--no-findings", "-f", "json", small).stdout)
    assert "findings" not in bare
    assert not AuditResult.from_dict(bare).has_findings


def test_load_reads_a_file_the_cli_wrote(saved, result):
    loaded = AuditResult.load(saved["cl100k"])
    assert loaded.tokenizers == ("cl100k_base",)
    assert loaded.counts_for("cl100k_base") == result.counts_for("cl100k_base")
    assert loaded.signature.tokenizers["cl100k_base"] == result.signature.tokenizers["cl100k_base"]
    assert loaded.signature.counting_settings() == result.signature.counting_settings()


def test_one_tokenizer_of_a_result_is_that_tokenizer_audited_alone(result, small):
    alone = fertility.audit(["bytes"], [small])
    one = result.one("bytes")
    assert one.counts == alone.counts
    assert one.findings == alone.findings
    assert one.to_frame().equals(alone.to_frame())


@st.composite
def results_of_counts(draw, signature: Signature) -> AuditResult:
    """Any counts (zeros too, so NaN ratios) for one or two tokenizers over spaced and unspaced
    languages, under a real signature."""
    langs = draw(st.lists(st.sampled_from(["ben_Beng", "eng_Latn", "zho_Hans", "tha_Thai", "spa_Latn"]),
                          min_size=1, max_size=5, unique=True))
    names = draw(st.sampled_from([("bytes",), ("bytes", "chars")]))
    counts = {(name, lang): Counts(**{k: draw(st.integers(0, 10**12)) for k in COUNT_COLUMNS})
              for name in names for lang in langs}
    infos = {name: {"backend": "baseline", "unit": name} for name in names}
    return AuditResult(signature=Signature.from_dict({**signature.to_dict(), "tokenizers": infos}),
                       tokenizers=names, scripts={lang: lang.split("_")[1] for lang in sorted(langs)},
                       counts=counts)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_any_counts_round_trip_through_json(data, result):
    original = data.draw(results_of_counts(result.signature))
    text = json.dumps(original.to_dict())
    back = AuditResult.from_dict(json.loads(text))
    assert back.counts == original.counts
    assert back.scripts == original.scripts and back.tokenizers == original.tokenizers
    assert back.signature == original.signature
    assert json.dumps(back.to_dict()) == text


# --- the typed signature -----------------------------------------------------------------

def test_signature_is_typed_frozen_and_round_trips(result):
    sig = result.signature
    assert isinstance(sig, Signature)
    with pytest.raises(FrozenInstanceError):
        sig.doc_mode = "file"
    data = sig.to_dict()
    assert list(data)[-1] == "fertility"
    assert Signature.from_dict(json.loads(json.dumps(data))) == sig
    short = sig.short()
    parts = short.split("|")
    assert parts[0].startswith("tok:cl100k_base@") and parts[1] == "tok:bytes"
    assert parts[-1] == f"version:{fertility.__version__}"
    assert f"corpus:{sig.corpus['sha256'][:12]}" in parts and "docs:line" in parts


def test_signature_keeps_keys_it_does_not_know_before_the_version(result):
    known_extra = dict(result.signature.extra)  # the engine's settings (long documents, samples)
    data = {**result.signature.to_dict(), "a_future_setting": 200}
    data["fertility"] = data.pop("fertility")  # version last, as a newer fertility writes it
    sig = Signature.from_dict(data)
    assert sig.extra == {**known_extra, "a_future_setting": 200}
    assert list(sig.to_dict()) == list(data)


# --- hand-edited and broken files ---------------------------------------------------------

def _edit(data: dict, how: str) -> dict | list | str:
    rows = data["rows"]
    ben = next(r for r in rows if r["lang"] == "ben_Beng")
    if how == "missing count":
        del ben["n_tokens"]
    elif how == "string count":
        ben["n_tokens"] = str(ben["n_tokens"])
    elif how == "negative count":
        ben["n_words"] = -ben["n_words"]
    elif how == "fractional count":
        ben["n_tokens"] = ben["n_tokens"] + 0.5
    elif how == "non-numeric ratio":
        ben["chars_per_token"] = "fast"
    elif how == "edited ratio":
        ben["chars_per_token"] = 2 * ben["chars_per_token"]
    elif how == "unknown tokenizer":
        ben["tokenizer"] = "llama3"
    elif how == "deleted row":
        rows.remove(ben)
    elif how == "no rows":
        del data["rows"]
    elif how == "rows not a list":
        data["rows"] = {"ben_Beng": ben}
    elif how == "signature not an object":
        data["signature"] = "tok:cl100k"
    elif how == "top level a list":
        return rows
    elif how == "findings not a list":
        data["findings"] = "none"
    elif how == "duplicate row":
        rows.insert(0, dict(ben))
    return data


EDITS = {
    "missing count": "missing key 'n_tokens'",
    "string count": "n_tokens is ",
    "negative count": "n_words is negative",
    "fractional count": "not int",
    "non-numeric ratio": "chars_per_token is \"fast\"",
    "edited ratio": "chars_per_token is ",
    "unknown tokenizer": "tokenizer 'llama3' is not in the signature",
    "deleted row": "counts are not the sum of the language rows",
    "no rows": "missing key 'rows'",
    "rows not a list": "rows is ",
    "signature not an object": "signature is ",
    "top level a list": "the top level is list",
    "findings not a list": "findings is ",
    "duplicate row": "the same tokenizer and language twice",
}


@pytest.mark.parametrize("how", sorted(EDITS))
def test_a_hand_edited_audit_is_one_clear_line_naming_file_and_problem(how, saved, tmp_path):
    data = json.loads(saved["cl100k"].read_text(encoding="utf-8"))
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(_edit(data, how)), encoding="utf-8")
    with pytest.raises(InputError) as raised:
        AuditResult.load(edited)
    assert str(raised.value).startswith(f"{edited}: not a fertility audit JSON: ")
    assert EDITS[how] in str(raised.value)
    for args in (("compare", edited, saved["gpt2"]), ("compare", saved["gpt2"], edited)):
        out = run(*args)
        assert out.exit_code == 2, (how, out.output)
        assert out.stdout == "" and "Traceback" not in out.stderr
        assert out.stderr.count("\n") == 1, out.stderr
        assert out.stderr.startswith(f"fertility: error: {edited}: not a fertility audit JSON: "), out.stderr


@pytest.mark.parametrize("cut", [0.1, 0.5, 0.99])
def test_a_truncated_audit_is_refused(cut, saved, tmp_path):
    text = saved["cl100k"].read_text(encoding="utf-8")
    truncated = tmp_path / "truncated.json"
    truncated.write_text(text[: int(len(text) * cut)], encoding="utf-8")
    out = run("compare", saved["gpt2"], truncated)
    assert out.exit_code == 2, out.output
    assert out.stderr.startswith(f"fertility: error: {truncated}: not a fertility audit JSON: not JSON"), out.stderr


def test_not_json_at_all_and_not_utf8_are_refused(saved, tmp_path):
    for name, content in (("words.json", b"these are not the numbers you saved\n"),
                          ("latin1.json", '{"fertility_version": "caf\xe9"}'.encode("latin-1"))):
        path = tmp_path / name
        path.write_bytes(content)
        out = run("compare", saved["gpt2"], path)
        assert out.exit_code == 2, out.output
        assert out.stderr.startswith(f"fertility: error: {path}: not a fertility audit JSON"), out.stderr


def test_a_baseline_that_was_edited_is_refused_before_the_audit(saved, tmp_path, small):
    data = json.loads(saved["gpt2"].read_text(encoding="utf-8"))
    edited = tmp_path / "base.json"
    edited.write_text(json.dumps(_edit(data, "negative count")), encoding="utf-8")
    out = run("check", "-t", real_file("gpt2.tiktoken"), small, "--baseline", edited, "--max-regression", "0.02")
    assert out.exit_code == 2, out.output
    assert out.stderr.startswith(f"fertility: error: {edited}: not a fertility audit JSON: "), out.stderr
    assert "n_words is negative" in out.stderr


def test_saved_audits_without_findings_compare_without_a_findings_diff(saved):
    out = run("compare", saved["gpt2_nofindings"], saved["cl100k"], "-f", "json")
    assert out.exit_code == 0, out.output
    payload = json.loads(out.stdout)
    assert payload["findings_diff"] == []
    rows = {r["lang"]: r for r in payload["rows"]}
    assert not math.isnan(rows["ALL"]["tokens_per_word_a"])


# --- the retrain report: the after-audit the CLI renders ------------------------------------

def test_retrain_report_audits_the_new_tokenizer_beside_the_other(tmp_path, small):
    from fertility.train.retrain_report import report

    corpus = tmp_path / "train"
    corpus.mkdir()
    for lang in ("ben_Beng", "eng_Latn"):
        shutil.copy(samples_dir() / f"{lang}.txt", corpus / f"{lang}.txt")
    retrained = fertility.retrain([corpus], output=tmp_path / "tok", vocab_size=600)
    done = report(retrained, compare_with="bytes", held_out=[small])
    assert done.after.tokenizers == ("bytes", "tok")
    assert done.after.has_findings
    alone = fertility.audit([str(tmp_path / "tok" / "tokenizer.json")], [small])
    assert done.after.counts_for("tok") == alone.counts_for(alone.tokenizers[0])
    assert done.summary().startswith(f"wrote {tmp_path / 'tok' / 'tokenizer.json'} (vocab ")
    # and the CLI prints the same audit
    (tmp_path / "cli").mkdir()
    out = run("retrain", corpus, "--vocab-size", "600", "-o", tmp_path / "cli" / "tok", "--compare-with", "bytes",
              "--held-out", small, "-q", "-f", "json")
    assert out.exit_code == 0, out.output
    rows = {(r["tokenizer"], r["lang"]): r for r in json.loads(out.stdout)["rows"]}
    expected = {(r["tokenizer"], r["lang"]): r for r in done.after.to_dict()["rows"]}
    assert {k: v["n_tokens"] for k, v in rows.items()} == {k: v["n_tokens"] for k, v in expected.items()}


def test_library_versions_in_the_signature_are_what_importlib_metadata_says(tmp_path, monkeypatch):
    from importlib import metadata

    from fertility.results.signature import _LIBRARIES, _installed_version, library_versions

    assert library_versions() == {name: metadata.version(name) for name in _LIBRARIES}
    for version in ("1.0", "2.0"):  # two dist-info folders side by side: importlib.metadata decides
        folder = tmp_path / f"fertilityprobe-{version}.dist-info"
        folder.mkdir()
        (folder / "METADATA").write_text(f"Metadata-Version: 2.1\nName: fertilityprobe\nVersion: {version}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert _installed_version("fertilityprobe") == metadata.version("fertilityprobe")
    assert _installed_version("nosuchpackagehere") == "absent"
