"""The GitHub Action (action.yml), the pre-commit hook (.pre-commit-hooks.yaml) and the README's
CI snippets, tested here because no GitHub runner is reachable.

action.yml is validated against SchemaStore's GitHub Action metadata schema as check-jsonschema
vendors it (a PyPI package, in the test extra), and the README's workflow against its workflow
schema. The action's shell steps are run as GitHub runs them: bash, with the environment GitHub
sets (GITHUB_STEP_SUMMARY, GITHUB_OUTPUT, RUNNER_TEMP) and each `${{ ... }}` of a step's `env:`
resolved from the inputs, so the scripts run here are the ones in the file, character for character.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
ACTION = ROOT / "action.yml"
HOOKS = ROOT / ".pre-commit-hooks.yaml"
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def vendored_schema(name: str) -> dict:
    """A schema check-jsonschema ships (SchemaStore's, MIT licensed), read from the installed package."""
    check_jsonschema = pytest.importorskip("check_jsonschema", reason="check-jsonschema is in the test extra")
    path = Path(check_jsonschema.__file__).parent / "builtin_schemas" / "vendor" / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8"))


def validate(data: object, schema: dict) -> list[str]:
    cls = jsonschema.validators.validator_for(schema)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}" for e in cls(schema).iter_errors(data)]


def action() -> dict:
    return yaml.safe_load(ACTION.read_text(encoding="utf-8"))


def readme_yaml_blocks() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"^```yaml\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)


def test_action_yml_matches_the_published_action_metadata_schema():
    data = action()
    assert validate(data, vendored_schema("github-actions")) == []
    assert data["runs"]["using"] == "composite"
    assert set(data["inputs"]) >= {"tokenizer", "corpus", "config", "baseline", "python-version", "extras",
                                   "summary", "report", "version"}


def test_the_schema_check_catches_a_broken_action():
    """The vendored schema is strict enough to matter: a composite step without `shell` is refused."""
    data = action()
    broken = json.loads(json.dumps(data))
    del next(step for step in broken["runs"]["steps"] if "run" in step)["shell"]
    assert validate(broken, vendored_schema("github-actions")) != []


def test_scripts_take_inputs_only_through_env():
    """No `${{ }}` inside a `run:` script (GitHub pastes it into the script unquoted: an input
    could run code); each reaches the script as an environment variable."""
    allowed = re.compile(r"inputs\.[\w-]+|github\.action_path|steps\.check\.outputs\.exit-code")
    for step in action()["runs"]["steps"]:
        if "run" in step:
            assert not EXPRESSION.search(step["run"]), step["name"]
            for value in step.get("env", {}).values():
                assert allowed.fullmatch(EXPRESSION.fullmatch(value).group(1)), value


class Runner:
    """The action's shell steps in the environment a GitHub runner gives them."""

    def __init__(self, tmp: Path, inputs: dict[str, str], bin_dir: Path, work: Path):
        self.spec = action()
        self.inputs = {name: str(info.get("default", "")) for name, info in self.spec["inputs"].items()} | inputs
        self.runner_temp = tmp / "runner-temp"
        self.runner_temp.mkdir(exist_ok=True)
        self.summary = tmp / "step_summary.md"
        self.output = tmp / "github_output"
        self.summary.write_text("", "utf-8")
        self.output.write_text("", "utf-8")
        self.bin_dir, self.work, self.action_path = bin_dir, work, ROOT
        self.outputs: dict[str, dict[str, str]] = {}

    def step(self, name: str) -> dict:
        return next(step for step in self.spec["runs"]["steps"] if step["name"] == name)

    def resolve(self, value: str) -> str:
        def one(match: re.Match) -> str:
            expression = match.group(1)
            if expression.startswith("inputs."):
                return self.inputs[expression.removeprefix("inputs.")]
            if expression == "github.action_path":
                return str(self.action_path)
            step_id, _, key = expression.removeprefix("steps.").partition(".outputs.")
            return self.outputs.get(step_id, {}).get(key, "")
        return EXPRESSION.sub(one, value)

    def run(self, name: str) -> subprocess.CompletedProcess:
        step = self.step(name)
        assert step["shell"] == "bash"
        env = {key: value for key, value in os.environ.items() if not key.startswith(("GITHUB_", "INPUT_"))}
        env |= {"GITHUB_STEP_SUMMARY": str(self.summary), "GITHUB_OUTPUT": str(self.output),
                "RUNNER_TEMP": str(self.runner_temp), "GITHUB_ACTIONS": "true", "CI": "true",
                "PATH": f"{self.bin_dir}{os.pathsep}{os.environ['PATH']}", "NO_COLOR": "1",
                "FERTILITY_CACHE_DIR": str(self.runner_temp / "cache")}
        env |= {key: self.resolve(value) for key, value in step.get("env", {}).items()}
        before = self.output.read_text("utf-8")
        # GitHub runs `bash --noprofile --norc -eo pipefail {0}` on the script written to a file
        script = self.runner_temp / f"{step.get('id', 'step')}.sh"
        script.write_text(step["run"], "utf-8")
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=self.work,
                              env=env, capture_output=True, text=True, timeout=600, check=False)
        written = self.output.read_text("utf-8")[len(before):]
        if "id" in step:
            self.outputs[step["id"]] = dict(line.split("=", 1) for line in written.splitlines() if "=" in line)
        return done


def installed_bin() -> Path:
    bin_dir = Path(sys.executable).parent
    if shutil.which("fertility", path=str(bin_dir)) is None:
        pytest.skip(f"no installed fertility command in {bin_dir} (pip install -e .)")
    return bin_dir


@pytest.fixture
def project(tmp_path, small) -> Path:
    """A user's repository: a config with thresholds, and a corpus of three languages."""
    work = tmp_path / "repo"
    work.mkdir()
    shutil.copytree(small, work / "corpus")
    return work


def write_config(work: Path, min_chars_per_token: float) -> None:
    (work / "fertility.toml").write_text(f'tokenizer = "bytes"\ncorpus = ["corpus"]\n'
                                         f"min_chars_per_token = {min_chars_per_token}\n", "utf-8")


@pytest.mark.parametrize("limit, code", [(0.1, 0), (0.5, 1)], ids=["pass", "fail"])
def test_the_check_step_gates_reports_and_fails_the_job_exactly_when_check_fails(tmp_path, project, limit, code):
    write_config(project, limit)
    runner = Runner(tmp_path, {"report": "false"}, installed_bin(), project)
    done = runner.run("Run fertility check")
    assert done.returncode == 0, done.stderr  # the verdict is acted on after the upload
    outputs = runner.outputs["check"]
    out = runner.runner_temp / "fertility"
    assert outputs == {"exit-code": str(code), "passed": "true" if code == 0 else "false",
                       "junit": str(out / "fertility-junit.xml"), "report": ""}
    junit = (out / "fertility-junit.xml").read_text("utf-8")
    assert junit.count("<testcase") == 3 and junit.count("<failure") == (0 if code == 0 else 2)
    summary = runner.summary.read_text("utf-8")
    assert "min_chars_per_token" in summary and "ben_Beng" in summary and summary.count("|") > 10
    final = runner.run("Fail the job when fertility check failed")
    assert final.returncode == code


def test_the_check_step_with_report_inputs_and_no_summary(tmp_path, project):
    pytest.importorskip("vl_convert", reason="the HTML report needs the report extra")
    write_config(project, 0.5)
    baseline = project / "baseline.json"
    subprocess.run([installed_bin() / "fertility", "audit", "-t", "bytes", "-f", "json", "-q", "-o", baseline,
                    "corpus/ben_Beng.txt", "corpus/eng_Latn.txt"], cwd=project, check=True, capture_output=True)
    runner = Runner(tmp_path, {"tokenizer": "bytes\n", "corpus": "corpus/ben_Beng.txt\ncorpus/eng_Latn.txt\n",
                               "config": "fertility.toml", "baseline": "baseline.json", "summary": "false"},
                    installed_bin(), project)
    done = runner.run("Run fertility check")
    assert done.returncode == 0, done.stderr
    outputs = runner.outputs["check"]
    assert outputs["exit-code"] == "1" and outputs["passed"] == "false"
    page = Path(outputs["report"]).read_text("utf-8")
    assert page.startswith("<!DOCTYPE html>") and "ben_Beng" in page and "zho_Hans" not in page
    assert runner.summary.read_text("utf-8") == ""  # summary: false
    junit = Path(outputs["junit"]).read_text("utf-8")
    assert "max_regression" in junit and junit.count("<testcase") == 4  # 2 languages x (threshold + baseline)
    assert runner.run("Fail the job when fertility check failed").returncode == 1


def test_a_configuration_error_fails_the_job_with_exit_2(tmp_path, project):
    (project / "fertility.toml").write_text('tokenizer = "bytes"\nmin_chars_per_tokn = 1\n', "utf-8")
    runner = Runner(tmp_path, {"report": "false"}, installed_bin(), project)
    done = runner.run("Run fertility check")
    assert done.returncode == 0 and runner.outputs["check"]["exit-code"] == "2"
    assert "min_chars_per_token" in done.stderr  # the suggestion for the misspelled key
    assert runner.run("Fail the job when fertility check failed").returncode == 2
    runner.outputs.clear()  # the check step never ran: the job fails, not as a pass
    assert runner.run("Fail the job when fertility check failed").returncode == 3


@pytest.mark.slow
def test_the_install_step_installs_the_action_checkout_and_prints_versions(tmp_path):
    """In a fresh venv that sees this environment's dependencies (a .pth file) so that pip installs
    fertility alone, built from a copy of the checkout as `uses:` would fetch it."""
    checkout = tmp_path / "action"
    checkout.mkdir()
    for name in ("pyproject.toml", "README.md", "action.yml"):
        shutil.copy(ROOT / name, checkout / name)
    for folder in ("fertility", "corpora_samples"):
        shutil.copytree(ROOT / folder, checkout / folder, ignore=shutil.ignore_patterns("__pycache__"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    here = [p for p in sys.path if p.endswith("site-packages")]
    (site / "inherited.pth").write_text("\n".join(here) + "\n", "utf-8")
    runner = Runner(tmp_path, {"report": "false", "extras": ""}, venv / "bin", tmp_path)
    runner.action_path = checkout
    done = runner.run("Install fertility")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "fertility 0.1.0" in done.stdout.splitlines()
    assert "tokenizers " in done.stdout and "python 3." in done.stdout
    installed = subprocess.run([venv / "bin" / "python", "-c", "import fertility; print(fertility.__file__)"],
                               capture_output=True, text=True, check=True, cwd=tmp_path).stdout
    assert installed.startswith(str(site))  # the action's copy, not this checkout


def test_readme_uses_block_and_workflow_match_the_action():
    blocks = readme_yaml_blocks()
    workflow = next(yaml.safe_load(b) for b in blocks if "jobs:" in b)
    workflow["on"] = workflow.pop(True)  # YAML 1.1 reads the key `on` as true; GitHub reads it as "on"
    assert validate(workflow, vendored_schema("github-workflows")) == []
    steps = [step for job in workflow["jobs"].values() for step in job["steps"]]
    ours = [step for step in steps if step.get("uses", "").split("@")[0].endswith("/fertility")]
    assert len(ours) == 1 and set(ours[0].get("with", {})) <= set(action()["inputs"])
    repository = ours[0]["uses"].split("@")[0]
    assert "OWNER" not in repository and repository in source_url()
    uses = next(b for b in blocks if b.lstrip().startswith("- uses:"))
    assert len(uses.strip().splitlines()) == 3 and yaml.safe_load(uses)[0]["uses"] == ours[0]["uses"]


def source_url() -> str:
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["urls"]["Source"]
