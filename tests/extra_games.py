"""Games besides the real ones, registered for a whole run of the suite.

``STRATA_EXTRA_GAMES`` names Python packages of games (``./dev test`` sets
it to the toy game ``tests.adding_a_game.egg_race``). The registry adds
their ``RULES`` (:mod:`domain.registry`); this module, called by
``tests/conftest.py`` before anything imports the generated code, gives the
service their messages: it copies ``protos/``, puts each game's proto (the
one ``.proto`` file in its package's folder) at
``strata/games/<game_type>/v1/`` and its field in every ``oneof game`` of
the service (docs/ADDING_A_GAME.md's steps, done by
:func:`tests.adding_a_game.oneofs.add_to_oneofs`), compiles the copy with
``protos/generate.py`` and puts the result first on ``sys.path``.

The folder (the edited protos, and their code in ``python/``) is passed
on in ``STRATA_TEST_PROTOS`` and the code in ``PYTHONPATH`` (with the
project's root, where the games' packages are):
pytest-xdist's workers and every server a test starts (``strata serve`` in
a subprocess) inherit both and run the same five games. The generic tests
(secrecy, replays, positions, leaving, clocks, bots, the web table, both
clients) list the games from the registry, so the extra game is in every
one of them with no edit outside its own folder.

Only the standard library and the games' packages are imported here: the
generated code must not be imported before its place on the path is set.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import importlib.util
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from tests.adding_a_game.oneofs import add_to_oneofs, game_proto_file

ROOT = Path(__file__).resolve().parents[1]
GAMES = "STRATA_EXTRA_GAMES"
COMPILED = "STRATA_TEST_PROTOS"


def packages() -> list[str]:
    """The packages ``STRATA_EXTRA_GAMES`` names."""
    return [n.strip() for n in os.environ.get(GAMES, "").split(",") if n.strip()]


def game_types() -> list[str]:
    """The game types of the extra games (empty when there are none)."""
    return [importlib.import_module(p).RULES.game_type for p in packages()]


def compiled() -> Path | None:
    """The folder of the protos with the extra games' (``protos/``) and their
    Python code (``python/``); None when there are no extra games."""
    folder = os.environ.get(COMPILED)
    return Path(folder) if folder and packages() else None


def install() -> None:
    """Compile the protos with the extra games' (once per run: the first
    process compiles, the processes it starts reuse it) and put the code
    first on ``sys.path``; nothing when there are no extra games."""
    if not packages():
        return
    folder = compiled()
    if folder is None or not (folder / "python" / "strata").is_dir():
        folder = Path(tempfile.mkdtemp(prefix="strata-extra-games-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        _compile(folder)
        os.environ[COMPILED] = str(folder)
        path = os.environ.get("PYTHONPATH", "")
        os.environ["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(folder / "python"), str(ROOT), path) if p
        )
    if "strata" in sys.modules:
        raise RuntimeError("tests/extra_games.py: strata was imported too early")
    sys.path.insert(0, str(folder / "python"))


def _compile(folder: Path) -> None:
    protos = folder / "protos"
    shutil.copytree(
        ROOT / "protos",
        protos,
        ignore=shutil.ignore_patterns("__pycache__", "*.py", "*.pyi", "py.typed"),
    )
    service = protos / "strata" / "v1" / "game_service.proto"
    for package in packages():
        module = importlib.import_module(package)
        game_type, title = module.RULES.game_type, module.RULES.title
        proto = protos / game_proto_file(game_type)
        proto.parent.mkdir(parents=True)
        shutil.copy(_proto_of(module), proto)
        service.write_text(add_to_oneofs(service.read_text(), game_type, title))
    (folder / "python").mkdir()
    with _quiet():  # protoc's plugins say each file they write
        _generator().generate(folder / "python", protos)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """The process's output and errors (file descriptors 1 and 2, which
    the plugins protoc starts inherit) go to a file, shown on failure."""
    with tempfile.TemporaryFile() as log:
        saved = [os.dup(1), os.dup(2)]
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        try:
            yield
        except BaseException:
            log.seek(0)
            os.write(saved[1], log.read())
            raise
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)


def _proto_of(module: ModuleType) -> Path:
    folder = Path(module.__file__ or "").parent
    found = sorted(folder.glob("*.proto"))
    if len(found) != 1:
        raise RuntimeError(f"{module.__name__}: want one .proto in {folder}")
    return found[0]


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "strata_protos_generate", ROOT / "protos" / "generate.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def python_path(*folders: str | Path) -> str:
    """``PYTHONPATH`` for a Python process a test starts: this process's
    own first (the extra games' code, when there are extra games), then
    ``folders``."""
    own = os.environ.get("PYTHONPATH", "")
    return os.pathsep.join(str(p) for p in (own, *folders) if str(p))
