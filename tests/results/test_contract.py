"""The JSON contract: every JSON output carries `schema_version` and matches the JSON Schema shipped
in the package (`fertility schema NAME` prints it); a schema cannot change under an old version
number; readers take the versions they know and refuse newer ones in one line naming the file.

Each output is made here for real on the bundled samples (audit, `--by script`, sampled, shard
parts and their merge, compare, check, retrain, extend); conftest.py also checks every JSON output
any other test makes."""

from __future__ import annotations

import copy
import json
import shutil

import jsonschema
import pytest
from click.testing import CliRunner
from json_contract import LOCK, digest, violations

from fertility.cli import cli
from fertility.io.samples import samples_dir
from fertility.results import contract
from fertility.results.model import AuditResult

NAMES = ["audit", "compare", "check", "retrain", "extend"]


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], env={"COLUMNS": "200", "NO_COLOR": "1"})


def read(path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def outputs(tmp_path_factory, small) -> dict[str, list[dict]]:
    """Every kind of JSON output, made by the command line on real text."""
    out = tmp_path_factory.mktemp("outputs")
    made: dict[str, list[dict]] = {name: [] for name in NAMES}

    def json_of(name, *args, code=0):
        result = run(*args)
        assert result.exit_code == code, result.output
        made[name].append(json.loads(result.stdout))
        return result.stdout

    (out / "a.json").write_text(json_of("audit", "audit", "-t", "bytes", "-f", "json", "-q", small), "utf-8")
    json_of("audit", "audit", "-f", "json", "-q")  # cl100k_base on the bundled samples: findings, vocabulary
    json_of("audit", "audit", "-t", "graphemes", "--by", "script", "-f", "json", "-q", small)
    json_of("audit", "audit", "-t", "bytes", "--sample-docs", "5", "--mix", "eng_Latn=0.5,ben_Beng=0.5",
            "-f", "json", "-q", small)
    for k in (1, 2):
        (out / f"part{k}.json").write_text(json_of("audit", "audit", "-t", "bytes", "--shard", f"{k}/2", "-f", "json",
                                                   "-q", small), "utf-8")
    json_of("audit", "merge", out / "part1.json", out / "part2.json", "-f", "json")
    (out / "b.json").write_text(run("audit", "-t", "chars", "-f", "json", "-q", small).stdout, "utf-8")
    json_of("compare", "compare", out / "a.json", out / "b.json", "-f", "json")
    json_of("check", "check", "-t", "bytes", "--min-chars-per-token", "0.5", "-f", "json", small, code=1)
    json_of("check", "check", "-t", "bytes", "--baseline", out / "a.json", "--max-regression", "0.01",
            "-f", "json", small)
    train = out / "train"
    train.mkdir()
    for lang in ("ben_Beng", "eng_Latn"):
        shutil.copy(samples_dir() / f"{lang}.txt", train / f"{lang}.txt")
    retrained = run("retrain", train, "--vocab-size", "300", "-o", out / "retrained", "--held-out", small)
    assert retrained.exit_code == 0, retrained.output
    made["retrain"].append(read(out / "retrained" / "training.json"))
    extended = run("extend", out / "retrained" / "tokenizer.json", train / "ben_Beng.txt", "--add", "10",
                   "-o", out / "extended", "--held-out", small)
    assert extended.exit_code == 0, extended.output
    made["extend"].append(read(out / "extended" / "training.json"))
    return made


@pytest.mark.parametrize("name", NAMES)
def test_each_output_carries_its_version_first_and_matches_its_schema(outputs, name):
    assert outputs[name], f"no {name} output was made"
    for data in outputs[name]:
        assert next(iter(data)) == "schema_version" and data["schema_version"] == contract.SCHEMA_VERSIONS[name]
        assert violations(name, data) == []


@pytest.mark.parametrize("name", NAMES)
def test_the_schemas_are_json_schemas_of_the_current_version(name):
    schema = contract.schema(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["properties"]["schema_version"]["const"] == contract.SCHEMA_VERSIONS[name]
    assert schema["additionalProperties"] is False and "schema_version" in schema["required"]


def test_a_schema_never_changes_under_an_old_version():
    """The lock holds the digest of each schema at each version: a schema edited without a new
    version number (SCHEMA_VERSIONS) fails here, and so does a lock entry rewritten afterwards."""
    lock = json.loads(LOCK.read_text(encoding="utf-8"))
    assert sorted(lock) == sorted(contract.SCHEMA_VERSIONS)
    for name, version in contract.SCHEMA_VERSIONS.items():
        found = digest(contract.schema_text(name))
        assert str(version) in lock[name], (
            f"{name} is at schema_version {version} but tests/data/schema_lock.json has no digest for it: "
            f"add \"{version}\": \"{found}\" (keeping the older entries)")
        assert lock[name][str(version)] == found, (
            f"fertility/results/schemas/{name}.json changed, but its schema_version is still {version}: raise "
            f"SCHEMA_VERSIONS[{name!r}] in fertility/results/contract.py and add its digest {found} to the lock")
        assert sorted(map(int, lock[name])) == list(range(1, version + 1))  # no version skipped or dropped


def test_an_output_that_changes_shape_fails_its_schema(outputs):
    """What the suite-wide check catches: a key added, renamed, removed or retyped."""
    audit = outputs["audit"][0]
    changed = []
    added = copy.deepcopy(audit)
    added["rows"][0]["chars_per_byte"] = 0.5
    changed.append(added)
    renamed = copy.deepcopy(audit)
    renamed["rows"][0]["tokens"] = renamed["rows"][0].pop("n_tokens")
    changed.append(renamed)
    retyped = copy.deepcopy(audit)
    retyped["rows"][0]["n_tokens"] = str(retyped["rows"][0]["n_tokens"])
    changed.append(retyped)
    top = copy.deepcopy(audit)
    top["summary"] = {}
    changed.append(top)
    older = copy.deepcopy(audit)
    older["schema_version"] = 0
    changed.append(older)
    for data in changed:
        assert violations("audit", data), data.keys()
    verdict = copy.deepcopy(outputs["check"][0])
    del verdict["checks"][0]["limit"]
    assert violations("check", verdict)


def test_the_suite_wide_check_sees_outputs_made_anywhere(json_contract_log, small):
    before = len(json_contract_log)
    assert run("audit", "-t", "bytes", "-f", "json", "-q", small).exit_code == 0
    assert [name for name, _ in json_contract_log[before:]] == ["audit"]
    assert json_contract_log[-1][1] == []


def test_schema_command_prints_the_shipped_schema():
    for name in NAMES:
        printed = run("schema", name)
        assert printed.exit_code == 0 and json.loads(printed.stdout) == contract.schema(name)
        assert printed.stdout == contract.schema_text(name)
        version = run("schema", name, "--version")
        assert version.exit_code == 0 and version.stdout == f"{contract.SCHEMA_VERSIONS[name]}\n"
    unknown = run("schema", "audits")
    assert unknown.exit_code == 2 and "audits" in unknown.stderr


def test_readers_take_older_versions_and_refuse_newer_ones(outputs, tmp_path, small):
    current = outputs["audit"][0]
    AuditResult.from_dict(current)
    legacy = {k: v for k, v in current.items() if k != "schema_version"}  # written before versions
    assert AuditResult.from_dict(legacy).counts == AuditResult.from_dict(current).counts
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps(current | {"schema_version": contract.SCHEMA_VERSIONS["audit"] + 1}), "utf-8")
    ours = tmp_path / "ours.json"
    ours.write_text(json.dumps(legacy), "utf-8")
    expected = (f"fertility: error: {newer}: audit schema_version {contract.SCHEMA_VERSIONS['audit'] + 1} was "
                "written by a newer fertility; fertility ")
    for args in (["compare", ours, newer], ["check", "-t", "bytes", "--baseline", newer, "--max-regression", "0.1",
                                           small], ["merge", newer], ["report", newer, "-o", tmp_path / "r.html"]):
        result = run(*args)
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.startswith(expected) and result.stderr.count("\n") == 1, result.stderr
        assert "pip install -U fertility" in result.stderr
    for bad in ("1", True, 0, -1, 1.5, None):
        broken = tmp_path / "broken.json"
        broken.write_text(json.dumps(current | {"schema_version": bad}), "utf-8")
        result = run("compare", ours, broken)
        assert result.exit_code == 2 and "not a version number" in result.stderr, (bad, result.stderr)
        assert result.stderr.startswith(f"fertility: error: {broken}: not a fertility audit JSON: schema_version is")
