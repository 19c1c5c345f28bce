"""The `strata` command: run the service, and play, watch and export games.

    strata serve                      run the service (SQLite by default)
    strata worker                     run the background work only (projections, bots)
    strata migrate                    apply database migrations
    (these three and `projections` are the server's: service/cli.py, added
    through the entry point group `strata.commands` when the server is installed)
    strata autoplay --game T --players N --seed S
    strata play --game T --players N  hot-seat play in the terminal
    strata play GAME_ID --token T     play your seats of a game
    strata create / join / leave / start / show / actions / act
    strata create --game T --players N --position FILE   start from a position (admin)
    strata watch GAME_ID              follow a game's events live
    strata events GAME_ID             a game's events as JSON lines
    strata replay GAME_ID             walk a game event by event
    strata verify GAME_ID | --all     re-execute command logs (admin)
    strata export GAME_ID / import FILE / audit GAME_ID   (admin)
    strata follow / stats             the integration feed and statistics
    strata projections rebuild        rebuild read models from position 0
    strata simulate --game T --games N --players P --bots K,K --seed S
                                      play bot games in-process: balance figures

The target service is `--target HOST:PORT`, else `STRATA_TARGET`, else
`localhost:$STRATA_PORT` (default port 50051). Tokens: `--token`, else
`STRATA_TOKEN`; admin-only calls use `STRATA_ADMIN_TOKEN`.
"""

from __future__ import annotations

import os

# gRPC's core writes its own plain-text lines to stderr (a refused
# connection, a port in use); `strata` says what went wrong in one line of
# its own, and `strata serve` logs JSON. Set GRPC_VERBOSITY to see them.
# (Read when grpc is first imported, so set before any import of it.)
os.environ.setdefault("GRPC_VERBOSITY", "NONE")

import argparse
import hashlib
import importlib.metadata
import io
import json
import random
import sys
import time
import unicodedata
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

import grpc
from google.protobuf import json_format, text_format
from strata.v1 import admin_service_pb2 as admin_pb
from strata.v1 import game_service_pb2 as pb

from clients import client as client_module
from clients.client import StrataClient, StrataError, Tls, position_scenario
from clients.words import TableWords, as_json

#: The table policies that hand a seat to a bot: ``bot`` (the game's
#: default bot) and ``bot:<level>`` for each ``BotLevel``.
BOT_POLICIES = [
    "bot",
    *(
        f"bot:{name.removeprefix('BOT_LEVEL_').lower()}"
        for name in pb.BotLevel.DESCRIPTOR.values_by_name
        if name != "BOT_LEVEL_UNSPECIFIED"
    ),
]

FINISHED = pb.GAME_STATUS_FINISHED


def connect(args: argparse.Namespace, token: str = "") -> StrataClient:
    """A client of the service the command's options name."""
    tls = None
    if args.tls or args.ca_file or args.cert_file:
        tls = Tls(args.ca_file, args.cert_file, args.key_file)
    return StrataClient(args.target, token=token, tls=tls, transport=args.transport)


def default_target() -> str:
    return os.environ.get("STRATA_TARGET") or (
        f"localhost:{os.environ.get('STRATA_PORT') or 50051}"
    )


#: Options whose value may begin with ``-`` (seat tokens issued before the
#: ``st_`` prefix do, about one in 64): argparse would take such a value for
#: an option of its own.
_VALUE_OPTIONS = ("--token",)


def glue_option_values(argv: Sequence[str]) -> list[str]:
    """``--token -abc`` as ``--token=-abc``, so that a value beginning with
    ``-`` is read as the option's value."""
    out: list[str] = []
    args = list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in _VALUE_OPTIONS and i + 1 < len(args) and args[i + 1][:1] == "-":
            out.append(f"{arg}={args[i + 1]}")
            i += 2
            continue
        out.append(arg)
        i += 1
    return out


#: The entry point group of the commands other packages add to `strata`.
COMMANDS_GROUP = "strata.commands"

Handler = Callable[[argparse.Namespace], int]
AddCommand = Callable[[str, Handler, str], argparse.ArgumentParser]


def command_plugins() -> list[Callable[[AddCommand], None]]:
    """The functions that add other packages' subcommands to `strata`.

    The server's commands live in ``service/cli.py``, which the client never
    imports (the client can be installed without the server): the project's
    metadata lists it in the entry point group ``strata.commands``
    (pyproject.toml), and each entry is called with a function that adds one
    subcommand."""
    found = importlib.metadata.entry_points(group=COMMANDS_GROUP)
    plugins: list[Callable[[AddCommand], None]] = [
        entry.load() for entry in sorted(found, key=lambda entry: entry.name)
    ]
    return plugins


#: Unicode categories never printed as they are: controls (terminal
#: escapes), format characters (bidi overrides, zero-width), surrogates,
#: private use, unassigned, line and paragraph separators.
_UNPRINTED = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def safe_text(text: str) -> str:
    """Text from the service (player names, other users' input) made safe
    for a terminal: every control or format character but newline and tab
    shown as ``\\uXXXX``."""
    if text.isprintable():
        return text
    return "".join(
        char
        if char in "\n\t" or unicodedata.category(char) not in _UNPRINTED
        else f"\\u{ord(char):04x}"
        for char in text
    )


class _SafeOutput(io.TextIOBase):
    """A text stream that writes :func:`safe_text` of what it is given."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(safe_text(text))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self.stream.encoding


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(glue_option_values(sys.argv[1:] if argv is None else argv))
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _SafeOutput(stdout), _SafeOutput(stderr)
    try:
        result: int = args.handler(args)
        return result
    except StrataError as error:
        where = f" (field {error.field})" if error.field else ""
        print(f"strata: {error}{where}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`strata events G | head`): nothing to say,
        # and nothing more to write (Python would complain at exit).
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stdout.fileno())
        return 1
    finally:
        sys.stdout, sys.stderr = stdout, stderr


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="strata", description="Strata, the dinosaur game service."
    )
    commands = parser.add_subparsers(metavar="COMMAND")

    def subcommand(name: str, handler: Handler, help: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help, description=help)
        sub.set_defaults(handler=handler)
        return sub

    def command(name: str, handler: Handler, help: str) -> argparse.ArgumentParser:
        sub = subcommand(name, handler, help)
        sub.add_argument(
            "--target",
            default=default_target(),
            help="HOST:PORT of the service (over HTTP: http://HOST:PORT)",
        )
        sub.add_argument(
            "--transport",
            choices=("grpc", "connect", "connect-proto", "grpc-web"),
            default=os.environ.get("STRATA_TRANSPORT") or "grpc",
            help="grpc (default: $STRATA_TRANSPORT, else grpc), or over the HTTP "
            "listener: connect (JSON), connect-proto (binary) or grpc-web",
        )
        tls = sub.add_argument_group("TLS")
        tls.add_argument(
            "--tls",
            action="store_true",
            default=bool(os.environ.get("STRATA_TLS")),
            help="connect over TLS (default: $STRATA_TLS set)",
        )
        tls.add_argument(
            "--ca-file",
            default=os.environ.get("STRATA_TLS_CA_FILE", ""),
            help="PEM of the authority that signed the service's certificate "
            "(implies --tls; default $STRATA_TLS_CA_FILE, else the system's)",
        )
        tls.add_argument(
            "--cert-file",
            default=os.environ.get("STRATA_TLS_CLIENT_CERT", ""),
            help="client certificate, for a service that asks for one",
        )
        tls.add_argument(
            "--key-file",
            default=os.environ.get("STRATA_TLS_CLIENT_KEY", ""),
            help="the client certificate's key",
        )
        return sub

    # The server's commands (serve, worker, migrate, projections), when the
    # server is installed; see command_plugins.
    for register in command_plugins():
        register(subcommand)

    autoplay = command(
        "autoplay",
        cmd_autoplay,
        "Play one whole game with a bot in every seat, through the service.",
    )
    autoplay.add_argument("--game", required=True, help="game type id")
    autoplay.add_argument("--players", type=int, required=True)
    autoplay.add_argument(
        "--seed",
        default="",
        help="seed of the game (needs $STRATA_ADMIN_TOKEN) and of the bots",
    )
    _add_options(autoplay)
    autoplay.add_argument("--max-commands", type=int, default=100_000)

    play = command("play", cmd_play, "Play in the terminal.")
    play.add_argument("game_id", nargs="?", help="a game to play your seats of")
    play.add_argument("--game", help="create a new hot-seat game of this type")
    play.add_argument("--players", type=int, default=2)
    play.add_argument("--seed", default="", help="needs $STRATA_ADMIN_TOKEN")
    play.add_argument("--token", default=os.environ.get("STRATA_TOKEN", ""))
    _add_options(play)
    _add_bots(play)

    create = command("create", cmd_create, "Create a game; prints its id.")
    create.add_argument("--game", required=True)
    create.add_argument("--players", type=int, required=True)
    create.add_argument("--seed", default="", help="needs $STRATA_ADMIN_TOKEN")
    _add_options(create)
    _add_bots(create)
    create.add_argument(
        "--replace-leavers",
        choices=BOT_POLICIES,
        default="",
        help="a seat whose player leaves the started game goes to a bot "
        "(bot: the game's heuristic bot; bot:LEVEL: the bot of that level)",
    )
    _add_time_control(create)
    create.add_argument(
        "--position",
        metavar="FILE",
        help="start from the position in FILE (the game's Position message in "
        "its proto JSON form; '-' reads stdin); needs $STRATA_ADMIN_TOKEN",
    )

    join = command("join", cmd_join, "Take a seat; prints the seat token.")
    join.add_argument("game_id")
    join.add_argument("--name", default=os.environ.get("USER", "player"))
    join.add_argument("--seat", type=int)
    join.add_argument("--token", default="", help="add the seat to this token")

    leave = command(
        "leave",
        cmd_leave,
        "Free a seat of a game not yet started (your seat's token, the game's "
        "host token or the admin token), or leave a started game (your seat's "
        "token or the admin token): a bot takes the seat over when the game "
        "was created with --replace-leavers bot, otherwise the seat is out.",
    )
    leave.add_argument("game_id")
    leave.add_argument("--seat", type=int, required=True)
    leave.add_argument("--token", default=os.environ.get("STRATA_TOKEN", ""))

    games = command(
        "games",
        cmd_games,
        "List games, oldest first, one JSON line each, with their seats (free, "
        "bots, players who left).",
    )
    games.add_argument("--game", default="", help="only this game type")
    state = games.add_mutually_exclusive_group()
    state.add_argument(
        "--open", action="store_true", help="only games not started with a free seat"
    )
    state.add_argument("--running", action="store_true", help="only games in play")
    state.add_argument("--finished", action="store_true", help="only finished games")
    games.add_argument("--players", type=int, default=0, help="only games this size")
    games.add_argument("--newest", action="store_true", help="newest first")

    rematch = command(
        "rematch",
        cmd_rematch,
        "Create the rematch of a finished game (or get the one created); "
        "prints its id. Each player then claims its seat: strata join NEW "
        "--token OLD_TOKEN.",
    )
    rematch.add_argument("game_id")
    rematch.add_argument("--token", default=os.environ.get("STRATA_TOKEN", ""))

    find = command(
        "find",
        cmd_find,
        "Quick join: take a seat in the oldest open game of a type and player "
        "count, or in a new one; prints the seat token (the game and seat on "
        "stderr).",
    )
    find.add_argument("--game", required=True)
    find.add_argument("--players", type=int, required=True)
    find.add_argument("--name", default=os.environ.get("USER", "player"))
    find.add_argument(
        "--token",
        default=os.environ.get("STRATA_TOKEN", ""),
        help="your token: the seat is added to it (and never taken twice)",
    )

    for name, handler, help in (
        ("start", cmd_start, "Start a game whose seats are taken."),
        ("show", cmd_show, "Show a game as your token may see it."),
        ("actions", cmd_actions, "List your legal actions, numbered."),
    ):
        sub = command(name, handler, help)
        sub.add_argument("game_id")
        sub.add_argument("--token", default=os.environ.get("STRATA_TOKEN", ""))
        if name == "show":
            sub.add_argument("--at-version", type=int)
            sub.add_argument("--json", action="store_true")

    act = command("act", cmd_act, "Send legal action number N (see `actions`).")
    act.add_argument("game_id")
    act.add_argument("number", type=int)
    act.add_argument("--token", default=os.environ.get("STRATA_TOKEN", ""))

    watch = command("watch", cmd_watch, "Follow a game's events live.")
    watch.add_argument("game_id")
    watch.add_argument("--from-version", type=int, default=1)
    watch.add_argument("--token", default=os.environ.get("STRATA_TOKEN", ""))

    events = command("events", cmd_events, "Export a game's events as JSON lines.")
    events.add_argument("game_id")
    events.add_argument("--from-version", type=int, default=1)
    events.add_argument(
        "--token",
        default=os.environ.get("STRATA_TOKEN")
        or os.environ.get("STRATA_ADMIN_TOKEN", ""),
    )
    replay = command("replay", cmd_replay, "Walk a game event by event.")
    replay.add_argument("game_id")
    replay.add_argument("--from-version", type=int, default=1)
    replay.add_argument("--to-version", type=int, default=0)
    replay.add_argument("--token", default=os.environ.get("STRATA_TOKEN", ""))

    admin_token = os.environ.get("STRATA_ADMIN_TOKEN", "")
    verify = command(
        "verify",
        cmd_verify,
        "Re-execute games' command logs and compare their events (admin).",
    )
    verify.add_argument("game_id", nargs="?")
    verify.add_argument(
        "--offline",
        metavar="FILE",
        help="check a player's record (`strata record`) of a finished game "
        "here, with no service and no token: the seed against the commitment "
        "made at the start, every event against re-execution",
    )
    verify.add_argument("--all", action="store_true", help="every game")
    verify.add_argument("--game", default="", help="with --all: only this type")
    verify.add_argument(
        "--token", default=admin_token, help="default $STRATA_ADMIN_TOKEN"
    )

    record = command(
        "record",
        cmd_record,
        "Fetch your own record of a finished game, for `verify --offline`.",
    )
    record.add_argument("game_id")
    record.add_argument(
        "-o", "--output", help="file (default: GAME_ID.record.json; - for stdout)"
    )
    record.add_argument("--token", default=os.environ.get("STRATA_TOKEN", ""))

    export = command("export", cmd_export, "Export a whole game to a file (admin).")
    export.add_argument("game_id")
    export.add_argument("-o", "--output", help="file (default: GAME_ID.strata.json)")
    export.add_argument("--token", default=admin_token)

    imports = command("import", cmd_import, "Import an exported game (admin).")
    imports.add_argument("file")
    imports.add_argument("--game-id", default="", help="import under this id")
    imports.add_argument(
        "--trust",
        action="store_true",
        help="store the game without verifying it first (by default a game "
        "that does not verify is refused)",
    )
    imports.add_argument("--token", default=admin_token)

    audit = command("audit", cmd_audit, "The full log of a game with commands (admin).")
    audit.add_argument("game_id")
    audit.add_argument("--token", default=admin_token)

    integration_token = os.environ.get("STRATA_INTEGRATION_TOKEN", "") or admin_token
    follow = command("follow", cmd_follow, "Follow the global log (integration).")
    follow.add_argument("--after-position", type=int, default=0)
    follow.add_argument("--game", action="append", default=[], help="game type")
    follow.add_argument("--event", action="append", default=[], help="event type")
    follow.add_argument("--no-follow", action="store_true", help="stop at the end")
    follow.add_argument("--token", default=integration_token)

    stats = command("stats", cmd_stats, "Per-game-type statistics (integration).")
    stats.add_argument("--game", default="")
    stats.add_argument("--token", default=integration_token)

    _add_simulate(subcommand("simulate", cmd_simulate, SIMULATE_HELP))
    return parser


def _add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a game option (repeatable), e.g. --option advanced=true",
    )
    parser.add_argument(
        "--advanced", action="store_true", help="shortcut for --option advanced=true"
    )


def _add_bots(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--bot",
        action="append",
        default=[],
        metavar="SEAT=KIND",
        help="the service's bot plays this seat (repeatable), e.g. --bot 1=heuristic",
    )


def bot_seats(pairs: list[str]) -> dict[int, str]:
    """Seat -> bot kind from SEAT=KIND strings."""
    seats: dict[int, str] = {}
    for pair in pairs:
        seat, sep, kind = pair.partition("=")
        if not sep or not seat.strip().isdigit() or not kind.strip():
            raise SystemExit(f"strata: --bot needs SEAT=KIND, got {pair!r}")
        seats[int(seat)] = kind.strip()
    return seats


def game_options(
    game_type: str, pairs: list[str], advanced: bool
) -> pb.GameOptions | None:
    """The typed options of ``game_type`` from KEY=VALUE strings."""
    if advanced:
        pairs = [*pairs, "advanced=true"]
    if not pairs:
        return None
    values: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep:
            raise SystemExit(f"strata: --option needs KEY=VALUE, got {pair!r}")
        try:
            values[key] = json.loads(raw)
        except json.JSONDecodeError:
            values[key] = raw
    options = pb.GameOptions()
    try:
        json_format.ParseDict({game_type: values}, options)
    except json_format.ParseError as error:
        raise SystemExit(f"strata: bad option for {game_type}: {error}") from None
    return options


def read_position(game_type: str, path: str | None) -> pb.GameScenario | None:
    """The scenario starting from the position in the JSON file ``path``."""
    if not path:
        return None
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text()
        data = json.loads(text)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise SystemExit(f"strata: --position {path}: {error}") from None
    if not isinstance(data, dict):
        raise SystemExit(f"strata: --position {path}: not a JSON object")
    try:
        return position_scenario(game_type, data)
    except ValueError as error:
        raise SystemExit(f"strata: --position {path}: {error}") from None


# -- playing ------------------------------------------------------------------------


def _chooser(seed: str, version: int) -> random.Random:
    digest = hashlib.sha256(f"autoplay/{seed}/{version}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _creator(client: StrataClient, seed: str) -> StrataClient:
    """The client that creates a game: the admin's when a seed is chosen
    (only the admin may choose what chance will do)."""
    if not seed:
        return client
    admin_token = os.environ.get("STRATA_ADMIN_TOKEN", "")
    if not admin_token:
        raise SystemExit(
            "strata: --seed needs the admin token ($STRATA_ADMIN_TOKEN): a seed "
            "chosen by a player would foretell every draw"
        )
    return client.with_token(admin_token)


def cmd_autoplay(args: argparse.Namespace) -> int:
    seed = args.seed or os.urandom(8).hex()
    with connect(args) as client:
        created = _creator(client, args.seed).create_game(
            args.game,
            args.players,
            seed=args.seed,
            options=game_options(args.game, args.option, args.advanced),
        )
        game_id = created.game_id
        seats = {}
        for seat in range(args.players):
            joined = client.join_game(game_id, player_name=f"bot{seat}", seat=seat)
            seats[seat] = client.with_token(joined.seat_token)
        seats[0].start_game(game_id)
        commands = 0
        game = client.get_game(game_id)
        while game.status != FINISHED:
            if commands >= args.max_commands:
                raise SystemExit(f"strata: game {game_id} did not end in time")
            if not game.active_seats:
                raise SystemExit(f"strata: nobody can act in game {game_id}")
            chooser = _chooser(seed, game.version)
            seat = chooser.choice(list(game.active_seats))
            legal = seats[seat].list_legal_actions(game_id, seat)
            action = chooser.choice(list(legal.actions))
            seats[seat].submit_command(
                game_id,
                seat,
                action.command,
                command_id=f"autoplay-{legal.version}",
                expected_version=legal.version,
            )
            commands += 1
            game = client.get_game(game_id)
        summary = {
            "game_id": game_id,
            "game_type": args.game,
            "players": args.players,
            "seed": seed,
            "winner": list(game.outcome.winners),
            "outcome": game.outcome.result,
            "version": game.version,
            "commands": commands,
        }
        print(json.dumps(summary))
    return 0


def _show_game(game: pb.Game) -> None:
    status = pb.GameStatus.Name(game.status).removeprefix("GAME_STATUS_").lower()
    print(f"game {game.game_id} ({game.game_type}) version {game.version}, {status}")
    for seat in game.seats:
        mark = " (you)" if seat.seat in game.your_seats else ""
        active = " *to act*" if seat.seat in game.active_seats else ""
        name = seat.player_name if seat.taken else "(free)"
        print(f"  seat {seat.seat}: {name}{mark}{active}")
    which = game.view.WhichOneof("game")
    if which:
        print(text_format.MessageToString(getattr(game.view, which), indent=2).rstrip())
    if game.status == FINISHED:
        print(f"finished: {game.outcome.result}, winners {list(game.outcome.winners)}")


def _hot_seat(
    client: StrataClient, args: argparse.Namespace
) -> tuple[str, StrataClient]:
    """A new game whose every seat but the bots' is taken by one token."""
    bots = bot_seats(args.bot)
    created = _creator(client, args.seed).create_game(
        args.game,
        args.players,
        seed=args.seed,
        options=game_options(args.game, args.option, args.advanced),
        bots=bots,
    )
    game_id = created.game_id
    token = ""
    for seat in range(args.players):
        if seat in bots:
            continue
        joined = client.with_token(token).join_game(
            game_id, player_name=f"player{seat + 1}", seat=seat
        )
        token = joined.seat_token
    if not token:
        raise SystemExit("strata: leave a seat for a person (or use simulate)")
    me = client.with_token(token)
    me.start_game(game_id)
    print(f"hot-seat game {game_id}; every seat's token: {token}")
    return game_id, me


def cmd_play(args: argparse.Namespace) -> int:
    with connect(args) as client:
        if args.game:
            game_id, me = _hot_seat(client, args)
        elif args.game_id:
            game_id = args.game_id
            me = client.with_token(args.token)
        else:
            raise SystemExit("strata: give a GAME_ID (with --token) or --game TYPE")
        seen = 0  # the last version whose events were told
        while True:
            game = me.get_game(game_id)
            table = TableWords(as_json(game))
            if game.version != seen:
                print()
                seen = _show_table(me, game, table, seen)
            if game.status == FINISHED:
                return 0
            legal = me.list_legal_actions(game_id)
            if not legal.actions and any(seat.bot for seat in game.seats):
                time.sleep(0.5)  # the service's bots are playing
                continue
            if not legal.actions:
                print("waiting for other players… (Enter to refresh, q to quit)")
                if input().strip().lower() == "q":
                    return 0
                continue
            actions = [as_json(action) for action in legal.actions]
            print(f"Your choices (at version {legal.version}):")
            for number, action in enumerate(actions):
                print(f"  [{number}] {table.label(action, actions)}")
            answer = input("your choice (q to quit): ").strip().lower()
            if answer == "q":
                return 0
            if not answer.isdigit() or int(answer) >= len(legal.actions):
                print("choose one of the numbers")
                continue
            _submit_chosen(me, game_id, legal.actions[int(answer)], legal.version)


#: How many of the latest events the first screen tells.
EVENTS_SHOWN = 8


def _show_table(me: StrataClient, game: pb.Game, table: TableWords, seen: int) -> int:
    """The game in the web table's words: title, whose move, the table, and
    the events since version ``seen`` (the latest few on the first screen)
    as sentences. Returns the version told."""
    print(f"{table.title}: game {game.game_id}, version {game.version}")
    print(table.status())
    for line in table.table():
        print(f"  {line}")
    told = [
        text
        for event in me.watch_game(game.game_id, from_version=seen + 1, follow=False)
        if event.version <= game.version
        for text in [_sentence(table, event)]
        if text
    ]
    if told:
        print("What happened:")
        for text in told[-EVENTS_SHOWN:] if not seen else told:
            print(f"  {text}")
    return game.version


def _sentence(table: TableWords, event: pb.Event) -> str:
    """An event as the page's log says it (its type when it has no words)."""
    try:
        text = table.describe(as_json(event))
    except (KeyError, TypeError, ValueError):
        text = None
    return f"{event.type or 'Something happened'}." if text is None else text


#: How often a choice is tried again on the game's new version (ABORTED).
CHOICE_RETRIES = 5


def _submit_chosen(
    me: StrataClient, game_id: str, action: pb.LegalAction, version: int
) -> None:
    """Submits the person's choice pinned to the version it was listed at;
    when the game moved on meanwhile (a bot, another seat: ABORTED), submits
    it again at the new version if it is still legal there, and otherwise
    says the choice is gone."""
    for _ in range(CHOICE_RETRIES):
        try:
            me.submit_command(
                game_id, action.seat, action.command, expected_version=version
            )
            return
        except StrataError as error:
            if error.code != grpc.StatusCode.ABORTED:
                print(f"refused: {error}")
                return
        legal = me.list_legal_actions(game_id)
        wanted = action.command.SerializeToString(deterministic=True)
        still = [
            a
            for a in legal.actions
            if a.seat == action.seat
            and a.command.SerializeToString(deterministic=True) == wanted
        ]
        if not still:
            print("the game moved on and that choice is gone: choose again")
            return
        print(f"the game moved on (version {legal.version}); your choice still holds")
        version = legal.version
    print("the game keeps moving: choose again")


def _add_time_control(parser: argparse.ArgumentParser) -> None:
    timing = parser.add_mutually_exclusive_group()
    timing.add_argument(
        "--deadline",
        type=int,
        metavar="SECONDS",
        help="a deadline per decision, in seconds",
    )
    timing.add_argument(
        "--clock",
        metavar="BASE[+INCREMENT]",
        help="a clock per seat: BASE seconds, plus INCREMENT after each move "
        "(e.g. 300+5)",
    )
    parser.add_argument(
        "--on-timeout",
        choices=[*BOT_POLICIES, "forfeit"],
        default="bot",
        help="when a seat's time runs out: a bot plays that decision (bot, or "
        "bot:LEVEL for the bot of that level) or the seat leaves the game "
        "(forfeit)",
    )


def time_control(args: argparse.Namespace) -> Any:
    """The time control ``--deadline`` or ``--clock`` asks for (None: none)."""
    if getattr(args, "deadline", None):
        return client_module.deadline(args.deadline, args.on_timeout)
    given = getattr(args, "clock", None)
    if not given:
        return None
    base, _, increment = given.partition("+")
    try:
        return client_module.clock(int(base), int(increment or 0), args.on_timeout)
    except ValueError:
        raise SystemExit(
            f"strata: --clock is BASE or BASE+INCREMENT in seconds, not {given!r}"
        ) from None


def cmd_create(args: argparse.Namespace) -> int:
    token = os.environ.get("STRATA_ADMIN_TOKEN", "")
    with connect(args, token) as client:
        created = client.create_game(
            args.game,
            args.players,
            seed=args.seed,
            options=game_options(args.game, args.option, args.advanced),
            bots=bot_seats(args.bot),
            replace_leavers=args.replace_leavers,
            time_control=time_control(args),
            scenario=read_position(args.game, args.position),
        )
        if created.host_token and created.host_token != token:
            print(f"host token: {created.host_token}", file=sys.stderr)
        print(created.game_id)
    return 0


def cmd_leave(args: argparse.Namespace) -> int:
    with connect(args, args.token) as client:
        print(f"version {client.leave_game(args.game_id, args.seat).version}")
    return 0


def cmd_games(args: argparse.Namespace) -> int:
    status = (
        pb.GAME_STATUS_ACTIVE
        if args.running
        else FINISHED
        if args.finished
        else pb.GAME_STATUS_UNSPECIFIED
    )
    with connect(args) as client:
        token = ""
        while True:
            page = client.list_games(
                args.game,
                status,
                page_token=token,
                open_seats=args.open,
                players=args.players,
                newest_first=args.newest,
            )
            for game in page.games:
                line = {
                    "game_id": game.game_id,
                    "game_type": game.game_type,
                    "status": pb.GameStatus.Name(game.status),
                    "players": game.players,
                    "free_seats": [s.seat for s in game.seats if not s.taken],
                    "bots": {str(s.seat): s.bot for s in game.seats if s.bot},
                    "left": [s.seat for s in game.seats if s.left],
                }
                print(json.dumps(line))
            token = page.next_page_token
            if not token:
                return 0


def cmd_rematch(args: argparse.Namespace) -> int:
    token = args.token or os.environ.get("STRATA_ADMIN_TOKEN", "")
    with connect(args, token) as client:
        print(client.rematch(args.game_id).game_id)
    return 0


def cmd_find(args: argparse.Namespace) -> int:
    with connect(args, args.token) as client:
        found = client.find_game(args.game, args.players, args.name)
        made = " (new)" if found.created else ""
        print(f"game {found.game_id}{made} seat {found.seat}", file=sys.stderr)
        print(found.seat_token)
    return 0


def cmd_join(args: argparse.Namespace) -> int:
    with connect(args, args.token) as client:
        joined = client.join_game(args.game_id, player_name=args.name, seat=args.seat)
        print(f"seat {joined.seat}", file=sys.stderr)
        print(joined.seat_token)
    return 0


def cmd_start(args: argparse.Namespace) -> int:
    with connect(args, args.token) as client:
        print(f"version {client.start_game(args.game_id).version}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    with connect(args, args.token) as client:
        game = client.get_game(args.game_id, args.at_version)
        if args.json:
            print(json_format.MessageToJson(game))
        else:
            _show_game(game)
    return 0


def cmd_actions(args: argparse.Namespace) -> int:
    with connect(args, args.token) as client:
        legal = client.list_legal_actions(args.game_id)
        for number, action in enumerate(legal.actions):
            print(f"[{number}] seat {action.seat}: {action.description}")
        if not legal.actions:
            print("no legal action for your seats now")
    return 0


def cmd_act(args: argparse.Namespace) -> int:
    with connect(args, args.token) as client:
        legal = client.list_legal_actions(args.game_id)
        if not 0 <= args.number < len(legal.actions):
            raise SystemExit(f"strata: no action number {args.number}")
        action = legal.actions[args.number]
        result = client.submit_command(
            args.game_id, action.seat, action.command, expected_version=legal.version
        )
        for event in result.events:
            print(_event_line(event))
    return 0


def _event_line(event: pb.Event) -> str:
    body = event.WhichOneof("body")
    inner: Any = getattr(event, body) if body else None
    if body == "game_event":
        which = inner.WhichOneof("game")
        inner = getattr(inner, which)
        which_event = inner.WhichOneof("event")
        inner = getattr(inner, which_event) if which_event else inner
    text = text_format.MessageToString(inner, as_one_line=True) if inner else ""
    return f"v{event.version} {event.type} {text}".rstrip()


def cmd_watch(args: argparse.Namespace) -> int:
    with connect(args, args.token) as client:
        for event in client.watch_game(args.game_id, args.from_version, follow=True):
            print(_event_line(event), flush=True)
    return 0


def cmd_events(args: argparse.Namespace) -> int:
    with connect(args, args.token) as client:
        for event in client.watch_game(args.game_id, args.from_version, follow=False):
            print(json.dumps(json_format.MessageToDict(event), sort_keys=True))
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    with connect(args, args.token) as client:
        for step in client.replay_game(
            args.game_id, args.from_version, args.to_version
        ):
            print(_event_line(step.event), flush=True)
    return 0


def cmd_record(args: argparse.Namespace) -> int:
    with connect(args, args.token) as client:
        record = client.export_player_record(args.game_id)
    text = json.dumps(record, indent=1, ensure_ascii=False) + "\n"
    if args.output == "-":
        sys.stdout.write(text)
        return 0
    path = Path(args.output or f"{args.game_id}.record.json")
    path.write_text(text)
    print(f"{path}: {len(record['events'])} events, {len(record['commands'])} commands")
    return 0


def cmd_verify_offline(path: str) -> int:
    """``strata verify --offline FILE``: 0 when the record verifies."""
    from domain.fairness import verify_record

    try:
        record = json.loads(Path(path).read_text())
    except (OSError, ValueError) as error:
        raise SystemExit(f"strata: cannot read {path}: {error}") from None
    if not isinstance(record, dict):
        raise SystemExit(f"strata: {path} is not a player's record")
    check = verify_record(record)
    print(f"{path}: {check.message}")
    return 0 if check.ok else 1


def cmd_verify(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    if args.offline:
        return cmd_verify_offline(args.offline)
    if not args.token:
        raise SystemExit("strata: verify needs the admin token ($STRATA_ADMIN_TOKEN)")
    if bool(args.all) == bool(args.game_id):
        raise SystemExit("strata: give a GAME_ID or --all")
    with connect(args, args.token) as client:
        ids = (
            [g.game_id for g in client.all_games(args.game)]
            if args.all
            else [args.game_id]
        )
        counts: dict[str, int] = {}
        failures = []
        for game_id in tqdm(ids, desc="verifying", unit="game", disable=len(ids) < 2):
            result = client.verify_game(game_id)
            verdict = admin_pb.Verdict.Name(result.verdict).removeprefix("VERDICT_")
            counts[verdict] = counts.get(verdict, 0) + 1
            if result.verdict != admin_pb.VERDICT_VERIFIED:
                failures.append(result)
        for result in failures:
            verdict = admin_pb.Verdict.Name(result.verdict).removeprefix("VERDICT_")
            print(
                f"{result.game_id}: {verdict.lower()} at version "
                f"{result.mismatch_version}: {result.message}"
            )
        summary = ", ".join(f"{n} {v.lower()}" for v, n in sorted(counts.items()))
        print(f"verified {len(ids)} game(s): {summary or 'none'}")
    return 1 if failures else 0


def cmd_export(args: argparse.Namespace) -> int:
    with connect(args, args.token) as client:
        exported = client.export_game(args.game_id)
        path = args.output or exported.file_name
        with open(path, "wb") as out:
            out.write(exported.document)
        print(path)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    with open(args.file, "rb") as source:
        document = source.read()
    with connect(args, args.token) as client:
        imported = client.import_game(document, args.game_id, trust=args.trust)
        verdict = admin_pb.Verdict.Name(imported.verification.verdict)
        print(
            f"{imported.game_id} version {imported.version}: "
            f"{verdict.removeprefix('VERDICT_').lower()}"
        )
    return 0 if imported.verification.verdict == admin_pb.VERDICT_VERIFIED else 1


def cmd_audit(args: argparse.Namespace) -> int:
    with connect(args, args.token) as client:
        log = client.get_audit_log(args.game_id)
        commands = {c.first_version: c for c in log.commands if c.accepted}
        for event in log.events:
            command = commands.get(event.version)
            if command is not None:
                print(
                    f"  command {command.command_id} by {command.actor} "
                    f"(seat {command.seat}) at "
                    f"{command.recorded_at.ToDatetime().isoformat()}"
                )
            print(_event_line(event))
        refused = [c for c in log.commands if not c.accepted]
        for command in refused:
            print(
                f"refused {command.command_id} by {command.actor} at version "
                f"{command.decided_at_version}: {command.error_reason}"
            )
    return 0


#: How many events `strata follow` asks for a message (the service's most).
FOLLOW_BATCH = 500


def cmd_follow(args: argparse.Namespace) -> int:
    with connect(args, args.token) as client:
        for item in client.follow_log(
            args.after_position,
            args.game,
            args.event,
            follow=not args.no_follow,
            max_batch=FOLLOW_BATCH,
        ):
            for event in item.events:
                data = json_format.MessageToDict(event)
                print(json.dumps(data, sort_keys=True), flush=True)
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    with connect(args, args.token) as client:
        response = client.get_statistics(args.game)
        print(json.dumps(json_format.MessageToDict(response), indent=2, sort_keys=True))
    return 0


# -- the balance lab ------------------------------------------------------------------

SIMULATE_HELP = "Play many games of bots in-process and report balance figures."


def _add_simulate(sim: argparse.ArgumentParser) -> None:
    sim.add_argument("--game", required=True, help="game type id")
    sim.add_argument("--games", type=int, default=1000, help="how many games")
    sim.add_argument("--players", type=int, required=True)
    sim.add_argument(
        "--bots",
        default="random",
        help="bot kinds (levels: random, heuristic, strong) for the seats in "
        "turn, cycled (e.g. strong,heuristic,heuristic)",
    )
    sim.add_argument(
        "--acting-order",
        choices=["seat", "random", "both"],
        default="seat",
        help="who acts first when several seats may: the lowest seat (as the "
        "service's bots do), one drawn at random for every decision, or both "
        "(every game played each way; the report gives seat win rates by order)",
    )
    sim.add_argument(
        "--rotate", action="store_true", help="shift the bots one seat per game"
    )
    sim.add_argument(
        "--strong-samples",
        type=int,
        default=0,
        help="samples the strong bot searches a move (default: its own budget)",
    )
    sim.add_argument(
        "--strong-candidates",
        type=int,
        default=0,
        help="moves the strong bot plays out in each sample (default: its own)",
    )
    sim.add_argument("--seed", default="strata", help="game i is seeded SEED/i")
    sim.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a game option (repeatable; VALUE is JSON or a string)",
    )
    sim.add_argument("--processes", type=int, default=0, help="default: every core")
    sim.add_argument("--report", help="write the report (JSON) to this file")
    sim.add_argument("--per-game", action="store_true", help="list every game too")
    sim.add_argument("--plot", help="write PNG charts into this directory")
    sim.add_argument("--quiet", action="store_true", help="no progress bar")


def cmd_simulate(args: argparse.Namespace) -> int:
    from pathlib import Path

    from tqdm import tqdm

    from clients import simulate

    options: dict[str, Any] = {}
    for pair in args.option:
        key, sep, raw = pair.partition("=")
        if not sep:
            raise SystemExit(f"strata: --option needs KEY=VALUE, got {pair!r}")
        try:
            options[key] = json.loads(raw)
        except json.JSONDecodeError:
            options[key] = raw
    plan = simulate.Plan(
        game_type=args.game,
        players=args.players,
        games=args.games,
        seed=args.seed,
        bots=tuple(k.strip() for k in args.bots.split(",") if k.strip()),
        rotate=args.rotate,
        options=options,
        acting_order=args.acting_order,
        strong_samples=args.strong_samples,
        strong_candidates=args.strong_candidates,
    )
    try:
        plan.check()
    except (ValueError, KeyError) as error:
        raise SystemExit(f"strata: {error}") from None
    if args.plot and not simulate.can_plot():
        print(
            f"strata: --plot needs matplotlib: {simulate.INSTALL_LAB}", file=sys.stderr
        )
        return 2
    began = time.monotonic()
    with tqdm(
        total=plan.total, desc=plan.game_type, unit="game", disable=args.quiet
    ) as bar:
        records = simulate.run(plan, args.processes, bar.update)
    data = simulate.report(plan, records, per_game=args.per_game)
    text = simulate.dumps(data)
    if args.report:
        Path(args.report).write_text(text)
    else:
        sys.stdout.write(text)
    if args.plot:
        for path in simulate.plot(data, Path(args.plot)):
            print(f"chart: {path}", file=sys.stderr)
    seconds = time.monotonic() - began
    print(
        f"{plan.total} games in {seconds:.1f}s "
        f"({plan.total / max(seconds, 1e-9):.0f} games/s)",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
