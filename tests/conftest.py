import json
import os
import pathlib
import shutil
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> pathlib.Path:
    """Three languages of the bundled parallel samples (real text): spaced and unspaced scripts."""
    from fertility.io.samples import samples_dir

    root = tmp_path_factory.mktemp("small")
    for lang in ("ben_Beng", "eng_Latn", "zho_Hans"):
        shutil.copy(samples_dir() / f"{lang}.txt", root / f"{lang}.txt")
    return root


@pytest.fixture(scope="session")
def json_contract_log():
    """Every JSON output made in this session, checked against its shipped schema when made:
    a list of (schema name, violations), appended to by the patched `contract.dump`."""
    from json_contract import violations

    from fertility.results import contract

    log: list[tuple[str, list[str]]] = []
    original = contract.dump

    def checked(name, payload):
        text = original(name, payload)
        log.append((name, violations(name, json.loads(text))))
        return text

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(contract, "dump", checked)
        yield log


@pytest.fixture(autouse=True)
def every_json_output_matches_its_schema(json_contract_log):
    """Fails the test that made a JSON output its schema does not describe (change the schema and
    raise its schema_version in fertility/results/contract.py, then the lock in tests/data)."""
    start = len(json_contract_log)
    yield
    broken = [(name, found) for name, found in json_contract_log[start:] if found]
    if broken:
        name, found = broken[0]
        pytest.fail(f"a {name} JSON output does not match fertility/results/schemas/{name}.json:\n"
                    + "\n".join(found[:10]), pytrace=False)


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite tests/data/golden/ from this run (only when figures are meant to move)")


# No test may reach a real hub: in-process code and the processes tests start inherit an endpoint
# where nothing listens (tests of the hub path start their own server and pass its address).
os.environ["HF_ENDPOINT"] = "http://127.0.0.1:9"
os.environ.pop("HF_TOKEN", None)
