"""The JSON contract: every JSON file fertility writes says which shape it has.

Other tools (CI scripts, dashboards, an older or newer fertility) read these files, so each one
carries `schema_version`, and each shape is a JSON Schema shipped inside the package
(`fertility/results/schemas/NAME.json`, printed by `fertility schema NAME`). A version names one
exact shape: any key added, renamed, retyped or removed is a new version, so a reader can tell
what it holds before reading a row. Readers take every version up to their own (a file written
before versions existed has no `schema_version` and is read as it always was) and refuse a
newer one with one line, instead of misreading keys they do not know.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

# The shape each output has now. Raise a number when its schema changes (the test suite refuses
# a schema that changed under an old number).
SCHEMA_VERSIONS: dict[str, int] = {
    "audit": 1,     # `audit -f json`, `merge` (parts and the merged audit), the baseline `check` reads
    "compare": 1,   # `compare -f json`
    "check": 1,     # `check -f json`: the verdict
    "retrain": 2,   # training.json beside a retrained tokenizer.json
    "extend": 1,    # training.json beside an extended tokenizer.json
}

WHAT = {
    "audit": "an audit (fertility audit -f json, fertility merge)",
    "compare": "a comparison (fertility compare -f json)",
    "check": "the verdict of fertility check -f json",
    "retrain": "training.json of fertility retrain",
    "extend": "training.json of fertility extend",
}


class NewerSchema(ValueError):
    """A file written by a newer fertility: its shape is unknown here (the caller names the file)."""


def stamped(name: str, payload: dict[str, Any]) -> dict[str, Any]:
    """`payload` with its `schema_version` first, where a reader looks for it."""
    return {"schema_version": SCHEMA_VERSIONS[name], **payload}


def dump(name: str, payload: dict[str, Any]) -> str:
    """The text of one JSON output (already stamped): the one place every JSON file is written from."""
    if payload.get("schema_version") != SCHEMA_VERSIONS[name]:
        raise ValueError(f"a {name} JSON must carry schema_version {SCHEMA_VERSIONS[name]} first")
    return json.dumps(payload, ensure_ascii=False, indent=2) + "\n"


def version_of(name: str, data: dict[str, Any]) -> int | None:
    """The schema version of a file being read: None for one written before versions existed;
    NewerSchema for one this fertility cannot know; ValueError for a value no fertility writes."""
    if "schema_version" not in data:
        return None
    version = data["schema_version"]
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ValueError(f"schema_version is {json.dumps(version)[:40]}, not a version number (1 or more)")
    current = SCHEMA_VERSIONS[name]
    if version > current:
        from fertility.version import __version__

        raise NewerSchema(f"{name} schema_version {version} was written by a newer fertility; fertility "
                          f"{__version__} reads versions 1 to {current} (pip install -U fertility)")
    return version


def kind_of(data: dict[str, Any]) -> str | None:
    """Which of fertility's JSON outputs `data` is, by the keys its shipped schema requires: a
    comparison or a training.json handed where an audit belongs is named as what it is, rather
    than refused for a key it lacks or its version (a retrain record's 2 read as a newer audit)."""
    stamps = {"schema_version", "fertility_version"}  # absent from files older than the contract
    for name in SCHEMA_VERSIONS:
        required = set(schema(name).get("required", [])) - stamps
        if required and required <= data.keys():
            return name
    return None


@cache
def schema_text(name: str) -> str:
    """The JSON Schema of an output, as shipped in the package."""
    if name not in SCHEMA_VERSIONS:
        raise KeyError(name)
    return resources.files("fertility.results").joinpath("schemas", f"{name}.json").read_text(encoding="utf-8")


def schema(name: str) -> dict[str, Any]:
    return json.loads(schema_text(name))


__all__ = ["SCHEMA_VERSIONS", "WHAT", "NewerSchema", "dump", "kind_of", "schema", "schema_text", "stamped",
           "version_of"]
