"""A release that installs anywhere: `fertility --version` names what made the numbers, and
`python -m build` makes an sdist and, from that sdist alone, a wheel that `twine check` passes and
that carries the schemas and the bundled samples (.ci/run installs it on each Python it finds and
runs the main job there)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from click.testing import CliRunner

from fertility.cli import cli
from fertility.version import __version__

ROOT = Path(__file__).resolve().parent.parent


def test_version_lists_python_and_the_libraries_behind_the_numbers():
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == f"fertility {__version__}"
    assert lines[1].startswith(f"python {sys.version_info.major}.{sys.version_info.minor}.")
    for name in ("tokenizers", "sentencepiece", "tiktoken", "regex", "click"):
        assert f"{name} {metadata.version(name)}" in lines
    assert any(line.startswith("pyarrow ") and line.endswith("(optional)") for line in lines)


@pytest.mark.slow
def test_build_makes_an_sdist_and_from_it_a_wheel_that_twine_accepts(tmp_path):
    if shutil.which("twine", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("build and twine are in the test extra")
    source = tmp_path / "source"  # a copy: building writes build/ and *.egg-info beside the sources
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", ".venv", "dist", "build", "*.egg-info",
                                                                "__pycache__", ".fixtures", ".pytest_cache",
                                                                ".hypothesis", ".mypy_cache", ".ruff_cache"))
    dist = tmp_path / "dist"
    # no --sdist/--wheel: build makes the sdist, then the wheel from the unpacked sdist alone
    built = subprocess.run([sys.executable, "-m", "build", "--outdir", str(dist), str(source)],
                           capture_output=True, text=True, timeout=900, check=False)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    assert "Building wheel from sdist" in built.stdout + built.stderr
    (sdist,) = dist.glob("fertility-*.tar.gz")
    (wheel,) = dist.glob("fertility-*-py3-none-any.whl")
    checked = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(sdist), str(wheel)],
                             capture_output=True, text=True, timeout=300, check=False)
    assert checked.returncode == 0 and checked.stdout.count("PASSED") == 2, checked.stdout + checked.stderr
    names = zipfile.ZipFile(wheel).namelist()
    for schema in ("audit", "compare", "check", "retrain", "extend"):
        assert f"fertility/results/schemas/{schema}.json" in names
    assert sum(n.startswith("fertility/corpora_samples/") and n.endswith(".txt") for n in names) == 14
    assert "fertility/io/data/iso639.txt" in names  # language codes are package data
    metadata_text = zipfile.ZipFile(wheel).read(f"fertility-{__version__}.dist-info/METADATA").decode()
    for line in ("Requires-Python: >=3.11", "Classifier: Programming Language :: Python :: 3.13",
                 "Project-URL: Changelog, "):
        assert line in metadata_text
    with tarfile.open(sdist) as archive:
        members = archive.getnames()
    root = f"fertility-{__version__}"
    for name in ("pyproject.toml", "README.md", "fertility/results/schemas/audit.json",
                 "corpora_samples/eng_Latn.txt"):
        assert f"{root}/{name}" in members, name
