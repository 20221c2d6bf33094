"""Outputs never destroy anything, and every output path is checked before any work.

Real commands on real text (the bundled samples, a tiny two-language corpus): devices and FIFOs
are written through, links followed, modes follow the umask, a failed write keeps the old file,
retrain's --force replaces only what fertility wrote, and an installed wheel finds its samples.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from fertility.cli import cli
from fertility.io.samples import samples_dir

ROOT = Path(__file__).resolve().parents[2]
ENG = "The river market opens at dawn.\nBoats arrive.\n"
BEN = "নদীর বাজার ভোরে খোলে।\nনৌকা আসে।\n"
AUDIT = ("audit", "-t", "bytes", "-f", "json", "-q")


def run(*args: str, **kwargs):
    return CliRunner().invoke(cli, list(args), env={"COLUMNS": "120", "NO_COLOR": "1"}, **kwargs)


@pytest.fixture
def corpus(tmp_path: Path) -> str:
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "eng_Latn.txt").write_text(ENG, encoding="utf-8")
    (folder / "ben_Beng.txt").write_text(BEN, encoding="utf-8")
    return str(folder)


@pytest.fixture
def umask():
    """Set the process umask for one test, restored afterwards."""
    old = os.umask(0o022)
    yield os.umask
    os.umask(old)


def sh(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    """A subprocess whose exit code the test checks itself."""
    return subprocess.run(args, check=False, capture_output=True, text=True, **kwargs)


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


# --- 1. the main job from an installed wheel -----------------------------------------------

WHERE = "import fertility, fertility.io.samples as s; print(fertility.__file__); print(s.samples_dir())"
LIBRARY_AUDIT = "import fertility; r = fertility.audit(['bytes'], diagnose=False); print(len({k[1] for k in r.counts}))"


def test_wheel_installed_outside_the_checkout_audits_the_bundled_samples(tmp_path):
    wheels, target, work = tmp_path / "wheels", tmp_path / "site", tmp_path / "work"
    work.mkdir()
    built = sh([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(ROOT)], timeout=180)
    if built.returncode != 0:
        pytest.skip(f"cannot build a wheel here: {built.stderr.strip().splitlines()[-1:]}")
    wheel = next(wheels.glob("fertility-*.whl"))
    installed = sh([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
                   timeout=180)
    assert installed.returncode == 0, installed.stderr
    # the test venv's dependencies, the wheel's fertility first, cwd outside the checkout
    env = {**os.environ, "PYTHONPATH": str(target), "NO_COLOR": "1"}
    where = sh([sys.executable, "-c", WHERE], cwd=work, env=env, timeout=60)
    assert where.returncode == 0, where.stderr
    module_file, samples = where.stdout.splitlines()
    assert Path(module_file).is_relative_to(target) and not Path(module_file).is_relative_to(ROOT)
    assert Path(samples) == target / "fertility" / "corpora_samples"
    assert (target / "fertility" / "py.typed").is_file()  # type checkers use the installed annotations
    done = sh([sys.executable, "-m", "fertility", "audit", "-t", "bytes", "-f", "json", "-q"],
              cwd=work, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    langs = {r["lang"] for r in json.loads(done.stdout)["rows"]} - {"ALL"}
    assert langs == {p.stem for p in samples_dir().glob("*.txt")}
    assert len(langs) == 14
    library = sh([sys.executable, "-c", LIBRARY_AUDIT], cwd=work, env=env, timeout=120)
    assert library.returncode == 0, library.stderr
    assert int(library.stdout) == 14


# --- 2. -o writes through devices and FIFOs, follows links, respects the umask ----------------

def test_dash_is_stdout(corpus):
    result = run(*AUDIT, "-o", "-", corpus)
    assert result.exit_code == 0, result.output
    assert {r["lang"] for r in json.loads(result.stdout)["rows"]} >= {"eng_Latn", "ben_Beng"}
    assert not Path("-").exists()


def _null_device(tmp_path: Path) -> Path:
    """/dev/null (same device numbers) at a path of our own: a regression that renames over
    its target must not replace the machine's /dev/null, as the old code did when tried."""
    node = tmp_path / "null"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("mknod needs root (CAP_MKNOD)")
    return node


@pytest.mark.parametrize("force", [False, True])
def test_a_character_device_is_written_through_never_replaced(tmp_path, corpus, force):
    null = _null_device(tmp_path)
    before = null.stat()
    result = run(*AUDIT, "-o", str(null), *(["--force"] if force else []), corpus)
    assert result.exit_code == 0, result.output
    after = null.lstat()
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev and after.st_ino == before.st_ino
    assert leftovers(tmp_path) == []


def test_a_fifo_is_written_through_to_its_reader(tmp_path, corpus):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    result = run(*AUDIT, "-o", str(fifo), "--force", corpus)
    assert result.exit_code == 0, result.output
    reader.join(timeout=30)
    assert not reader.is_alive(), "the reader never saw the writer close the FIFO"
    assert {r["lang"] for r in json.loads(received[0])["rows"]} >= {"eng_Latn", "ben_Beng"}
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert leftovers(tmp_path) == []


def test_a_symlink_is_followed_and_kept(tmp_path, corpus):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    real = elsewhere / "audit.json"
    real.write_text("old results\n")
    real.chmod(0o640)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    refused = run(*AUDIT, "-o", str(link), corpus)
    assert refused.exit_code == 2 and "already exists" in refused.stderr
    assert real.read_text() == "old results\n"
    result = run(*AUDIT, "-o", str(link), "--force", corpus)
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and Path(os.readlink(link)) == real
    assert json.loads(real.read_text())["rows"]
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert leftovers(tmp_path) == [] and leftovers(elsewhere) == []


def test_a_dangling_symlink_creates_its_target(tmp_path, corpus):
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "new.json")
    result = run(*AUDIT, "-o", str(link), corpus)
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and json.loads((tmp_path / "new.json").read_text())["rows"]


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_new_files_get_the_umask_mode(tmp_path, corpus, umask, mask, mode):
    umask(mask)
    out = tmp_path / "audit.json"
    result = run(*AUDIT, "-o", str(out), corpus)
    assert result.exit_code == 0, result.output
    assert stat.S_IMODE(out.stat().st_mode) == mode


@pytest.mark.parametrize("mode", [0o600, 0o664, 0o604])
def test_an_overwritten_file_keeps_its_mode(tmp_path, corpus, umask, mode):
    umask(0o022)
    out = tmp_path / "audit.json"
    out.write_text("old\n")
    out.chmod(mode)
    result = run(*AUDIT, "-o", str(out), "--force", corpus)
    assert result.exit_code == 0, result.output
    assert out.read_text() != "old\n" and stat.S_IMODE(out.stat().st_mode) == mode


def _limit_file_size() -> None:
    """A real write failure: files may not grow past 64 bytes (EFBIG instead of SIGXFSZ)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))


def test_a_failed_write_keeps_the_old_file(tmp_path, corpus):
    out = tmp_path / "audit.json"
    out.write_text("old results\n")
    done = sh([sys.executable, "-m", "fertility", *AUDIT, "-o", str(out), "--force", corpus], timeout=120,
              preexec_fn=_limit_file_size, cwd=tmp_path, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"fertility: error: {out}: cannot write") and "Traceback" not in done.stderr
    assert out.read_text() == "old results\n"
    assert leftovers(tmp_path) == []


# --- 3. retrain folders: --force replaces only what fertility wrote ------------------------

RETRAIN = ("retrain", "--vocab-size", "1000", "-q", "-f", "csv")


def test_retrain_into_the_current_folder(tmp_path, corpus, monkeypatch):
    out = tmp_path / "tok"
    out.mkdir()
    monkeypatch.chdir(out)
    first = run(*RETRAIN, corpus, "-o", ".")
    assert first.exit_code == 0, first.output
    assert sorted(p.name for p in out.iterdir()) == ["tokenizer.json", "training.json"]
    again = run(*RETRAIN, corpus, "-o", ".", "--force", "--seed", "7")
    assert again.exit_code == 0, again.output
    assert json.loads((out / "training.json").read_text())["arguments"]["seed"] == 7
    assert sorted(p.name for p in out.iterdir()) == ["tokenizer.json", "training.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus", "tok"]  # nothing beside it either


def test_retrain_into_a_new_subfolder_with_the_umask_mode(tmp_path, corpus, monkeypatch, umask):
    monkeypatch.chdir(tmp_path)
    umask(0o027)
    result = run(*RETRAIN, corpus, "-o", "./sub")
    assert result.exit_code == 0, result.output
    assert stat.S_IMODE((tmp_path / "sub").stat().st_mode) == 0o750
    for name in ("tokenizer.json", "training.json"):
        assert stat.S_IMODE((tmp_path / "sub" / name).stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus", "sub"]


def test_retrain_force_never_empties_a_folder_with_other_files(tmp_path, corpus):
    out = tmp_path / "project"
    out.mkdir()
    mine = {f"notes{i}.txt": f"note {i}" for i in range(7)} | {"tokenizer.json": "my own tokenizer"}
    for name, text in mine.items():
        (out / name).write_text(text)
    result = run(*RETRAIN, corpus, "-o", str(out), "--force")
    assert result.exit_code == 2
    line = result.stderr.strip()
    assert len(line.splitlines()) == 1 and str(out) in line
    assert "notes0.txt, notes1.txt, notes2.txt, notes3.txt, notes4.txt and 2 more" in line
    assert {p.name: p.read_text() for p in out.iterdir()} == mine


def test_retrain_in_an_empty_existing_folder_needs_no_force(tmp_path, corpus):
    out = tmp_path / "empty"
    out.mkdir()
    result = run(*RETRAIN, corpus, "-o", str(out))
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["tokenizer.json", "training.json"]


# --- 4. every path checked before any work -------------------------------------------------

@pytest.mark.parametrize("extra, message", [
    (["--held-out", "{tmp}/missing"], "missing: no such file or folder (given to --held-out)"),
    (["--compare-with", "{tmp}/missing.json"], "missing.json"),
])
def test_retrain_checks_held_out_and_compare_with_before_training(tmp_path, corpus, extra, message):
    out = tmp_path / "tok"
    result = run(*RETRAIN, corpus, "-o", str(out), *[e.format(tmp=tmp_path) for e in extra])
    assert result.exit_code == 2 and message in result.stderr, result.output
    assert not out.exists()  # no training happened: nothing was written
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus"]


def test_retrain_output_problem_reported_before_the_corpus_is_read(tmp_path):
    (tmp_path / "afile").write_text("mine")
    result = run(*RETRAIN, str(tmp_path / "no-such-corpus"), "-o", str(tmp_path / "afile"))
    assert result.exit_code == 2 and "afile: exists and is not a folder" in result.stderr


def test_check_reports_a_bad_junit_folder_before_running_the_gate(tmp_path, corpus):
    # the tokenizer does not exist either: the gate never ran, or that would be the error
    result = run("check", "-t", str(tmp_path / "missing.json"), "--min-chars-per-token", "1", corpus,
                 "--junit", str(tmp_path / "no" / "junit.xml"))
    assert result.exit_code == 2 and "no/junit.xml: folder" in result.stderr, result.output


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders; the unwritable case is "
                    "covered as root by test_a_file_where_a_folder_is_expected")
def test_a_read_only_folder_is_refused_before_any_work(tmp_path, corpus):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    result = run(*AUDIT, "-o", str(folder / "a.json"), corpus)
    assert result.exit_code == 2 and "is not writable" in result.stderr and "Traceback" not in result.stderr


def test_a_file_where_a_folder_is_expected(tmp_path, corpus):
    (tmp_path / "afile").write_text("mine")
    for command in (AUDIT, ("compare", "bytes", "chars", "-f", "json")):
        result = run(*command, corpus, "-o", str(tmp_path / "afile" / "out.json"))
        assert result.exit_code == 2, result.output
        assert "afile is not a folder" in result.stderr and "Traceback" not in result.stderr
    assert (tmp_path / "afile").read_text() == "mine"
