"""The TypeScript client (clients/typescript) against a real server.

Node runs the compiled example (examples/play.ts) that plays a whole game
against the service's bots over the HTTP listener while a WatchGame stream
follows it, for every game type over Connect (JSON) and over the other two
transports, with connect-node's transports and connect-web's (fetch); the
Python client, over gRPC, checks what it says happened. A second script's
refusals are compared with the Python client's, and the checked-in
generated code with a fresh generation.

`npm ci` runs when node_modules is missing or older than package-lock.json,
and `tsc` when the sources changed since the last build, each once under a
lock (pytest-xdist's workers share the directory).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from strata.v1 import game_service_pb2 as pb

from clients.client import StrataClient, StrataError
from domain import registry
from eventstore import migrate
from service.server import Running
from tests import extra_games
from tests.service.conftest import ADMIN_TOKEN, serve

PACKAGE = Path(__file__).resolve().parents[2] / "clients" / "typescript"
GAMES = registry.game_types()
NODE = shutil.which("node")
NPM = shutil.which("npm")

pytestmark = pytest.mark.skipif(
    NODE is None or NPM is None,
    reason="the TypeScript client's tests need `node` and `npm` (Node 20) on PATH",
)


def run(
    *args: str, timeout: float = 300, cwd: Path = PACKAGE
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


def sources_digest() -> str:
    """What the build depends on: the sources, tsconfig and the lock."""
    digest = hashlib.sha256()
    files = [PACKAGE / "tsconfig.json", PACKAGE / "package-lock.json"]
    for folder in ("src", "examples", "test"):
        files += sorted((PACKAGE / folder).rglob("*.ts"))
    for path in files:
        digest.update(str(path.relative_to(PACKAGE)).encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


@pytest.fixture(scope="session")
def node_modules() -> Iterator[Path]:
    """clients/typescript with its dependencies installed (npm ci) and its
    sources compiled to dist/ (tsc), once for every worker."""
    assert NPM is not None
    key = hashlib.sha256(str(PACKAGE).encode()).hexdigest()[:16]
    lock = Path(tempfile.gettempdir()) / f"strata-typescript-{key}.lock"
    with lock.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        installed = PACKAGE / "node_modules" / ".package-lock.json"
        lockfile = PACKAGE / "package-lock.json"
        if (
            not installed.exists()
            or installed.stat().st_mtime < lockfile.stat().st_mtime
        ):
            done = run(NPM, "ci", "--no-audit", "--no-fund")
            assert done.returncode == 0, f"npm ci failed:\n{done.stdout}{done.stderr}"
        stamp = PACKAGE / "dist" / ".sources"
        digest = sources_digest()
        if not stamp.exists() or stamp.read_text() != digest:
            done = run(NPM, "run", "--silent", "build")
            assert done.returncode == 0, f"tsc failed:\n{done.stdout}{done.stderr}"
            stamp.write_text(digest)
    yield PACKAGE / "node_modules"


@pytest.fixture(scope="session")
def built(node_modules: Path) -> Path:
    """The package the scripts run from: clients/typescript itself, or, when
    the suite registers extra games (tests/extra_games.py), a copy of it
    whose code is generated from the protos with their messages, built once
    for every worker."""
    compiled = extra_games.compiled()
    if compiled is None:
        return PACKAGE
    copy = compiled / "typescript"
    with (compiled / "typescript.lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        if (copy / "dist" / ".sources").exists():
            return copy
        for name in ("examples", "scripts", "src", "test"):
            shutil.copytree(PACKAGE / name, copy / name)
        for name in ("package.json", "package-lock.json", "tsconfig.json"):
            shutil.copy(PACKAGE / name, copy / name)
        template = (PACKAGE / "buf.gen.yaml").read_text()
        (copy / "buf.gen.yaml").write_text(
            template.replace("../../protos", str(compiled / "protos"))
        )
        (copy / "node_modules").symlink_to(node_modules)
        for step in (("node", "scripts/generate.mjs"), (NPM or "npm", "run", "build")):
            done = run(*step, cwd=copy)
            assert done.returncode == 0, f"{step}:\n{done.stdout}{done.stderr}"
        (copy / "dist" / ".sources").write_text("built\n")
    return copy


def protos_of(package: Path) -> Path:
    """The protos ``package`` (:func:`built`) was generated from."""
    compiled = extra_games.compiled()
    if package == PACKAGE or compiled is None:
        return PACKAGE.parents[1] / "protos"
    return compiled / "protos"


def two(game_type: str) -> int:
    """Two players, or the nearest number the game seats."""
    rules = registry.rules_for(game_type)
    return max(rules.min_players, min(2, rules.max_players))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    """One server for the module: its gRPC port and its HTTP listener."""
    url = f"sqlite:///{tmp_path_factory.mktemp('typescript') / 'strata.sqlite3'}"
    migrate.upgrade(url)
    yield from serve(url)


@pytest.fixture(scope="module")
def admin(server: Running) -> Iterator[StrataClient]:
    with StrataClient(f"127.0.0.1:{server.port}", token=ADMIN_TOKEN) as client:
        yield client


def node(package: Path, server: Running, script: str, *args: str) -> dict[str, Any]:
    """Run a compiled script of ``package`` (:func:`built`) against
    ``server``; its last line, as JSON."""
    assert NODE is not None
    done = run(
        NODE,
        f"dist/{script}",
        *args,
        "--url",
        f"http://127.0.0.1:{server.http_port}",
        timeout=120,
        cwd=package,
    )
    assert done.returncode == 0, f"{script} failed:\n{done.stdout}{done.stderr}"
    summary: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return summary


def test_the_generated_code_is_up_to_date(node_modules: Path) -> None:
    done = run("node", "scripts/generate.mjs", "--check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "generated code is up to date" in done.stdout


def test_the_staleness_check_names_what_is_stale(
    node_modules: Path, tmp_path: Path
) -> None:
    """The check itself, on a copy of the package beside the same protos:
    an edited file is stale, a deleted one missing, an extra one unexpected."""
    copy = tmp_path / "clients" / "typescript"
    for name in ("buf.gen.yaml", "package.json", "scripts", "src"):
        source = PACKAGE / name
        if source.is_dir():
            shutil.copytree(source, copy / name)
        else:
            copy.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, copy / name)
    (copy / "node_modules").symlink_to(node_modules)
    (tmp_path / "protos").symlink_to(PACKAGE.parents[1] / "protos")
    gen = copy / "src" / "gen" / "strata"
    with (gen / "v1" / "game_service_pb.ts").open("a") as edited:
        edited.write("// edited by hand\n")
    (gen / "games" / "cubosaurs" / "v1" / "cubosaurs_pb.ts").unlink()
    (gen / "v1" / "leftover_pb.ts").write_text("export {};\n")
    assert NODE is not None
    done = subprocess.run(
        [NODE, "scripts/generate.mjs", "--check"],
        cwd=copy,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.splitlines()[:3] == [
        "missing src/gen/strata/games/cubosaurs/v1/cubosaurs_pb.ts",
        "stale src/gen/strata/v1/game_service_pb.ts",
        "unexpected src/gen/strata/v1/leftover_pb.ts",
    ]


def test_the_generated_code_covers_every_proto(built: Path) -> None:
    protos = protos_of(built)
    expected = {
        str(p.relative_to(protos).with_suffix("")) + "_pb.ts"
        for p in protos.glob("strata/**/*.proto")
    }
    generated = {
        str(p.relative_to(built / "src" / "gen"))
        for p in (built / "src" / "gen").rglob("*.ts")
    }
    assert expected | {"games.ts"} == generated
    # The three services' files and one per registered game.
    assert len(expected) == 3 + len(registry.game_types())


def test_every_game_is_exported_by_name_without_a_hand_list(built: Path) -> None:
    """src/gen/games.ts (generated from the protos) exports each registered
    game's module under its game type in camelCase; index.ts exports it."""
    games = (built / "src" / "gen" / "games.ts").read_text()
    assert sorted(re.findall(r"export \* as (\w+) from", games)) == sorted(
        camel(game_type) for game_type in registry.game_types()
    )
    index = (built / "src" / "index.ts").read_text()
    assert 'export * from "./gen/games.js";' in index
    assert "strata/games/" not in index  # no hand-kept list of the games


@pytest.mark.parametrize(
    ("game_type", "players", "transport", "runtime", "resume_after"),
    [
        # Every registered game over Connect from Node, then the other ways.
        *((game_type, two(game_type), "connect", "node", 0) for game_type in GAMES),
        # The watch dropped after 20 events and resumed from the 21st.
        ("cubosaurs", 3, "grpc-web", "node", 20),
        ("happy_little_dinosaurs", 3, "connect-proto", "node", 0),
        # connect-web's transports, a browser's (on Node's fetch here).
        ("dinosaurs_extinct", 3, "connect", "web", 10),
        ("escaping_extinction", 1, "grpc-web", "web", 0),
    ],
)
def test_the_example_plays_a_whole_game_against_bots_while_watching(
    built: Path,
    server: Running,
    admin: StrataClient,
    game_type: str,
    players: int,
    transport: str,
    runtime: str,
    resume_after: int,
) -> None:
    summary = node(
        built,
        server,
        "examples/play.js",
        game_type,
        "--transport",
        transport,
        "--runtime",
        runtime,
        "--players",
        str(players),
        "--name",
        "Ada from Node",
        "--resume-after",
        str(resume_after),
        "--quiet",
    )
    assert (summary["game_type"], summary["transport"], summary["runtime"]) == (
        game_type,
        transport,
        runtime,
    )

    # The game is over, as the service (over gRPC) tells it.
    game = admin.get_game(summary["game_id"])
    assert game.game_type == game_type
    assert game.status == pb.GAME_STATUS_FINISHED
    assert summary["version"] == game.version
    assert summary["winners"] == list(game.outcome.winners)
    assert summary["result"] == game.outcome.result
    assert [(s.player_name, s.bot) for s in game.seats] == [("Ada from Node", "")] + [
        (s.player_name, "heuristic") for s in game.seats[1:]
    ]

    # The watch saw every event live, once, from the creation to the game's
    # ending (GameFinished, then the seed's reveal), where the stream ends
    # (in two streams when it resumed).
    audit = admin.get_audit_log(summary["game_id"])
    assert [e.type for e in audit.events][-2:] == ["GameFinished", "SeedRevealed"]
    assert summary["watch_streams"] == (2 if resume_after else 1)
    assert summary["watched"] == game.version
    assert summary["watched_first_version"] == 1
    assert summary["watched_last_version"] == game.version
    assert summary["watched_last_type"] == "SeedRevealed"
    assert summary["watched_winners"] == list(game.outcome.winners)
    assert len(audit.events) == game.version

    # Every move the example counted is in the command log, for seat 0.
    ours = [
        c
        for c in audit.commands
        if c.command_id.startswith(summary["command_id_prefix"])
    ]
    assert summary["moves"] > 0
    assert len([c for c in ours if c.accepted]) == summary["moves"]
    assert {c.seat for c in ours} == {0}


@pytest.mark.parametrize(
    ("transport", "runtime"),
    [
        ("connect", "node"),
        ("connect-proto", "node"),
        ("grpc-web", "node"),
        ("connect", "web"),
        ("grpc-web", "web"),
    ],
)
def test_refusals_carry_the_same_code_reason_and_sentence_as_over_grpc(
    built: Path, server: Running, transport: str, runtime: str
) -> None:
    summary = node(
        built, server, "test/errors.js", "--transport", transport, "--runtime", runtime
    )
    game_id, token = summary["game_id"], summary["seat_token"]
    command = json_format.ParseDict(
        {"dinosaursExtinct": {"rollDie": {}}}, pb.GameCommand()
    )
    with StrataClient(f"127.0.0.1:{server.port}") as client:
        me = client.with_token(token)
        calls: dict[str, Callable[[], object]] = {
            "unknown_game": lambda: client.get_game("no-such-game"),
            "unknown_game_type": lambda: client.create_game("chess", 2),
            "started_twice": lambda: me.start_game(game_id),
            "not_my_seat": lambda: me.submit_command(game_id, 1, command),
            "bad_token": lambda: client.with_token("not-a-token").start_game(game_id),
        }
        over_grpc: dict[str, dict[str, str]] = {}
        for name, call in calls.items():
            with pytest.raises(StrataError) as refused:
                call()
            error = refused.value
            over_grpc[name] = {
                "code": error.code.name,
                "reason": error.reason,
                "message": error.message,
            }
    assert summary["errors"] == over_grpc
    assert all(e["reason"] for e in over_grpc.values())


def test_live_play_and_a_players_record_through_the_typescript_client(
    built: Path, server: Running, admin: StrataClient
) -> None:
    """findGame seats two callers in one game, rematch links the next one,
    and exportPlayerRecord gives a record that verifies offline."""
    from domain.fairness import verify_record

    summary = node(built, server, "test/live.js", "--transport", "connect")
    assert summary["second_game_id"] == summary["game_id"]
    game = admin.get_game(summary["game_id"])
    assert game.status == pb.GAME_STATUS_FINISHED
    assert [s.player_name for s in game.seats] == ["Ada", "Bob"]
    assert game.rematch == summary["rematch_id"]
    record = summary["record"]
    assert record["seats"] == [0] and record["events"][-1]["type"] in (
        "SeedRevealed",
        "RematchCreated",
    )
    check = verify_record(record)
    assert check.ok, check.message


@pytest.mark.parametrize("transport", ["connect", "grpc-web"])
def test_the_typescript_client_starts_a_game_from_a_position(
    built: Path, server: Running, admin: StrataClient, transport: str
) -> None:
    """createGame's ``position`` (the README example, proto JSON) starts the
    game there; a broken one is refused with the field the Python client
    names too."""
    from tests.service.test_positions import (
        break_position,
        domain_of,
        domain_position,
        players_for,
        readme_position,
    )

    game_type = "dinosaurs_extinct"
    position = readme_position(game_type)
    broken = json.loads(json.dumps(position))
    field = break_position(game_type, broken)
    players = players_for(game_type, position)
    summary = node(
        built,
        server,
        "test/positions.js",
        "--transport",
        transport,
        "--admin-token",
        ADMIN_TOKEN,
        "--game",
        game_type,
        "--players",
        str(players),
        "--position",
        json.dumps(position),
        "--broken",
        json.dumps(broken),
    )
    first = next(admin.watch_game(summary["game_id"], follow=False))
    # The client keeps the highest strata-position it was told (read your
    # writes across replicas): at least its game's creation.
    assert int(summary["read_after"]) >= first.position > 0
    created = first.game_created
    assert domain_of(game_type, created.scenario) == domain_position(
        game_type, position
    )
    with pytest.raises(StrataError) as refused:
        admin.create_game(game_type, players, position=broken)
    error = refused.value
    assert summary["refusal"] == {
        "code": error.code.name,
        "reason": error.reason,
        "field": error.field,
    }
    assert error.field == f"scenario.{game_type}.position.{field}"


def test_the_admin_and_integration_methods_through_the_typescript_client(
    built: Path, server: Running, admin: StrataClient
) -> None:
    """watchGameWithClocks, the audit log (whole and a page), verifyGame,
    exportGame in pages and importGame, followLog, getStatistics and a
    rematch with a seed, each checked against what the Python client reads."""
    summary = node(built, server, "test/admin.js", "--token", ADMIN_TOKEN)
    game_id = summary["game_id"]
    over_grpc = admin.get_audit_log(game_id)
    # Watched to the end of the game; the rematch came after (in the log of
    # the game it was asked of).
    assert over_grpc.events[-1].type == "RematchCreated"
    assert summary["watched"] == [e.version for e in over_grpc.events[:-1]]
    assert summary["audit_events"] == len(over_grpc.events) - 1 > 7
    rematch = over_grpc.events[-1].version
    assert summary["audit_commands"] == len(
        [c for c in over_grpc.commands if c.first_version < rematch]
    )
    assert summary["first_page_events"] == 7 and summary["first_page_next"]
    assert summary["verdict"] == "VERIFIED"
    assert summary["exported_file"] == admin.export_game(game_id).file_name
    copy = admin.get_audit_log(summary["imported_id"])
    assert summary["imported_id"] == f"{game_id}-copy"
    assert summary["imported_version"] == len(copy.events) == len(over_grpc.events) - 1
    assert [e.type for e in copy.events] == [e.type for e in over_grpc.events[:-1]]
    assert game_id in summary["finished"]
    assert summary["finished"].count(game_id) == 1
    statistics = admin.get_statistics("dinosaurs_extinct").statistics[0]
    assert summary["statistics_finished"] == statistics.finished
    assert summary["statistics_finished"] == len(summary["finished"]) >= 2
    assert admin.get_game(game_id).rematch == summary["rematch_id"]
    # Batched, the game's events come in order, three a message at most.
    batched = summary["batched"]
    assert [v for batch in batched for v in batch] == [
        e.version for e in over_grpc.events[:-1]
    ]
    assert max(map(len, batched)) == 3


#: What one client has and the other lacks on purpose, with the reason.
PYTHON_ONLY = {
    "close": "a gRPC channel is closed; the TypeScript transports hold no handle",
}
TYPESCRIPT_ONLY = {
    "callOptions": "the headers and deadline to call the generated clients directly",
}
#: Options only the TypeScript methods take: a stream's AbortSignal (in
#: Python, a stream ends when its iterator is closed).
TYPESCRIPT_ONLY_OPTIONS = {"signal"}


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


def python_surface() -> dict[str, dict[str, bool]]:
    """Each public method of the Python client: its parameters, camelCased,
    and whether each is optional."""
    import inspect

    surface = {}
    for name, method in inspect.getmembers(StrataClient, inspect.isfunction):
        if name.startswith("_") or name in PYTHON_ONLY:
            continue
        parameters = list(inspect.signature(method).parameters.values())[1:]
        surface[camel(name)] = {
            camel(p.name): p.default is not inspect.Parameter.empty for p in parameters
        }
    return surface


def typescript_surface() -> dict[str, dict[str, bool]]:
    """The same of the TypeScript client, read from its source by the
    TypeScript compiler (scripts/surface.mjs): an options bag's keys are
    parameters too."""
    done = run("node", "scripts/surface.mjs")
    assert done.returncode == 0, done.stderr
    surface = {}
    for method in json.loads(done.stdout):
        if method["name"] in TYPESCRIPT_ONLY:
            continue
        parameters: dict[str, bool] = {}
        for parameter in method["params"]:
            for key in parameter["keys"] or [parameter]:
                if key["name"] not in TYPESCRIPT_ONLY_OPTIONS:
                    parameters[key["name"]] = key["optional"] or parameter["optional"]
        surface[method["name"]] = parameters
    return surface


def surface_differences(
    python: dict[str, dict[str, bool]], typescript: dict[str, dict[str, bool]]
) -> list[str]:
    found = [f"{m}: only in Python" for m in sorted(python.keys() - typescript)]
    found += [f"{m}: only in TypeScript" for m in sorted(typescript.keys() - python)]
    for method in sorted(python.keys() & typescript.keys()):
        mine, theirs = python[method], typescript[method]
        found += [f"{method}({p}): only in Python" for p in mine.keys() - theirs]
        found += [f"{method}({p}): only in TypeScript" for p in theirs.keys() - mine]
        found += [
            f"{method}({p}): optional in {'Python' if mine[p] else 'TypeScript'} only"
            for p in sorted(mine.keys() & theirs.keys())
            if mine[p] != theirs[p]
        ]
    return found


def test_the_two_clients_have_one_surface(node_modules: Path) -> None:
    """The same methods (camelCase in TypeScript) with the same parameters,
    each optional in both or in neither."""
    python, typescript = python_surface(), typescript_surface()
    assert len(python) > 20
    assert surface_differences(python, typescript) == []


def test_a_difference_of_surface_is_named() -> None:
    python = {"getGame": {"gameId": False, "atVersion": True}, "close": {}}
    typescript = {"getGame": {"gameId": False, "atVersion": False, "seat": True}}
    assert surface_differences(python, typescript) == [
        "close: only in Python",
        "getGame(seat): only in TypeScript",
        "getGame(atVersion): optional in Python only",
    ]
