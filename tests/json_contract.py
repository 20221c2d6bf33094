"""Validation of fertility's JSON outputs against the schemas shipped in the package.

conftest.py routes every JSON output the suite makes in-process (every `contract.dump`: audit,
merge, compare, check, retrain and extend, through CliRunner or the library) through `violations`,
so a test that changes an output without changing its schema fails, whichever test it is.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path

import jsonschema

LOCK = Path(__file__).parent / "data" / "schema_lock.json"


@cache
def validator(name: str) -> jsonschema.Draft202012Validator:
    from fertility.results.contract import schema

    return jsonschema.Draft202012Validator(schema(name))


def violations(name: str, data: object) -> list[str]:
    """Each way `data` departs from the schema `name`, as `path: message` (empty when it holds)."""
    return [f"{'/'.join(map(str, error.absolute_path)) or '(top level)'}: {error.message[:300]}"
            for error in validator(name).iter_errors(data)]


def digest(text: str) -> str:
    """The digest of a schema's content (key order and spacing do not count)."""
    canonical = json.dumps(json.loads(text), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
