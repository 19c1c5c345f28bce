"""Who calls: tokens, their hashes, and the caller a call comes from."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import hmac
import secrets
from typing import Any

from domain.rules import Role, Viewer
from domain.session import SessionState

#: Every seat token begins with this: a token never looks like a command-line
#: option (``--token $TOKEN``), and a leaked one is easy to find in secret
#: scans. Tokens issued before the prefix keep working: only their hashes are
#: stored, whatever their form.
SEAT_TOKEN_PREFIX = "st_"


def new_seat_token() -> str:
    """A fresh secret seat token: the prefix and 256 random bits."""
    return SEAT_TOKEN_PREFIX + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    """The stored form of a seat token."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclasses.dataclass(frozen=True)
class Caller:
    """Who is calling: the bearer token (empty for none) and whether it is
    the admin token. ``bot`` marks the service's own bot runner, which acts
    for bot seats only (no token can: their token hash is empty).
    ``service`` marks the service acting on its own account for any seat
    (a timeout: :mod:`service.clocks`)."""

    token: str = ""
    admin: bool = False
    bot: bool = False
    #: The caller's network address without its port (``""`` in process):
    #: who an anonymous caller is, for keys and quotas.
    peer: str = ""
    service: bool = False

    @functools.cached_property
    def token_hash(self) -> str:
        # Asked for several times a command (seats, actor, view): hashed once.
        return hash_token(self.token) if self.token else ""

    @property
    def identity(self) -> str:
        """Who the caller is, for what is kept per caller (creation keys,
        quotas): the admin, a token (by its hash), else the address."""
        if self.admin:
            return "admin"
        if self.bot or self.service:
            return "bot" if self.bot else "service"
        if self.token:
            return "token:" + self.token_hash[:32]
        return "address:" + self.peer

    @property
    def anonymous(self) -> bool:
        """A caller known by its network address alone (no token)."""
        return not (self.token or self.admin or self.bot or self.service)

    def viewer(self, state: SessionState[Any]) -> Viewer:
        if self.admin:
            return Viewer.admin()
        if self.token:
            seats = state.seats_of(self.token_hash)
            if seats:
                return Viewer(seats, Role.PLAYER)
        return Viewer.spectator()


class Callers:
    """Tells the admin token from the others."""

    def __init__(self, admin_token: str = "") -> None:
        self._admin_hash = hash_token(admin_token) if admin_token else ""

    def caller(self, token: str, peer: str = "") -> Caller:
        """The caller a bearer token names (constant-time admin check),
        calling from ``peer`` (its address, without the port)."""
        if not token:
            return Caller(peer=peer)
        caller = Caller(token=token, peer=peer)
        if self._admin_hash and hmac.compare_digest(
            caller.token_hash, self._admin_hash
        ):
            caller = Caller(token=token, admin=True, peer=peer)
        return caller


def actor_of(caller: Caller, state: SessionState[Any], seat: int) -> str:
    """Who the command log says acted."""
    if caller.admin:
        return "admin"
    if caller.service:
        return "service"
    info = state.seats[seat] if 0 <= seat < len(state.seats) else None
    if caller.bot and info is not None:
        return f"bot:{info.bot}"
    return caller.token_hash[:16]


def acts_for(caller: Caller, state: SessionState[Any]) -> frozenset[int]:
    """The seats ``caller`` may act for (the bot runner: the bot seats; the
    service on its own account: every seat)."""
    if caller.service:
        return frozenset(range(len(state.seats)))
    if caller.bot:
        return frozenset(
            i for i, s in enumerate(state.seats) if s is not None and s.bot
        )
    return state.seats_of(caller.token_hash)
