"""A heuristic player of Dinosaurs Extinct?.

The only choice the game leaves a player is the target of a Dino Switch
(a turn is otherwise one ``RollDie``). The bot takes the place that helps it
most and sets a rival back most: it counts its own progress after the switch
(a place beyond the last "No Bones on Me" is worth little to a Dino with
bones, which must go back there) plus the target's loss, counting double the
loss of the Dino in the lead.
"""

from __future__ import annotations

from collections.abc import Sequence

from domain.chance import Rng
from domain.dinosaurs_extinct.model import Command, DinoView, SwitchWith, View


def _progress(view: View, dino: DinoView, step: int) -> int:
    """What standing on ``step`` is worth to ``dino``."""
    if dino.bones and step > view.last_no_bones_on_me:
        return view.last_no_bones_on_me - (step - view.last_no_bones_on_me)
    return step


def heuristic_bot(view: View, legal: Sequence[Command], rng: Rng) -> Command:
    """Roll when rolling is all there is; switch with the best target."""
    switches = [c for c in legal if isinstance(c, SwitchWith)]
    if not switches:
        return legal[0]
    me = view.dinos[view.turn]
    leader = max(
        (view.dinos[c.target_seat] for c in switches),
        key=lambda d: (_progress(view, d, d.step), -d.seat),
    )

    def score(command: SwitchWith) -> int:
        target = view.dinos[command.target_seat]
        gain = _progress(view, me, target.step) - _progress(view, me, me.step)
        loss = _progress(view, target, target.step) - _progress(view, target, me.step)
        return 2 * gain + (2 if target.seat == leader.seat else 1) * loss

    return max(switches, key=score)
