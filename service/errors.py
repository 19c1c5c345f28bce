"""Errors of the application layer, and their one mapping to gRPC status.

Domain refusals (:mod:`domain.errors`) and the application's own errors all
carry a stable ``reason``; :func:`to_status` is the single place that turns
any of them into a ``google.rpc.Status`` with an ``ErrorInfo`` (domain
``strata.games``) and, for malformed input, ``BadRequest`` violations.
"""

from __future__ import annotations

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2

from domain.errors import DomainError, InvalidCommand, NotYourSeat, RuleViolation
from eventstore.base import StoreUnavailable

ERROR_DOMAIN = "strata.games"


class AppError(Exception):
    """An error of the service with a status code and a stable reason."""

    code: grpc.StatusCode = grpc.StatusCode.FAILED_PRECONDITION

    def __init__(self, reason: str, message: str, field: str = "") -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.field = field


class InvalidArgument(AppError):
    code = grpc.StatusCode.INVALID_ARGUMENT


class NotFound(AppError):
    code = grpc.StatusCode.NOT_FOUND


class Unauthenticated(AppError):
    code = grpc.StatusCode.UNAUTHENTICATED


class PermissionDenied(AppError):
    code = grpc.StatusCode.PERMISSION_DENIED


class AlreadyExists(AppError):
    code = grpc.StatusCode.ALREADY_EXISTS


class Aborted(AppError):
    code = grpc.StatusCode.ABORTED


class Unavailable(AppError):
    code = grpc.StatusCode.UNAVAILABLE


class ResourceExhausted(AppError):
    code = grpc.StatusCode.RESOURCE_EXHAUSTED


_DOMAIN_CODES: dict[type[DomainError], grpc.StatusCode] = {
    RuleViolation: grpc.StatusCode.FAILED_PRECONDITION,
    InvalidCommand: grpc.StatusCode.INVALID_ARGUMENT,
    NotYourSeat: grpc.StatusCode.PERMISSION_DENIED,
}

_RPC_CODES = {c: getattr(code_pb2, c.name) for c in grpc.StatusCode}


def classify(error: BaseException) -> tuple[grpc.StatusCode, str, str, str] | None:
    """(status code, reason, message, field) for errors a client can cause;
    None for anything else (a bug: INTERNAL)."""
    if isinstance(error, AppError):
        return error.code, error.reason, error.message, error.field
    if isinstance(error, DomainError):
        code = _DOMAIN_CODES.get(type(error), grpc.StatusCode.FAILED_PRECONDITION)
        for kind, mapped in _DOMAIN_CODES.items():
            if isinstance(error, kind):
                code = mapped
        return code, error.reason, error.message, ""
    if isinstance(error, StoreUnavailable):
        return (
            grpc.StatusCode.UNAVAILABLE,
            "STORE_UNAVAILABLE",
            "The database is unavailable; retry later.",
            "",
        )
    return None


#: The longest message an error carries: status details travel in the
#: response's trailing metadata, whose size the transport bounds (a message
#: that repeated a long input became an unrelated transport error).
MAX_MESSAGE_CHARS = 400


def bounded(message: str) -> str:
    """``message`` cut to :data:`MAX_MESSAGE_CHARS`."""
    if len(message) <= MAX_MESSAGE_CHARS:
        return message
    return message[: MAX_MESSAGE_CHARS - 1] + "…"


def to_status(
    code: grpc.StatusCode, reason: str, message: str, field: str = ""
) -> status_pb2.Status:
    """A ``google.rpc.Status`` with ErrorInfo (and BadRequest for bad input)."""
    message = bounded(message)
    reason = reason[:64]
    field = field[:64]
    details = []
    info = any_pb2.Any()
    info.Pack(error_details_pb2.ErrorInfo(reason=reason, domain=ERROR_DOMAIN))
    details.append(info)
    if code is grpc.StatusCode.INVALID_ARGUMENT:
        bad = any_pb2.Any()
        bad.Pack(
            error_details_pb2.BadRequest(
                field_violations=[
                    error_details_pb2.BadRequest.FieldViolation(
                        field=field, description=message, reason=reason
                    )
                ]
            )
        )
        details.append(bad)
    return status_pb2.Status(code=_RPC_CODES[code], message=message, details=details)
