"""The pre-commit hook (.pre-commit-hooks.yaml), tried as a user would: `pre-commit try-repo` on a
local clone of this repository, from a user's repository holding a config, run for a pass and for
a failed threshold. pre-commit builds the hook's environment and installs fertility into it from
the clone, as for any user; its dependencies are not downloaded again but seen through PYTHONPATH
from this environment (PIP_NO_DEPS), which takes the test from minutes to seconds."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent


def git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t"})


def test_the_hook_declares_fertility_check_on_tokenizer_and_config_files():
    import re

    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text("utf-8"))
    assert hook["id"] == "fertility-check" and hook["entry"] == "fertility check" and not hook["pass_filenames"]
    files = re.compile(hook["files"])
    for path in ("tokenizer.json", "models/tok/tokenizer.json", "spm.model", "tokenizer.model.v3", "o.tiktoken",
                 "tekken_240911.json", "m.gguf", "vocab.json", "merges.txt", "pyproject.toml", "fertility.toml"):
        assert files.search(path), path
    for path in ("README.md", "data/eng_Latn.txt", "package.json", "model.py"):
        assert not files.search(path), path


@pytest.mark.slow
def test_pre_commit_try_repo_runs_the_hook(tmp_path):
    pre_commit = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) or shutil.which("pre-commit")
    if pre_commit is None or shutil.which("git") is None:
        pytest.skip("pre-commit (in the test extra) or git is not installed")
    clone = tmp_path / "fertility"
    git("clone", "--quiet", str(ROOT), str(clone), cwd=tmp_path)
    if not (clone / ".pre-commit-hooks.yaml").exists():
        pytest.skip("the hooks file is not committed yet (try-repo reads the committed tree)")
    user = tmp_path / "user"
    user.mkdir()
    git("init", "--quiet", cwd=user)
    for lang in ("ben_Beng", "eng_Latn"):
        shutil.copy(ROOT / "corpora_samples" / f"{lang}.txt", user / f"{lang}.txt")
    site = [p for p in sys.path if p.endswith("site-packages")]
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "NO_COLOR": "1",
           "PIP_NO_DEPS": "1", "PYTHONPATH": os.pathsep.join(site)}

    def try_repo(limit: float) -> subprocess.CompletedProcess:
        (user / "pyproject.toml").write_text('[tool.fertility]\ntokenizer = "bytes"\n'
                                             'corpus = ["ben_Beng.txt", "eng_Latn.txt"]\n'
                                             f"min_chars_per_token = {limit}\n", "utf-8")
        git("add", "-A", cwd=user)
        return subprocess.run([pre_commit, "try-repo", str(clone), "fertility-check", "--all-files"], cwd=user,
                              env=env, capture_output=True, text=True, timeout=900, check=False)

    passed = try_repo(0.1)
    assert passed.returncode == 0, passed.stdout[-3000:] + passed.stderr[-3000:]
    assert "fertility check" in passed.stdout and "Passed" in passed.stdout
    failed = try_repo(0.5)
    assert failed.returncode == 1, failed.stdout[-3000:]
    assert "Failed" in failed.stdout and "min_chars_per_token ben_Beng" in failed.stdout
