"""Generate the Python code and typed stubs of the protos.

    python protos/generate.py            # write into protos/
    python protos/generate.py --check    # exit 1 if the committed code is stale

Generated: ``*_pb2.py``, ``*_pb2_grpc.py`` and their ``.pyi`` stubs
(mypy-protobuf), beside each ``.proto`` under ``protos/strata``, and an
empty ``__init__.py`` in every package on the way (the games' modules are
``strata.games.<game_type>.v1.<game_type>_pb2``). ``protos/strata/py.typed``
is not generated: it tells type checkers to read the stubs. For the
services, ``*_connect.py`` too (``protoc-gen-connectrpc``: the Connect and
gRPC-Web applications and clients, on google.protobuf's messages).

Writing (not ``--check``), it regenerates the TypeScript client's code too
(``clients/typescript``, ``node scripts/generate.mjs``) when its packages
are installed (``npm ci`` there), and says so when they are not: one
command after a proto change. ``--check`` checks the Python code only; the
TypeScript code's check is in ``tests/clients/test_typescript.py``.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PROTOS = Path(__file__).resolve().parent
TYPESCRIPT = PROTOS.parent / "clients" / "typescript"
GENERATED_SUFFIXES = (
    "_pb2.py",
    "_pb2.pyi",
    "_pb2_grpc.py",
    "_pb2_grpc.pyi",
    "_connect.py",
)


def proto_files(protos: Path = PROTOS) -> list[Path]:
    return sorted(protos.glob("strata/**/*.proto"))


def generate(out: Path, protos: Path = PROTOS) -> None:
    """Run protoc with the mypy plugins on the protos under ``protos`` (this
    folder, or a copy with more in it: tests/extra_games.py), writing into
    ``out``."""
    import grpc_tools
    from grpc_tools import protoc

    include = Path(grpc_tools.__file__).parent / "_proto"
    # The mypy plugins (protoc-gen-mypy…) are scripts beside this Python,
    # found even when its virtualenv is not activated.
    scripts = str(Path(sys.executable).parent)
    os.environ["PATH"] = os.pathsep.join([scripts, os.environ.get("PATH", "")])
    args = [
        "protoc",
        f"-I{protos}",
        f"-I{include}",
        f"--python_out={out}",
        f"--grpc_python_out={out}",
        f"--mypy_out={out}",
        f"--mypy_grpc_out={out}",
        *(str(p.relative_to(protos)) for p in proto_files(protos)),
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")
    services = [
        p for p in proto_files(protos) if re.search(r"^service\s", p.read_text(), re.M)
    ]
    args = [
        "protoc",
        f"-I{protos}",
        f"-I{include}",
        f"--connectrpc_out=protobuf=google:{out}",
        *(str(p.relative_to(protos)) for p in services),
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc (protoc-gen-connectrpc) failed")
    # Regular packages all the way down (strata, strata.games,
    # strata.games.cubosaurs, strata.games.cubosaurs.v1, …): setuptools ships
    # only those, and type checkers find their stubs beside them.
    packages = {out / "strata"}
    for module in out.glob("strata/**/*_pb2.py"):
        packages.update(
            parent for parent in module.parents if out / "strata" in parent.parents
        )
    for package in packages:
        (package / "__init__.py").touch()


def generated_files(root: Path) -> set[Path]:
    return {
        p.relative_to(root)
        for p in root.glob("strata/**/*")
        if p.name.endswith(GENERATED_SUFFIXES) or p.name == "__init__.py"
    }


def stale() -> list[str]:
    """Paths whose committed generated code differs from a fresh generation."""
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp)
        generate(fresh)
        want, have = generated_files(fresh), generated_files(PROTOS)
        problems = [f"missing {p}" for p in sorted(want - have)]
        problems += [f"unexpected {p}" for p in sorted(have - want)]
        problems += [
            f"stale {p}"
            for p in sorted(want & have)
            if not filecmp.cmp(fresh / p, PROTOS / p, shallow=False)
        ]
        return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check")
    args = parser.parse_args()
    if args.check:
        problems = stale()
        for line in problems:
            print(line)
        if problems:
            print("generated code is stale: run `python protos/generate.py`")
            sys.exit(1)
        print("generated code is up to date")
        return
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp))
        for path in generated_files(PROTOS):
            (PROTOS / path).unlink()
        for directory in sorted(PROTOS.glob("strata/**/"), reverse=True):
            if not any(directory.iterdir()):
                directory.rmdir()  # a package whose protos moved away
        shutil.copytree(tmp, PROTOS, dirs_exist_ok=True)
    generate_typescript()


def generate_typescript() -> None:
    """The TypeScript client's code, from the same protos (when its packages
    are installed and ``node`` is on PATH)."""
    node = shutil.which("node")
    if node is None or not (TYPESCRIPT / "node_modules" / ".bin" / "buf").exists():
        print(
            "TypeScript code not regenerated: run `npm ci` in clients/typescript "
            "(Node 20 or newer), then this again"
        )
        return
    subprocess.run([node, "scripts/generate.mjs"], cwd=TYPESCRIPT, check=True)
    print("TypeScript code regenerated in clients/typescript/src/gen")


if __name__ == "__main__":
    main()
