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
