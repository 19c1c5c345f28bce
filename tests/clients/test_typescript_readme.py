"""The TypeScript client's README sample is code that works: taken from the
README as it is, compiled with the package's own compiler settings and run
against a real server, it plays a game to its end and exits."""

from __future__ import annotations

import json
import re
import subprocess
import uuid
from pathlib import Path

from service.server import Running
from tests.clients.test_typescript import (  # noqa: F401 (fixtures)
    NODE,
    PACKAGE,
    node_modules,
    pytestmark,
    server,
)

SAMPLE = re.compile(r"```ts\n(import \{ connect, StrataError \}.*?)```", re.S)


def test_the_readme_sample_compiles_and_plays_a_game_to_its_end(
    node_modules: Path,  # noqa: F811
    server: Running,  # noqa: F811
) -> None:
    found = SAMPLE.search((PACKAGE / "README.md").read_text())
    assert found, "the README's sample (a ts block importing connect) is gone"
    url = f"http://127.0.0.1:{server.http_port}"
    source = found.group(1).replace("http://127.0.0.1:8080", url)
    name = f"readme-sample-{uuid.uuid4().hex[:8]}"
    script = PACKAGE / f"{name}.ts"
    config = PACKAGE / f"tsconfig.{name}.json"
    script.write_text(source)
    config.write_text(
        json.dumps({"extends": "./tsconfig.json", "include": [script.name]})
    )
    try:
        tsc = PACKAGE / "node_modules" / ".bin" / "tsc"
        built = subprocess.run(
            [str(tsc), "-p", config.name],
            cwd=PACKAGE,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert built.returncode == 0, built.stdout + built.stderr
        assert NODE is not None
        ran = subprocess.run(
            [NODE, f"dist/{name}.js"],
            cwd=PACKAGE,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert "winners:" in ran.stdout
        assert "FAILED_PRECONDITION GAME_ALREADY_STARTED" in ran.stdout
    finally:
        for path in (script, config, *(PACKAGE / "dist").glob(f"{name}.*")):
            path.unlink(missing_ok=True)
