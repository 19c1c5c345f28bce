"""The games' places in the service's protos: every registered game type
has a field in every ``oneof game`` of the ``strata.v1`` messages, named
like the game type, of its own package's message of that kind
(``GameCommand.game`` carries ``strata.games.<game_type>.v1.Command`` as
field ``<game_type>``)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

#: The messages of the service that carry a game's own message, and which one.
WRAPPERS = {
    "strata.v1.GameOptions": "Options",
    "strata.v1.GameScenario": "Scenario",
    "strata.v1.GameCommand": "Command",
    "strata.v1.GameView": "View",
    "strata.v1.GameEvent": "Event",
}


def game_message(game_type: str, kind: str) -> str:
    """The full name of a game's message of ``kind`` (``Command``, …)."""
    return f"strata.games.{game_type}.v1.{kind}"


def game_proto_file(game_type: str) -> str:
    """Where a game's messages are, relative to protos/."""
    return f"strata/games/{game_type}/v1/{game_type}.proto"


def _messages(file: Any) -> Iterable[Any]:
    pending = list(file.message_types_by_name.values())
    while pending:
        message = pending.pop()
        pending.extend(message.nested_types)
        yield message


def oneof_problems(files: Iterable[Any], game_types: Iterable[str]) -> list[str]:
    """What is missing or wrong in the ``oneof game`` of the messages of
    ``files`` (file descriptors) for ``game_types``; empty when all is well."""
    games = sorted(game_types)
    found: dict[str, dict[str, str]] = {}
    for file in files:
        for message in _messages(file):
            oneof = message.oneofs_by_name.get("game")
            if oneof is not None:
                found[message.full_name] = {
                    field.name: field.message_type.full_name
                    if field.message_type
                    else ""
                    for field in oneof.fields
                }
    problems = [
        f"{name} has a `oneof game` that WRAPPERS does not list"
        for name in sorted(set(found) - set(WRAPPERS))
    ]
    for wrapper, kind in WRAPPERS.items():
        fields = found.get(wrapper)
        if fields is None:
            problems.append(f"{wrapper}: no `oneof game`")
            continue
        for game_type in games:
            want = game_message(game_type, kind)
            have = fields.get(game_type)
            if have is None:
                problems.append(f"{wrapper}.game: no field `{want} {game_type}`")
            elif have != want:
                problems.append(f"{wrapper}.game.{game_type} is {have}, not {want}")
        for name in sorted(set(fields) - set(games)):
            problems.append(f"{wrapper}.game.{name}: not a registered game type")
    return problems


def add_to_oneofs(service: str, game_type: str, title: str) -> str:
    """game_service.proto with the doc's step "The service's oneofs" done:
    the import, and one field at the end of every ``oneof game``."""
    imports = re.findall(r'^import "strata/games/.*";$', service, re.M)
    block = "\n".join(imports)
    assert block in service  # one block, in order
    imports.append(f'import "{game_proto_file(game_type)}";')
    service = service.replace(block, "\n".join(sorted(imports)))

    def add(match: re.Match[str]) -> str:
        body = match.group(2)
        number = max(int(n) for n in re.findall(r" = (\d+);", body)) + 1
        kind = re.findall(r"strata\.games\.\w+\.v1\.(\w+) ", body)[0]
        entry = (
            f"\n    // {kind} of {title}."
            f"\n    strata.games.{game_type}.v1.{kind} {game_type} = {number};"
        )
        return match.group(1) + body + entry + match.group(3)

    return re.sub(r"(  oneof game \{\n)(.*?)(\n  \})", add, service, flags=re.S)
