"""protos/check.py, the buf checks of `./dev test`, in a throwaway git
repository holding a copy of the protos: a breaking change fails unless it
is declared in protos/BREAKING.toml, a declaration excuses only the change
it came with, and CI's fresh clone and a shallow clone are handled."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVICE = "protos/strata/v1/game_service.proto"
# A field renamed: breaking for JSON and generated code (FIELD_SAME_NAME…).
RENAME = ("string player_name = 2;", "string name = 2;")


def declaration(change_id: str) -> str:
    """A declared change that excuses any renamed field."""
    return (
        f'\n[[change]]\nid = "{change_id}"\nreason = "a test"\n'
        'rules = ["FIELD_SAME_NAME", "FIELD_SAME_JSON_NAME"]\n'
        "findings = ['changed name from', 'changed option \"json_name\"']\n"
    )


def git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    result = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def check(repo: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "STRATA_BREAKING_AGAINST"}
    return subprocess.run(
        [sys.executable, "protos/check.py"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
    )


def edit(repo: Path, path: str, old: str, new: str) -> None:
    file = repo / path
    text = file.read_text()
    assert old in text
    file.write_text(text.replace(old, new, 1))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository whose main has two commits of today's protos."""
    repo = tmp_path / "repo"
    shutil.copytree(
        ROOT / "protos",
        repo / "protos",
        ignore=shutil.ignore_patterns("__pycache__", "*_pb2*", "__init__.py"),
    )
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "first")
    (repo / "README").write_text("second\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "second")
    return repo


def test_unchanged_protos_pass_against_the_previous_commit(repo):
    result = check(repo)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "HEAD~1, the previous commit" in result.stdout
    assert "protos: ok" in result.stdout


def test_an_undeclared_breaking_change_fails(repo):
    edit(repo, SERVICE, *RENAME)
    result = check(repo)
    assert result.returncode == 1
    assert "FIELD_SAME_NAME" in result.stdout
    assert "declare them in protos/BREAKING.toml" in result.stdout


def test_a_declared_breaking_change_passes_once(repo):
    edit(repo, SERVICE, *RENAME)
    with (repo / "protos" / "BREAKING.toml").open("a") as toml:
        toml.write(declaration("rename-player-name"))
    result = check(repo)
    assert result.returncode == 0, result.stdout
    assert "declared breaking change 'rename-player-name'" in result.stdout
    git(repo, "commit", "-q", "-am", "rename, declared")
    # On main, against its previous commit (which lacked the declaration).
    assert check(repo).returncode == 0
    # Once the declaration is in the base, it excuses nothing more.
    (repo / "README").write_text("third\n")
    git(repo, "commit", "-q", "-am", "third")
    edit(repo, SERVICE, "string request_id = 6;", "string request = 6;")
    result = check(repo)
    assert result.returncode == 1
    assert 'changed name from "request_id" to "request"' in result.stdout


def test_a_branch_is_compared_with_its_merge_base_with_main(repo):
    git(repo, "checkout", "-q", "-b", "feature")
    edit(repo, SERVICE, *RENAME)
    with (repo / "protos" / "BREAKING.toml").open("a") as toml:
        toml.write(declaration("on-a-branch"))
    git(repo, "commit", "-q", "-am", "break, declared")
    (repo / "README").write_text("later\n")
    git(repo, "commit", "-q", "-am", "a later commit on the branch")
    result = check(repo)
    assert result.returncode == 0, result.stdout
    assert "merge-base of HEAD and main" in result.stdout
    assert "'on-a-branch'" in result.stdout


def test_cis_fresh_clone_of_main_checks_the_last_commit(repo, tmp_path):
    edit(repo, SERVICE, *RENAME)
    git(repo, "commit", "-q", "-am", "an undeclared break")
    clone = tmp_path / "ci"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    result = check(clone)
    assert result.returncode == 1
    assert "HEAD~1, the previous commit" in result.stdout


def test_a_shallow_clone_checks_what_it_can_and_says_so(repo, tmp_path):
    edit(repo, SERVICE, *RENAME)
    git(repo, "commit", "-q", "-am", "an undeclared break")
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", str(clone))
    result = check(clone)
    assert result.returncode == 0, result.stdout
    assert "note: buf breaking: HEAD has no previous commit here" in result.stdout
    edit(clone, SERVICE, "string name = 2;", "string player_name = 2;")
    assert check(clone).returncode == 1
