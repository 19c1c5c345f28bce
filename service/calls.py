"""One call as the service sees it (:class:`Call`), whatever the transport:
what the door, the limits and the servicers know of it."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Awaitable, Callable, Mapping

from service.errors import Unauthenticated

#: The longest bearer token accepted (seat tokens have 46 characters).
MAX_TOKEN_CHARS = 256
#: A bearer token (RFC 6750's ``b64token``), at most :data:`MAX_TOKEN_CHARS`.
TOKEN_SHAPE = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


@dataclasses.dataclass
class Call:
    """One call as the service sees it: who sent it, over what, and what
    the transport lets the service know and tell of it."""

    #: ``/strata.v1.GameService/CreateGame``.
    method: str
    #: The request's metadata (HTTP headers), keys in lower case.
    headers: Mapping[str, str]
    #: The caller's network address, without its port.
    peer: str
    #: The connection the call came on (address and port, or the
    #: transport's own id): what per-connection limits count.
    connection: str
    #: ``grpc``, ``connect`` or ``grpc-web``.
    transport: str = "grpc"
    #: Seconds left before the caller's deadline (None: no deadline).
    time_remaining: Callable[[], float | None] = lambda: None
    #: Whether the caller has gone (cancelled, or the connection closed).
    done: Callable[[], bool] = lambda: False
    #: Headers to send back (the transport sends them).
    response_headers: dict[str, str] = dataclasses.field(default_factory=dict)
    #: The call's request id (set by the door).
    request_id: str = ""
    #: Whether the caller's rates were already taken (by a transport that
    #: admits the caller before it reads the request).
    rates_taken: bool = False
    #: Why the call is refused already (the transport found out before the
    #: door: a body past its bound, say); the door answers it.
    refused: BaseException | None = None
    #: Sends what the transport holds back of the responses it was given (a
    #: stream's transport that gathers them into fewer writes); the door
    #: calls it before it waits for a response not made yet.
    flush: Callable[[], Awaitable[None]] | None = None

    @property
    def token(self) -> str:
        """The token of ``authorization: Bearer <token>``, or '' when absent;
        UNAUTHENTICATED when the header or the token has the wrong shape
        (:data:`TOKEN_SHAPE`: no token the service issues or accepts looks
        otherwise, so nothing else is worth a bucket or a lookup)."""
        value = self.headers.get("authorization", "")
        if not value:
            return ""
        scheme, _, token = value.partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise Unauthenticated(
                "BAD_AUTHORIZATION", "Use `authorization: Bearer <token>`."
            )
        if len(token) > MAX_TOKEN_CHARS or not TOKEN_SHAPE.fullmatch(token):
            raise Unauthenticated(
                "TOKEN_MALFORMED",
                f"A bearer token is 1 to {MAX_TOKEN_CHARS} of the characters "
                "A-Z a-z 0-9 - . _ ~ + / (then '=' padding).",
            )
        return token

    def expired(self) -> bool:
        remaining = self.time_remaining()
        return remaining is not None and remaining <= 0
