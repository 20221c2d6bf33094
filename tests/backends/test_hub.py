"""Tokenizers by hub id and named corpora, through the installed `fertility` command against a real
hub-compatible server on 127.0.0.1 (olah, see hub_emulation.py): only HF_ENDPOINT and the cache
folders differ from a run against huggingface.co. Test names carry `hub_emulation`.

Also here, without a server: model aliases (`-t gpt-4o`), spec precedence, and code languages.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from hub_emulation import GatedHub, Olah, free_port, git_repo, hub_env
from real_files import SHARED_CORPORA, mistral_file, real_file

from fertility.io.samples import samples_dir

FERTILITY = str(Path(sys.executable).with_name("fertility"))
ORG = "fertility-test"
# Programs written for these tests (the-stack-smol stand-in): one record per source file.
CODE = {
    "python": ["def mean(values):\n    return sum(values) / len(values)\n",
               "import os\n\nfor name in sorted(os.listdir('.')):\n    print(name)\n"],
    "c": ["#include <stdio.h>\n\nint main(void) {\n    printf(\"%d\\n\", 6 * 7);\n    return 0;\n}\n"],
    "javascript": ["const total = [1, 2, 3].reduce((a, b) => a + b, 0);\nconsole.log(`total: ${total}`);\n",
                   "export function greet(name) {\n  return 'Hello, ' + name;\n}\n"],
}
FINEWEB_ROWS_PER_GROUP = 10


def parquet_bytes(columns: dict, *, row_group_size: int | None = None) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    buffer = io.BytesIO()
    pq.write_table(pa.table(columns), buffer, row_group_size=row_group_size)
    return buffer.getvalue()


def sample_lines(lang: str) -> list[str]:
    return [line for line in (samples_dir() / f"{lang}.txt").read_text(encoding="utf-8").split("\n") if line.strip()]


@pytest.fixture(scope="session")
def hub(tmp_path_factory):
    """One olah server for the session, serving repositories built here from local files."""
    pytest.importorskip("olah", reason="olah (the local hub mirror) is in the test extra")
    if shutil.which("git") is None:
        pytest.skip("git is not installed: olah serves git repositories")
    pytest.importorskip("pyarrow")
    llama3, minilm = real_file("llama3/tokenizer.json"), real_file("minilm/tokenizer.json")
    spm = mistral_file("mistral_instruct_tokenizer_241114.model.v7")
    root = tmp_path_factory.mktemp("hub")
    mirrors = root / "mirrors"
    weights = os.urandom(1 << 20)
    commits = git_repo(mirrors / "models" / ORG / "llama3", [
        {"tokenizer.json": minilm, "config.json": b'{"model_type": "bert"}'},
        {"tokenizer.json": llama3, "config.json": b'{"model_type": "llama"}', "model.safetensors": weights,
         "original/consolidated.00.pth": weights}])
    git_repo(mirrors / "models" / ORG / "mistral-spm", [{"tokenizer.model.v7": spm}])
    git_repo(mirrors / "models" / ORG / "weights-only", [{"config.json": b"{}", "model.safetensors": weights}])
    fineweb = {f"data/{lang}/train/000_00000.parquet":
               parquet_bytes({"text": sample_lines(lang), "id": [f"{lang}-{i}" for i in range(len(sample_lines(lang)))]},
                             row_group_size=FINEWEB_ROWS_PER_GROUP) for lang in ("ben_Beng", "hin_Deva")}
    git_repo(mirrors / "datasets" / "HuggingFaceFW" / "fineweb-2", [fineweb])
    stack = {f"data/{name}/data.json": "".join(json.dumps({"content": c, "lang": name}) + "\n" for c in contents).encode()
             for name, contents in CODE.items()}
    git_repo(mirrors / "datasets" / "bigcode" / "the-stack-smol", [stack])
    devtest = SHARED_CORPORA / "flores200" / "devtest"
    if devtest.is_dir():  # FLORES+ layout: one Parquet per language and split, the sentence in `text`
        files = {}
        for path in sorted(devtest.glob("*.txt")):
            lines = [line for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]
            files[f"devtest/{path.stem}.parquet"] = parquet_bytes(
                {"id": list(range(len(lines))), "iso_639_3": [path.stem[:3]] * len(lines),
                 "iso_15924": [path.stem[4:]] * len(lines), "text": lines})
        git_repo(mirrors / "datasets" / "openlanguagedata" / "flores_plus", [files])
    server = Olah(root)
    server.commits = commits  # type: ignore[attr-defined]
    server.files = {"llama3": llama3, "minilm": minilm, "spm": spm}  # type: ignore[attr-defined]
    server.weights = weights  # type: ignore[attr-defined]
    yield server
    server.stop()


@pytest.fixture(scope="session")
def gated():
    server = GatedHub({f"models/{ORG}/gated-model": ["tokenizer.json", "config.json"],
                       "datasets/openlanguagedata/flores_plus": ["devtest/ben_Beng.parquet"]})
    yield server
    server.stop()


@pytest.fixture
def corpus(tmp_path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    for lang in ("ben_Beng", "eng_Latn", "zho_Hans"):
        shutil.copy(samples_dir() / f"{lang}.txt", folder / f"{lang}.txt")
    return folder


def run_cli(*args: str, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess:
    """The installed command in a process of its own: huggingface_hub reads some settings when
    imported, so a hub test's process must start with the hub's address."""
    return subprocess.run([FERTILITY, *args], env=env, capture_output=True, text=True, timeout=timeout, check=False)


def run_here(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    """The same command through CliRunner, for tests that never reach a hub (faster)."""
    from click.testing import CliRunner

    from fertility.cli import cli

    result = CliRunner().invoke(cli, list(args), env=env)
    return subprocess.CompletedProcess(args, result.exit_code, result.stdout, result.stderr)


def audit_json(*args: str, env: dict[str, str], here: bool = False) -> dict:
    done = (run_here if here else run_cli)("audit", "-q", "--no-findings", "-f", "json", *args, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def counts(payload: dict) -> dict:
    """Rows without the tokenizer's name: what must be equal whatever the tokenizer is called."""
    return {row["lang"]: {k: v for k, v in row.items() if k != "tokenizer"} for row in payload["rows"]}


def holds_weights(root: Path, weights: bytes) -> bool:
    """Whether any file below `root` is the weights file (by content, whatever its name)."""
    return any(p.is_file() and p.stat().st_size == len(weights) and p.read_bytes() == weights for p in root.rglob("*"))


def one_line_error(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fertility: error: "), done.stderr
    assert "Traceback" not in done.stderr
    return lines[0]


# --- tokenizers by hub id ---------------------------------------------------------------------------

def test_hub_emulation_model_downloads_tokenizer_files_only_and_counts_as_from_disk(hub, corpus, tmp_path):
    env = hub_env(hub.url, tmp_path)
    mark = hub.mark()
    first = run_cli("audit", "--no-findings", "-f", "json", "-t", f"{ORG}/llama3", str(corpus), env=env)
    assert first.returncode == 0, first.stderr
    assert "Fetching" not in first.stderr and first.stderr == ""  # no progress bars off a terminal
    assert any("/resolve/" in request for request in hub.requests(mark))
    snapshot = tmp_path / "hf-cache" / f"models--{ORG}--llama3" / "snapshots" / hub.commits[1]
    assert sorted(p.name for p in snapshot.iterdir()) == ["config.json", "tokenizer.json"]
    assert not holds_weights(tmp_path, hub.weights)
    on_disk = audit_json("-t", str(hub.files["llama3"]), str(corpus), env=env)
    payload = json.loads(first.stdout)
    assert counts(payload) == counts(on_disk)
    info = payload["signature"]["tokenizers"][f"{ORG}/llama3"]
    assert info["hub_repo"] == f"{ORG}/llama3" and info["hub_commit"] == hub.commits[1]
    assert info["sha256"] == on_disk["signature"]["tokenizers"]["llama3"]["sha256"]
    assert f"tokenizer.json:{info['sha256']}" in info["hub_files"]
    assert info["hub_spec"] == f"{ORG}/llama3@{hub.commits[1]}"
    fast_on_disk = on_disk["signature"]["tokenizers"]["llama3"]["fast_path"]
    assert info["fast_path"] == fast_on_disk  # a hub id counts on the path its file would (not "no fast path for hf")

    mark = hub.mark()  # the second run: from the cache, not a single request
    second = audit_json("-t", f"{ORG}/llama3", str(corpus), env=env)
    assert hub.requests(mark) == []
    assert second == payload


def test_hub_emulation_revision_pins_the_old_tokenizer_and_a_rerun_by_commit_is_exact(hub, corpus, tmp_path):
    """The first commit held MiniLM's tokenizer.json (main now holds Llama-3's)."""
    env = hub_env(hub.url, tmp_path)
    old = audit_json("-t", f"hf:{ORG}/llama3@{hub.commits[0]}", str(corpus), env=env)
    assert counts(old) == counts(audit_json("-t", str(hub.files["minilm"]), str(corpus), env=env))
    info = old["signature"]["tokenizers"][f"{ORG}/llama3"]
    assert info["hub_commit"] == hub.commits[0] and info["hub_revision"] == hub.commits[0]
    mark = hub.mark()
    rerun = audit_json("-t", info["hub_spec"], str(corpus), env=env)
    assert hub.requests(mark) == []  # a commit already cached: nothing to ask
    assert rerun == old


def test_hub_emulation_sentencepiece_only_repo_loads_as_its_file(hub, corpus, tmp_path):
    env = hub_env(hub.url, tmp_path)
    payload = audit_json("-t", f"{ORG}/mistral-spm@main", str(corpus), env=env)  # a branch: asks the hub
    assert payload["signature"]["tokenizers"][f"{ORG}/mistral-spm"]["backend"] == "spm"
    assert counts(payload) == counts(audit_json("-t", str(hub.files["spm"]), str(corpus), env=env))


def test_hub_emulation_offline_reads_the_cache_only(hub, corpus, tmp_path):
    env = hub_env(hub.url, tmp_path)
    spec = f"{ORG}/mistral-spm"
    for extra_env, flag, reason in (({}, "--offline", "--offline"), ({"HF_HUB_OFFLINE": "1"}, None, "HF_HUB_OFFLINE")):
        mark = hub.mark()
        done = run_cli("audit", "-q", *([flag] if flag else []), "-t", spec, str(corpus), env={**env, **extra_env})
        line = one_line_error(done)
        assert f"{spec}: not in the local Hugging Face cache" in line and reason in line
        assert hub.requests(mark) == []
    online = audit_json("-t", spec, str(corpus), env=env)
    mark = hub.mark()
    assert audit_json("--offline", "-t", spec, str(corpus), env=env) == online
    assert audit_json("-t", f"{spec}@main", str(corpus), env={**env, "HF_HUB_OFFLINE": "1"}) == online
    assert hub.requests(mark) == []


@pytest.mark.parametrize("spec, expected", [
    (f"{ORG}/weights-only", f"{ORG}/weights-only holds no tokenizer file at commit"),
    (f"{ORG}/no-such-model", f"has no model repository {ORG}/no-such-model"),
])
def test_hub_emulation_failures_are_one_line(hub, corpus, tmp_path, spec, expected):
    done = run_cli("audit", "-q", "-t", spec, str(corpus), env=hub_env(hub.url, tmp_path))
    assert expected in one_line_error(done)
    assert not holds_weights(tmp_path, hub.weights)


def test_hub_emulation_no_network_fails_in_one_bounded_line(corpus, tmp_path):
    refused = run_cli("audit", "-q", "-t", f"{ORG}/llama3", str(corpus),
                        env=hub_env(f"http://127.0.0.1:{free_port()}", tmp_path))
    assert "cannot reach the hub" in one_line_error(refused)
    with socket.socket() as silent:  # accepts connections and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        env = {**hub_env(f"http://127.0.0.1:{silent.getsockname()[1]}", tmp_path), "HF_HUB_ETAG_TIMEOUT": "1"}
        done = run_cli("audit", "-q", "-t", f"{ORG}/llama3", str(corpus), env=env, timeout=120)
    line = one_line_error(done)
    assert "cannot reach the hub" in line and "imed out" in line


def test_hub_emulation_gated_model_names_the_page_and_the_token(gated, corpus, tmp_path):
    env = hub_env(gated.url, tmp_path)
    line = one_line_error(run_cli("audit", "-q", "-t", f"{ORG}/gated-model", str(corpus), env=env))
    assert f"{ORG}/gated-model is a gated model: accept its terms at {gated.url}/{ORG}/gated-model" in line
    assert "HF_TOKEN" in line
    line = one_line_error(run_cli("audit", "-q", "-t", f"{ORG}/gated-model", str(corpus),
                                    env={**env, "HF_TOKEN": "hf_not_granted"}))
    assert "HF_TOKEN is set, but its account has no access yet" in line


# --- named corpora --------------------------------------------------------------------------------------

def test_hub_emulation_flores_plus_equals_the_shared_flores_devtest(hub, tmp_path):
    devtest = SHARED_CORPORA / "flores200" / "devtest"
    if not devtest.is_dir():
        pytest.skip(f"shared corpora not present at {devtest}")
    env = hub_env(hub.url, tmp_path)
    from_hub = audit_json("flores", env=env)
    from_files = audit_json(str(devtest), env=env)
    assert counts(from_hub) == counts(from_files)
    assert from_hub["signature"]["corpus"]["sha256"] == from_files["signature"]["corpus"]["sha256"]
    named = from_hub["signature"]["named_corpora"][0]
    assert named["repo"] == "openlanguagedata/flores_plus" and named["license"].startswith("CC BY-SA 4.0")
    mark = hub.mark()
    subset = audit_json("--offline", "flores:ben_Beng,eng_Latn", env=env)
    assert hub.requests(mark) == []
    assert {lang: counts(from_hub)[lang] for lang in ("ben_Beng", "eng_Latn")} == \
        {lang: row for lang, row in counts(subset).items() if lang != "ALL"}
    line = one_line_error(run_cli("audit", "-q", "flores:xyz_Latn", env=env))
    assert "has no devtest/xyz_Latn.parquet" in line


def test_hub_emulation_gated_flores_says_how_to_accept_its_terms(gated, tmp_path):
    line = one_line_error(run_cli("audit", "-q", "flores", env=hub_env(gated.url, tmp_path)))
    assert line.startswith("fertility: error: flores: openlanguagedata/flores_plus is a gated dataset: accept its "
                           f"terms at {gated.url}/datasets/openlanguagedata/flores_plus")


def test_hub_emulation_fineweb2_reads_only_the_row_groups_a_sample_needs(hub, tmp_path):
    env = hub_env(hub.url, tmp_path)
    payload = audit_json("--sample-docs", "15", "fineweb2:ben_Beng,hin_Deva", env=env)
    assert {row["lang"]: row["n_docs"] for row in payload["rows"]} == {"ben_Beng": 15, "hin_Deva": 15, "ALL": 30}
    cached = sorted(p.relative_to(tmp_path / "fertility-cache").as_posix()
                    for p in (tmp_path / "fertility-cache").rglob("rg-*.parquet"))
    assert [p.split("/data/")[1] for p in cached] == [
        "ben_Beng/train/rg-00000.parquet", "ben_Beng/train/rg-00001.parquet",
        "hin_Deva/train/rg-00000.parquet", "hin_Deva/train/rg-00001.parquet"]
    # the same first 20 documents of each language, as a local file, sampled the same way
    local = tmp_path / "local"
    local.mkdir()
    for lang in ("ben_Beng", "hin_Deva"):
        (local / f"{lang}.txt").write_text("\n".join(sample_lines(lang)[:20]) + "\n", encoding="utf-8")
    assert counts(payload) == counts(audit_json("--sample-docs", "15", str(local), env=env))
    assert payload["signature"]["named_corpora"][0]["sample"]["ben_Beng"].startswith("row groups 0-1 (20 documents)")
    mark = hub.mark()
    assert counts(audit_json("--offline", "--sample-docs", "15", "fineweb2:ben_Beng,hin_Deva", env=env)) == \
        counts(payload)
    assert hub.requests(mark) == []
    more = run_cli("audit", "-q", "--offline", "--sample-docs", "25", "fineweb2:ben_Beng", env=env)
    assert "not in fertility's cache" in one_line_error(more)
    assert "name the languages" in one_line_error(run_cli("audit", "-q", "fineweb2", env=env))


def test_hub_emulation_code_languages_are_audited_like_natural_ones(hub, tmp_path):
    import fertility

    env = hub_env(hub.url, tmp_path)
    payload = audit_json("code:python,c,javascript", env=env)
    rows = {row["lang"]: row for row in payload["rows"]}
    encoding = fertility.load_tokenizer("tiktoken:cl100k_base").encoding  # tiktoken's own Encoding
    for name, contents in CODE.items():
        row = rows[f"{name}_Code"]
        assert row["script"] == "Code" and row["n_docs"] == len(contents)
        assert row["n_tokens"] == sum(len(encoding.encode_ordinary(text)) for text in contents)
        assert row["n_chars"] == sum(len(text) for text in contents)
    missing = one_line_error(run_cli("audit", "-q", "code:python,cobol", env=env))
    assert "has no language cobol" in missing


def test_hub_emulation_range_reads_fetch_only_the_footer_and_the_needed_row_groups(tmp_path):
    """Against a server that honours Range (the hub's file servers do; olah does not), a sample
    costs the footer and its row groups' text column, not the file."""
    pytest.importorskip("pyarrow")
    from fertility.io.remote_parquet import row_group_files

    lines = [f"{i}: {line}" for i, line in enumerate(sample_lines("ben_Beng") * 40)]
    (tmp_path / "web").mkdir()
    data = parquet_bytes({"text": lines, "other": [os.urandom(300).hex() for _ in lines]}, row_group_size=50)
    (tmp_path / "web" / "000.parquet").write_bytes(data)
    served: list[str] = []

    class Ranges(SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(tmp_path / "web"), **kwargs)

        def log_message(self, *args):
            pass

        def do_GET(self):
            start, end = (int(x) for x in self.headers["Range"].removeprefix("bytes=").split("-"))
            served.append(self.headers["Range"])
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
            self.send_header("Content-Length", str(end - start + 1))
            self.end_headers()
            self.wfile.write(data[start:end + 1])

    server = ThreadingHTTPServer(("127.0.0.1", 0), Ranges)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/000.parquet"
        files, rows = row_group_files(tmp_path / "cache", url=lambda: (url, len(data)), headers=dict, timeout=10,
                                      name="000.parquet", enough=lambda n, _: n >= 60, online=True)
    finally:
        server.shutdown()
        server.server_close()
    assert rows == [50, 50] and [f.name for f in files] == ["rg-00000.parquet", "rg-00001.parquet"]
    fetched = sum(int(r.split("-")[1]) - int(r.removeprefix("bytes=").split("-")[0]) + 1 for r in served)
    assert fetched < len(data) / 4, (fetched, len(data))
    import pyarrow.parquet as pq
    assert pq.read_table(files[1]).column("text").to_pylist() == lines[50:100]


# --- without a server: aliases, precedence, code languages on disk --------------------------------------

def test_model_alias_is_its_tiktoken_encoding_named_as_asked(corpus, tmp_path):
    env = {**hub_env(f"http://127.0.0.1:{free_port()}", tmp_path), "TIKTOKEN_CACHE_DIR": str(tmp_path / "tiktoken")}
    payload = audit_json("-t", "gpt-4", "-t", "tiktoken:gpt-3.5-turbo-0125", str(corpus), env=env, here=True)
    reference = audit_json("-t", "tiktoken:cl100k_base", str(corpus), env=env, here=True)
    rows = {(row["tokenizer"], row["lang"]): row for row in payload["rows"]}
    for row in reference["rows"]:
        for name in ("gpt-4", "gpt-3.5-turbo-0125"):
            assert {**rows[(name, row["lang"])], "tokenizer": "cl100k_base"} == row
    info = payload["signature"]["tokenizers"]["gpt-4"]
    assert info["alias"] == "gpt-4" and info["encoding"] == "cl100k_base"
    assert info["sha256"] == reference["signature"]["tokenizers"]["cl100k_base"]["sha256"]
    line = one_line_error(run_here("audit", "-q", "-t", "gpt-4o", str(corpus), env=env))
    assert "gpt-4o: tiktoken maps it to o200k_base, which is not available offline here" in line
    assert "tiktoken.get_encoding('o200k_base')" in line and str(tmp_path / "tiktoken") in line


def test_model_alias_reads_tiktokens_own_cache(corpus, tmp_path):
    """`davinci` is r50k_base: placed in tiktoken's cache as tiktoken itself names the file."""
    import hashlib

    cache = tmp_path / "tiktoken"
    cache.mkdir()
    blob = "https://openaipublic.blob.core.windows.net/encodings/r50k_base.tiktoken"
    shutil.copy(real_file("gpt2.tiktoken"), cache / hashlib.sha1(blob.encode()).hexdigest())
    env = {**hub_env(f"http://127.0.0.1:{free_port()}", tmp_path), "TIKTOKEN_CACHE_DIR": str(cache)}
    payload = audit_json("-t", "davinci", str(corpus), env=env, here=True)
    assert counts(payload) == counts(audit_json("-t", str(real_file("gpt2.tiktoken")), str(corpus), env=env, here=True))
    assert payload["signature"]["tokenizers"]["davinci"]["encoding"] == "r50k_base"


def test_an_existing_folder_wins_over_a_hub_id_and_file_names_are_never_hub_ids(corpus, tmp_path):
    folder = tmp_path / "work" / "some-org" / "tok"
    folder.mkdir(parents=True)
    shutil.copy(real_file("minilm/tokenizer.json"), folder / "tokenizer.json")
    env = hub_env(f"http://127.0.0.1:{free_port()}", tmp_path)  # any hub request would fail
    done = subprocess.run([FERTILITY, "audit", "-q", "--no-findings", "-f", "json", "-t", "some-org/tok", str(corpus)],
                          cwd=tmp_path / "work", env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert counts(json.loads(done.stdout)) == counts(audit_json("-t", str(folder), str(corpus), env=env, here=True))
    line = one_line_error(run_here("audit", "-q", "-t", "some-org/tokenizer.json", str(corpus), env=env))
    assert "no such file or directory" in line and "hub" not in line


def test_code_language_files_are_named_and_scripted_as_code(tmp_path):
    from fertility.io.corpus import read_corpus

    (tmp_path / "python_Code.txt").write_text("print('hi')\n", encoding="utf-8")
    (tmp_path / "cpp_Code.jsonl").write_text(json.dumps({"text": "int x = 1;"}) + "\n", encoding="utf-8")
    corpus = read_corpus([tmp_path])
    assert corpus.scripts == {"cpp_Code": "Code", "python_Code": "Code"}


def test_hub_progress_bars_only_on_a_terminal_and_never_with_quiet(monkeypatch):
    """huggingface_hub draws its bars on stderr when it is a terminal, unless -q (progress=False)."""
    from huggingface_hub.utils import are_progress_bars_disabled

    from fertility.hub.download import hub_progress_bars, hub_settings

    if are_progress_bars_disabled():
        pytest.skip("progress bars are disabled here (HF_HUB_DISABLE_PROGRESS_BARS)")

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    seen = {}
    for name, stderr, progress in (("terminal", Terminal(), None), ("terminal -q", Terminal(), False),
                                   ("pipe", io.StringIO(), None)):
        monkeypatch.setattr(sys, "stderr", stderr)
        with hub_settings(progress=progress), hub_progress_bars():
            seen[name] = not are_progress_bars_disabled()
    assert seen == {"terminal": True, "terminal -q": False, "pipe": False}
    assert not are_progress_bars_disabled()  # the setting is given back


def test_named_corpus_help_lists_each_license():
    done = run_here("audit", "--help", env={"COLUMNS": "200"})
    assert done.returncode == 0
    from fertility.io.catalog import CATALOG
    for entry in CATALOG.values():
        assert entry.repo in done.stdout and entry.license.split(";")[0] in done.stdout

