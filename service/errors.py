"""Errors of the application layer, and their one classification.

Domain refusals (:mod:`domain.errors`) and the application's own errors all
carry a stable ``reason``; :func:`classify` is the single place that decides
what any error means to a caller: a :class:`Refusal` (a status code of the
canonical set every RPC transport shares, the reason, a bounded sentence and
the field at fault), or None for a bug. The transports only translate a
refusal into their own form (:mod:`service.grpc_transport`,
:mod:`service.connect_transport`), with :func:`details` giving both the same
``google.rpc`` details: an ``ErrorInfo`` (domain ``strata.games``) and, for
malformed input, ``BadRequest`` field violations.
"""

from __future__ import annotations

import dataclasses
import enum

from google.protobuf import any_pb2
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2

from domain.errors import DomainError, InvalidCommand, NotYourSeat, RuleViolation
from eventstore.base import StoreUnavailable

ERROR_DOMAIN = "strata.games"


class Code(enum.Enum):
    """The canonical status codes (gRPC's, Connect's, google.rpc's: the same
    set under the same names and numbers)."""

    OK = 0
    CANCELLED = 1
    UNKNOWN = 2
    INVALID_ARGUMENT = 3
    DEADLINE_EXCEEDED = 4
    NOT_FOUND = 5
    ALREADY_EXISTS = 6
    PERMISSION_DENIED = 7
    RESOURCE_EXHAUSTED = 8
    FAILED_PRECONDITION = 9
    ABORTED = 10
    OUT_OF_RANGE = 11
    UNIMPLEMENTED = 12
    INTERNAL = 13
    UNAVAILABLE = 14
    DATA_LOSS = 15
    UNAUTHENTICATED = 16


class AppError(Exception):
    """An error of the service with a status code and a stable reason."""

    code: Code = Code.FAILED_PRECONDITION

    def __init__(self, reason: str, message: str, field: str = "") -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.field = field


class InvalidArgument(AppError):
    code = Code.INVALID_ARGUMENT


class NotFound(AppError):
    code = Code.NOT_FOUND


class Unauthenticated(AppError):
    code = Code.UNAUTHENTICATED


class PermissionDenied(AppError):
    code = Code.PERMISSION_DENIED


class AlreadyExists(AppError):
    code = Code.ALREADY_EXISTS


class Aborted(AppError):
    code = Code.ABORTED


class Unavailable(AppError):
    code = Code.UNAVAILABLE


class ResourceExhausted(AppError):
    code = Code.RESOURCE_EXHAUSTED


class DeadlineExceeded(AppError):
    code = Code.DEADLINE_EXCEEDED


class FailedPrecondition(AppError):
    code = Code.FAILED_PRECONDITION


_DOMAIN_CODES: dict[type[DomainError], Code] = {
    RuleViolation: Code.FAILED_PRECONDITION,
    InvalidCommand: Code.INVALID_ARGUMENT,
    NotYourSeat: Code.PERMISSION_DENIED,
}

#: The longest message an error carries: status details travel in the
#: response's trailing metadata, whose size the transport bounds (a message
#: that repeated a long input became an unrelated transport error).
MAX_MESSAGE_CHARS = 400


def bounded(message: str) -> str:
    """``message`` cut to :data:`MAX_MESSAGE_CHARS`."""
    if len(message) <= MAX_MESSAGE_CHARS:
        return message
    return message[: MAX_MESSAGE_CHARS - 1] + "…"


@dataclasses.dataclass(eq=False)
class Refusal(Exception):
    """What a caller is told of an error: the final answer of a call, which
    a transport only translates."""

    code: Code
    reason: str
    message: str
    field: str = ""

    def __str__(self) -> str:
        return f"{self.code.name} {self.reason}: {self.message}"


#: The answer to an error that is not the caller's: a bug, logged in full,
#: answered without details.
INTERNAL = Refusal(Code.INTERNAL, "INTERNAL", "internal error")


def classify(error: BaseException) -> Refusal | None:
    """The refusal a caller gets for ``error``; None for an error no client
    can cause (a bug: INTERNAL)."""
    if isinstance(error, Refusal):
        return error
    if isinstance(error, AppError):
        return _refusal(error.code, error.reason, error.message, error.field)
    if isinstance(error, DomainError):
        code = Code.FAILED_PRECONDITION
        for kind, mapped in _DOMAIN_CODES.items():
            if isinstance(error, kind):
                code = mapped
        return _refusal(code, error.reason, error.message, error.field)
    if isinstance(error, StoreUnavailable):
        return Refusal(
            Code.UNAVAILABLE,
            "STORE_UNAVAILABLE",
            "The database is unavailable; retry later.",
        )
    return None


def _refusal(code: Code, reason: str, message: str, field: str = "") -> Refusal:
    return Refusal(code, reason[:64], bounded(message), field[:64])


def details(refusal: Refusal) -> list[Message]:
    """The ``google.rpc`` details of a refusal: ErrorInfo, and BadRequest for
    malformed input."""
    out: list[Message] = []
    if refusal.code is Code.INTERNAL:
        return out
    out.append(error_details_pb2.ErrorInfo(reason=refusal.reason, domain=ERROR_DOMAIN))
    if refusal.code is Code.INVALID_ARGUMENT:
        out.append(
            error_details_pb2.BadRequest(
                field_violations=[
                    error_details_pb2.BadRequest.FieldViolation(
                        field=refusal.field,
                        description=refusal.message,
                        reason=refusal.reason,
                    )
                ]
            )
        )
    return out


def to_status(refusal: Refusal) -> status_pb2.Status:
    """A refusal as a ``google.rpc.Status`` with its details."""
    packed = []
    for detail in details(refusal):
        wrapper = any_pb2.Any()
        wrapper.Pack(detail)
        packed.append(wrapper)
    return status_pb2.Status(
        code=refusal.code.value, message=refusal.message, details=packed
    )
