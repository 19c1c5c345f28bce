"""A simple heuristic player for Escaping Extinction.

:func:`choose` is pure: it picks one of the legal commands using only what
the seat's view shows (never the state), so it could sit behind the public
API. Its plan, for the Dino whose turn it is:

0. A trade a teammate offers from this seat's Dino is accepted when it
   can happen (declined when it cannot and nothing else is left to do).
1. Decisions first: keep Wood over Vines, let Terry redraw a harmful card,
   put the second Secret Cave next to the Oasis.
2. Free moves: heal itself with Vines when low, eat Trail Mix when hungry,
   play a Burst of Energy once the turn's actions are spent, give Healing
   Herbs to a hurt teammate.
3. Actions: with the Rocket ready, go home and wait; on the Oasis,
   Resupply; collect a Rocket Part when standing on a face-up card's tile;
   carry a part, a load of Wood or a thin Food reserve home; take a
   resource lying here; walk to a known Rocket Docket tile, else to Wood
   lying about, else to the nearest face-down tile; Explore for a card
   when healthy; otherwise end the turn.

:func:`heuristic_bot` puts it behind the shared bot protocol
(:mod:`domain.bots`); it needs no chance, so the generator is unused.
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Sequence

from domain.chance import Rng
from domain.escaping_extinction.content import (
    CONTENT,
    CardEffect,
    Dino,
    Resource,
    Terrain,
)
from domain.escaping_extinction.model import (
    AcceptTrade,
    CollectRocketPart,
    Command,
    DeclineTrade,
    DinoState,
    EndTurn,
    Explore,
    GiveItem,
    HealTeammates,
    HealWithVines,
    Item,
    KeepCard,
    LeaveResource,
    LeaveSecretCaves,
    MakeRoom,
    PendingKind,
    PlaceSecretCave,
    PlayCard,
    RedrawCard,
    Resupply,
    Travel,
    TravelMode,
    View,
)

_BAD_CARDS = frozenset({CardEffect.DAMAGE, CardEffect.LOSE_FOOD, CardEffect.LAVA_FLOW})


def heuristic_bot(view: View, legal: Sequence[Command], rng: Rng) -> Command:
    """The heuristic player's choice among ``legal`` (``rng`` is unused)."""
    return choose(view, legal)


def choose(view: View, legal: Sequence[Command]) -> Command:
    """The bot's pick among ``legal`` (which must not be empty)."""
    if not legal:
        raise ValueError("no legal command to choose from")
    # A teammate asks for one of our Dino's goods: in this co-operative
    # game the bot agrees whenever the trade can happen.
    for answer in legal:
        if isinstance(answer, AcceptTrade):
            return answer
    if all(isinstance(answer, DeclineTrade) for answer in legal):
        return legal[0]
    plan = _Plan(view, legal)
    for step in (plan.decide, plan.free_move, plan.action):
        command = step()
        if command is not None:
            return command
    return plan.pick(EndTurn(plan.me.dino)) or legal[-1]


class _Plan:
    def __init__(self, view: View, legal: Sequence[Command]) -> None:
        self.view = view
        self.legal = list(legal)
        self.me: DinoState = next(d for d in view.dinos if d.dino is view.current_dino)
        self.card = CONTENT.dinos[self.me.dino]

    def pick(self, command: Command) -> Command | None:
        return command if command in self.legal else None

    # -- decisions -------------------------------------------------------------

    def decide(self) -> Command | None:
        pending = self.view.pending
        if pending is None:
            return None
        me = self.me.dino
        if pending.kind is PendingKind.MAKE_ROOM:
            if (
                pending.resource is Resource.WOOD
                and self.me.vines > self.vines_needed()
            ):
                return self.pick(MakeRoom(me, Resource.VINE)) or LeaveResource(me)
            if (
                pending.resource is Resource.VINE
                and self.me.vines < self.vines_needed()
            ):
                return self.pick(MakeRoom(me, Resource.WOOD)) or LeaveResource(me)
            return LeaveResource(me)
        if pending.kind is PendingKind.REDRAW:
            effect = CONTENT.exploration[pending.card].effect
            return RedrawCard(me) if effect in _BAD_CARDS else KeepCard(me)
        for position in range(1, 7):
            place = self.view.places[position]
            if place.terrain in (Terrain.TARPIT, Terrain.VOLCANO):
                continue
            command = self.pick(PlaceSecretCave(me, position))
            if command is not None:
                return command
        return self.pick(LeaveSecretCaves(me)) or self.legal[0]

    # -- free moves --------------------------------------------------------------

    def free_move(self) -> Command | None:
        me = self.me
        if me.health == 0:
            return self.pick(HealWithVines(me.dino, me.dino)) or EndTurn(me.dino)
        if me.health <= 2:
            command = self.pick(HealWithVines(me.dino, me.dino))
            if command is not None:
                return command
        home = self.distances({0})
        for other in self.stranded():
            spare = me.food - home[me.position] - self.tarpit_extra()
            if other.position == me.position and spare > 0:
                command = self.pick(GiveItem(me.dino, other.dino, Item.FOOD))
                if command is not None:
                    return command
        for card in me.held_cards:
            effect = CONTENT.exploration[card].effect
            if (effect is CardEffect.TRAIL_MIX and me.food <= self.card.energy - 2) or (
                effect is CardEffect.BURST_OF_ENERGY and self.view.actions_left == 0
            ):
                command = self.pick(PlayCard(me.dino, card, me.dino))
            elif effect is CardEffect.HEALING_HERBS:
                hurt = [
                    d
                    for d in self.view.dinos
                    if d.position == me.position and d.health <= 3
                ]
                command = (
                    self.pick(PlayCard(me.dino, card, hurt[0].dino)) if hurt else None
                )
            else:
                command = None
            if command is not None:
                return command
        return None

    # -- actions ---------------------------------------------------------------------

    def action(self) -> Command | None:
        view, me = self.view, self.me
        if view.actions_left == 0:
            return None
        ready = (
            view.launchpad_parts >= CONTENT.launch_parts
            and view.launchpad_wood >= CONTENT.launch_wood
        )
        if ready:
            if me.position != 0:
                return self.go_to({0})
            return self.rescue(self.distances({0}))
        command = self.resupply() or self.collect()
        if command is not None:
            return command
        if self.must_go_home():
            return self.go_to({0})
        for step in (
            self.rescue_without_part,
            self.heal_teammates,
            self.take_resource,
            self.go_to_targets,
            self.refill_or_explore,
        ):
            command = step()
            if command is not None:
                return command
        return None

    @functools.cached_property
    def paying(self) -> bool:
        """Wood a face-up card asks for is carried to it, not unloaded."""
        me = self.me
        return me.wood > 0 and not me.rocket_part and self.docket_wood() > 0

    @functools.cached_property
    def home(self) -> dict[int, int]:
        return self.distances({0})

    def resupply(self) -> Command | None:
        me = self.me
        if me.position != 0:
            return None
        command = self.pick(Resupply(me.dino))
        useful = me.rocket_part or me.food < self.card.energy or me.wood > 0
        if self.paying:
            useful = me.food < 2
        return command if useful else None

    def collect(self) -> Command | None:
        me = self.me
        for card in self.view.rocket_docket_open:
            command = self.pick(CollectRocketPart(me.dino, card))
            if command is not None and me.health > CONTENT.docket[card].damage:
                return command
        return None

    def must_go_home(self) -> bool:
        """A part, a load of Wood or a thin Food reserve goes home."""
        me = self.me
        return me.position != 0 and (
            me.rocket_part
            or (
                not self.paying
                and me.wood >= min(3, max(1, self.wood_needed() + me.wood))
            )
            or me.food <= self.home[me.position] + self.tarpit_extra()
        )

    def rescue_without_part(self) -> Command | None:
        return None if self.me.rocket_part else self.rescue(self.home)

    def heal_teammates(self) -> Command | None:
        me = self.me
        if me.dino is not Dino.SARA:
            return None
        hurt = any(d.position == me.position and d.health <= 3 for d in self.view.dinos)
        return self.pick(HealTeammates(me.dino)) if hurt else None

    def take_resource(self) -> Command | None:
        here = self.view.places[self.me.position]
        if (
            here.token is not None
            and self.has_room(here.token)
            and (here.token is not Resource.WOOD or self.wood_needed() > 0)
        ):
            return self.pick(Explore(self.me.dino))
        return None

    def go_to_targets(self) -> Command | None:
        for targets in self.targets():
            if targets and (command := self.go_to(targets)):
                return command
        return None

    def refill_or_explore(self) -> Command | None:
        """Nothing in reach: refill at the Oasis, else try an Exploration card."""
        me = self.me
        if me.position != 0 and me.food < self.card.energy:
            command = self.go_to({0})
            if command is not None:
                return command
        if me.health >= 4:
            return self.pick(Explore(me.dino))
        return None

    def rescue(self, home: dict[int, int]) -> Command | None:
        """Walk Food to a stranded teammate (given once on its tile)."""
        stranded = {d.position for d in self.stranded()}
        if not stranded:
            return None
        reach = self.distances(stranded)[self.me.position]
        if self.me.food >= reach + home[self.me.position] + 2:
            return self.go_to(stranded)
        return None

    def tarpit_extra(self) -> int:
        here = self.view.places[self.me.position]
        return 1 if here.terrain is Terrain.TARPIT else 0

    def stranded(self) -> list[DinoState]:
        """Teammates out of Food away from the Oasis."""
        return [
            d
            for d in self.view.dinos
            if d.dino is not self.me.dino and d.position != 0 and d.food == 0
        ]

    def has_room(self, resource: Resource) -> bool:
        me = self.me
        if resource is Resource.FOOD:
            return me.food < self.card.energy
        return me.wood + me.vines < self.card.satchel

    def targets(self) -> list[set[int]]:
        """Places worth walking to, best first."""
        view, me = self.view, self.me
        parts: set[int] = set()
        supplies: set[int] = set()
        for card_id in view.rocket_docket_open:
            card = CONTENT.docket[card_id]
            if me.rocket_part:
                break
            lacking = [
                r
                for r, need, have in (
                    (Resource.WOOD, card.wood, me.wood),
                    (Resource.VINE, card.vines, me.vines),
                )
                if have < need
            ]
            if lacking or me.health <= card.damage:
                # Fetch what the card asks for first.
                supplies |= {p.position for p in view.places if p.token in lacking}
                continue
            parts |= {p.position for p in view.places if p.tile == card.tile}
        wood: set[int] = set()
        if self.wood_needed() > 0 and me.wood + me.vines < self.card.satchel:
            wood = {p.position for p in view.places if p.token is Resource.WOOD}
        hidden = {p.position for p in view.places if not p.revealed}
        # Leave the face-down tiles next to a teammate to that teammate.
        near_others = {
            n
            for d in view.dinos
            if d.dino is not me.dino and d.position != 0
            for n in CONTENT.neighbours[d.position]
        }
        if not view.rocket_docket_open and not view.rocket_docket_cards_left:
            return [wood, hidden]
        if view.launchpad_parts + sum(d.rocket_part for d in view.dinos) >= (
            CONTENT.launch_parts
        ):
            return [wood, hidden]
        return [parts, supplies, wood, hidden - near_others, hidden]

    def docket_wood(self) -> int:
        return max(
            (CONTENT.docket[c].wood for c in self.view.rocket_docket_open), default=0
        )

    def vines_needed(self) -> int:
        return max(
            (CONTENT.docket[c].vines for c in self.view.rocket_docket_open), default=0
        )

    def wood_needed(self) -> int:
        carried = sum(d.wood for d in self.view.dinos)
        return CONTENT.launch_wood - self.view.launchpad_wood - carried

    def blocked(self) -> set[int]:
        return {
            p.position
            for p in self.view.places
            if p.terrain in (Terrain.TARPIT, Terrain.VOLCANO) or p.lava
        }

    def distances(self, goals: set[int]) -> dict[int, int]:
        """Steps from every position to the nearest goal, avoiding hazards."""
        blocked = self.blocked() - goals
        dist = {g: 0 for g in goals}
        queue = deque(goals)
        while queue:
            at = queue.popleft()
            for nxt in CONTENT.neighbours[at]:
                if nxt in dist or nxt in blocked:
                    continue
                dist[nxt] = dist[at] + 1
                queue.append(nxt)
        # A hazard is never passed through, but a Dino on one can leave it.
        for p in blocked:
            dist[p] = 1 + min(dist.get(n, 98) for n in CONTENT.neighbours[p])
        return {p: dist.get(p, 99) for p in range(CONTENT.positions)}

    def go_to(self, goals: set[int]) -> Command | None:
        me = self.me
        dist = self.distances(goals)
        if dist[me.position] >= 99 or dist[me.position] == 0:
            return None
        home = self.distances({0})
        options = sorted(
            CONTENT.neighbours[me.position], key=lambda p: (dist[p], home[p], p)
        )
        for step in options:
            if dist[step] >= dist[me.position]:
                break
            # Never walk out of reach of the Oasis.
            cost = 1 + self.tarpit_extra()
            stuck = self.view.places[step].terrain is Terrain.TARPIT
            if step != 0 and 0 not in goals and me.food - cost < home[step] + stuck:
                continue
            for mode in (TravelMode.WALK, TravelMode.PUSH):
                command = self.pick(Travel(me.dino, step, mode))
                if command is not None:
                    return command
        return None
