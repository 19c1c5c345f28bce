"""Check the protos with buf: lint, format, and breaking changes.

    python protos/check.py              # all three (what `./dev test` runs)
    python protos/check.py --against REV    # breaking changes against REV

``buf lint`` (STANDARD) and ``buf format --diff --exit-code`` must find
nothing. ``buf breaking`` (FILE) compares the working tree's protos with
those of a base commit:

- ``--against REV``, else ``$STRATA_BREAKING_AGAINST``;
- else, on a branch, its merge-base with ``origin/main`` (or ``main``);
- else, on main itself (as in CI's fresh clone of main), ``HEAD~1``, the
  previous commit of main (a merge's first parent);
- in a shallow clone without that commit: ``HEAD`` (only uncommitted changes
  are checked), with a printed note.

A finding fails the check unless a ``[[change]]`` of protos/BREAKING.toml
declares it and that declaration is new since the base (so it excuses the
change it was committed with, and nothing after it).

``buf`` is the one of the PyPI package ``buf-bin`` (the ``dev`` extra).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from typing import Any

PROTOS = Path(__file__).resolve().parent
ROOT = PROTOS.parent
DECLARATIONS = "BREAKING.toml"
UPSTREAMS = ("origin/main", "main")
JSON = ("--error-format", "json")


def buf() -> str:
    """The buf executable: on PATH, else beside this Python (a virtualenv
    that is not activated)."""
    found = shutil.which("buf") or shutil.which(
        "buf", path=str(Path(sys.executable).parent)
    )
    if not found:
        raise SystemExit(
            "check: buf not found: install the dev tools (pip install -e '.[dev]', "
            "which brings PyPI's buf-bin)"
        )
    return found


def git(*args: str) -> str | None:
    """git's output, or None when it fails (no such commit, not a repo)."""
    result = subprocess.run(
        ["git", *args], cwd=ROOT, capture_output=True, text=True, check=False
    )
    return result.stdout.strip() if result.returncode == 0 else None


def commit(rev: str) -> str | None:
    return git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")


def base_commit(asked: str | None) -> tuple[str | None, str]:
    """The commit to compare with, and a sentence saying why that one."""
    if asked:
        sha = commit(asked)
        if sha is None:
            raise SystemExit(f"check: no commit {asked!r} to compare the protos with")
        return sha, f"{asked} (asked for)"
    head = commit("HEAD")
    if head is None:
        return None, "no commit yet"
    for upstream in UPSTREAMS:
        if commit(upstream) is None:
            continue
        merge_base = git("merge-base", "HEAD", upstream)
        if merge_base and merge_base != head:
            return merge_base, f"the merge-base of HEAD and {upstream}"
        if merge_base == head:
            break  # on main itself: its previous commit
    previous = commit("HEAD~1")
    if previous is not None:
        return previous, "HEAD~1, the previous commit"
    shallow = git("rev-parse", "--is-shallow-repository") == "true"
    why = "a shallow clone" if shallow else "the first commit"
    print(
        f"note: buf breaking: HEAD has no previous commit here ({why}); "
        "comparing with HEAD, so only uncommitted changes are checked "
        "(`git fetch --deepen=1` to check HEAD's own changes)"
    )
    return head, "HEAD (no previous commit in this clone)"


def export_protos(sha: str, into: Path) -> Path | None:
    """The protos/ folder of commit ``sha``, written under ``into``."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", sha, "--", "protos"],
        cwd=ROOT,
        capture_output=True,
        check=False,
    )
    if archive.returncode != 0:
        return None
    with tarfile.open(fileobj=BytesIO(archive.stdout)) as tar:
        tar.extractall(into, filter="data")
    protos = into / "protos"
    # A commit from before buf.yaml: make the folder a module of its own, or
    # buf would look for one in the folders above the temporary directory.
    if not (protos / "buf.yaml").exists():
        (protos / "buf.yaml").write_text("version: v2\n")
    return protos


@dataclass(frozen=True)
class Change:
    """A declared breaking change (one ``[[change]]`` of BREAKING.toml)."""

    id: str
    rules: frozenset[str]
    findings: tuple[re.Pattern[str], ...]

    def covers(self, finding: dict[str, Any]) -> bool:
        return finding.get("type") in self.rules and any(
            pattern.search(str(finding.get("message", ""))) for pattern in self.findings
        )


def declarations(text: str | None) -> dict[str, Change]:
    """The declared changes of a BREAKING.toml, by id."""
    if not text:
        return {}
    changes: dict[str, Change] = {}
    for entry in tomllib.loads(text).get("change", []):
        missing = {"id", "reason", "rules", "findings"} - set(entry)
        if missing:
            raise SystemExit(f"check: {DECLARATIONS}: a change lacks {sorted(missing)}")
        if entry["id"] in changes:
            raise SystemExit(f"check: {DECLARATIONS}: id {entry['id']!r} twice")
        changes[entry["id"]] = Change(
            id=entry["id"],
            rules=frozenset(entry["rules"]),
            findings=tuple(re.compile(p) for p in entry["findings"]),
        )
    return changes


def describe(finding: dict[str, Any]) -> str:
    where = finding.get("path") or "<input>"
    line = finding.get("start_line", 0)
    return f"{where}:{line}: {finding.get('type')} {finding.get('message')}"


def run(*args: str) -> int:
    print(f"$ buf {' '.join(args)}", flush=True)
    return subprocess.run([buf(), *args], cwd=ROOT, check=False).returncode


def check_breaking(asked: str | None) -> bool:
    base, why = base_commit(asked)
    if base is None:
        print("note: buf breaking skipped: no commit to compare with")
        return True
    print(f"$ buf breaking protos --against <{why}: {base[:12]}>", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        against = export_protos(base, Path(tmp))
        if against is None:
            print(f"note: buf breaking skipped: {base[:12]} has no protos/")
            return True
        result = subprocess.run(
            [buf(), "breaking", "protos", "--against", str(against), *JSON],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
    if result.returncode not in (0, 100):  # 100: findings; else buf failed
        print(result.stdout + result.stderr, end="")
        return False
    findings = [json.loads(line) for line in result.stdout.splitlines() if line]
    here = declarations((PROTOS / DECLARATIONS).read_text())
    before = declarations(git("show", f"{base}:protos/{DECLARATIONS}"))
    new = [change for change_id, change in here.items() if change_id not in before]
    undeclared = []
    used: dict[str, int] = {}
    for finding in findings:
        change = next((c for c in new if c.covers(finding)), None)
        if change is None:
            undeclared.append(finding)
        else:
            used[change.id] = used.get(change.id, 0) + 1
    for change_id, count in used.items():
        print(f"declared breaking change {change_id!r}: {count} finding(s)")
    for change in new:
        if change.id not in used:
            print(f"note: declared breaking change {change.id!r} matched nothing")
    for finding in undeclared:
        print(describe(finding))
    if undeclared:
        print(
            f"{len(undeclared)} breaking change(s) to the public protos: undo them, "
            f"or declare them in protos/{DECLARATIONS} (README, 'Changing the protos')"
        )
    return not undeclared


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--against",
        default=os.environ.get("STRATA_BREAKING_AGAINST") or None,
        help="a git revision (default: see the module's documentation)",
    )
    args = parser.parse_args()
    ok = run("lint", "protos") == 0
    ok = run("format", "protos", "--diff", "--exit-code") == 0 and ok
    ok = check_breaking(args.against) and ok
    print("protos: ok" if ok else "protos: the checks above failed")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
