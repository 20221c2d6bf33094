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


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite tests/data/golden/ from this run (only when figures are meant to move)")


# No test may reach a real hub: in-process code and the processes tests start inherit an endpoint
# where nothing listens (tests of the hub path start their own server and pass its address).
os.environ["HF_ENDPOINT"] = "http://127.0.0.1:9"
os.environ.pop("HF_TOKEN", None)
