"""Dinosaurs Extinct? in words: the web table's ``games/dinosaurs_extinct.js``
(its status, its commands' labels and its events' sentences) for the
terminal."""

from __future__ import annotations

from clients.words.text import Ctx, Json, enum_words, seat_of

SPACES = {
    "SPACE_PREHISTORIC_ERA": "Prehistoric Era",
    "SPACE_FOOTPRINT": "Footprint",
    "SPACE_EARTH_EVENT": "Earth Event",
    "SPACE_NO_BONES_ON_ME": "No Bones on Me",
    "SPACE_DINO_SWITCH": "Dino Switch",
    "SPACE_TIME_WARP": "Time Warp",
    "SPACE_TWENTY_FIRST_CENTURY": "21st Century",
}

PURPOSES = {
    "ROLL_PURPOSE_MOVE": "to move",
    "ROLL_PURPOSE_EARTH_EVENT": "against the Earth Event",
    "ROLL_PURPOSE_CHALLENGE": "in the Dino Challenge",
}

TITLE = "Dinosaurs Extinct?"


def dino(ctx: Ctx, seat: int) -> Json:
    found: Json = next(
        (d for d in ctx.view.get("dinos") or [] if seat_of(d.get("seat")) == seat),
        {},
    )
    return found


def dino_name(ctx: Ctx, seat: int) -> str:
    return f"{ctx.who(seat)}'s {dino(ctx, seat).get('name') or 'Dino'}"


def space_name(ctx: Ctx, step: int | None) -> str:
    board = ctx.view.get("board") or []
    at = step or 0
    space = board[at] if at < len(board) else None
    return f"step {at}{f' ({SPACES[space]})' if space else ''}"


def status(ctx: Ctx) -> str:
    v = ctx.view
    if v.get("phase") == "PHASE_CHOOSE_SWITCH":
        return "A Dino Switch is waiting for its choice."
    if v.get("phase") == "PHASE_ROLL":
        return f"{ctx.who(seat_of(v.get('turn')))} rolls next."
    return enum_words(v.get("phase"), "PHASE_")


def table(ctx: Ctx) -> list[str]:
    """Each Dino where it is, as the page's players table has it."""
    overlays = ctx.view.get("lifeCardOverlays") or 0
    return [
        f"{ctx.who(seat_of(d.get('seat')))}: {d.get('name')}, on "
        f"{space_name(ctx, d.get('step'))}, {d.get('bones') or 0} of {overlays} "
        f"bones, heading {enum_words(d.get('heading'), 'HEADING_').lower()}"
        for d in ctx.view.get("dinos") or []
    ]


def label(key: str, c: Json, ctx: Ctx) -> str:
    if key == "rollDie":
        return "Roll the die"
    if key == "switchWith":
        t = seat_of(c.get("targetSeat"))
        return (
            f"Switch places with {dino_name(ctx, t)} "
            f"(on {space_name(ctx, dino(ctx, t).get('step'))})"
        )
    return ""


def describe(key: str, e: Json, ctx: Ctx) -> str | None:  # noqa: C901 (a table)
    def who(seat: int | None) -> str:
        return dino_name(ctx, seat or 0)

    def bones(n: int) -> str:
        return f"{n} bone{'' if n == 1 else 's'}"

    match key:
        case "earthEventsShuffled":
            return f"The {e.get('cards') or 14} Earth Event cards were shuffled."
        case "dieRolled":
            purpose = PURPOSES.get(e.get("purpose") or "", "")
            return f"{who(e.get('seat'))} rolled a {e.get('value') or 0} {purpose}."
        case "dinoMoved":
            heading = enum_words(e.get("heading"), "HEADING_").lower()
            return (
                f"{who(e.get('seat'))} moved {heading} from "
                f"{space_name(ctx, e.get('fromStep'))} to "
                f"{space_name(ctx, e.get('toStep'))}."
            )
        case "dinoEnteredTwentyFirstCentury":
            return f"{who(e.get('seat'))} entered the 21st Century!"
        case "dinoLeftRace":
            return f"{who(e.get('seat'))} left the race: its player left the game."
        case "dinoSwitchLapsed":
            return (
                f"{who(e.get('seat'))}'s Dino Switch lapsed: its player left the game."
            )
        case "lifeCardRecharged":
            return (
                f"{who(e.get('seat'))} landed on No Bones on Me: "
                "its Life Card is recharged."
            )
        case "earthEventDrawn":
            return (
                f'{who(e.get("seat"))} drew the Earth Event "{e.get("name")}": '
                f"roll higher than {e.get('number') or 0}."
            )
        case "earthEventSurvived":
            return f"{who(e.get('seat'))} survived the Earth Event."
        case "overlayFlipped":
            shown = bones(e.get("bones") or 0)
            return f"{who(e.get('seat'))} flipped an overlay: {shown} showing."
        case "dinoWentExtinct":
            return (
                f"{who(e.get('seat'))} went extinct and starts again at the "
                "Prehistoric Era."
            )
        case "dinoChallengeBegan":
            defenders = ", ".join(who(s) for s in e.get("defenders") or [])
            return (
                f"{who(e.get('seat'))} challenged {defenders} on step "
                f"{e.get('step') or 0}."
            )
        case "dinoChallengeTied":
            tied = ", ".join(who(s) for s in e.get("seats") or [])
            return f"A tie: {tied} roll again."
        case "dinoChallengeWon":
            return f"{who(e.get('seat'))} won the Dino Challenge."
        case "dinoPushedBack":
            return (
                f"{who(e.get('seat'))} was pushed back from step "
                f"{e.get('fromStep') or 0} to step {e.get('toStep') or 0}."
            )
        case "dinoSwitchReached":
            step = e.get("step") or 0
            return f"{who(e.get('seat'))} reached a Dino Switch on step {step}."
        case "dinosSwitched":
            return (
                f"{who(e.get('seat'))} switched places with {who(e.get('targetSeat'))}."
            )
        case "dinoWarped":
            return (
                f"{who(e.get('seat'))} went through the Time Warp from step "
                f"{e.get('fromStep') or 0} to step {e.get('toStep') or 0}."
            )
        case "turnPassed":
            return f"It is {ctx.who(seat_of(e.get('seat')))}'s turn."
        case _:
            return None
