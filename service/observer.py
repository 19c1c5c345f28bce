"""What is seen of a call: its access log line, its span, its RPC metrics.

Made for every call the door (:mod:`service.door`) lets in, so made
cheaply: a method's attributes are made once per transport (not per call),
a call that no sampler records gets its ids but no span, and the calls in
flight are counted in plain integers that the metrics read when they are
collected.
"""

from __future__ import annotations

import contextvars
import functools
import hashlib
import itertools
import time
import uuid
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

import structlog
from opentelemetry import context as context_api
from opentelemetry import metrics, propagate, trace
from opentelemetry.metrics import CallbackOptions, Observation
from opentelemetry.sdk.trace.sampling import Sampler

from service import metering, telemetry
from service.errors import INTERNAL, Code, Refusal, classify

log = structlog.get_logger("strata.rpc")


class ObservedCall(Protocol):
    """What the observer reads and writes of a call (a door's ``Call``)."""

    headers: Mapping[str, str]
    peer: str
    transport: str
    request_id: str
    response_headers: dict[str, str]


class Observer:
    """The access log, the span and the RPC metrics of every call."""

    def __init__(self, access_log: str = "all") -> None:
        if access_log not in ("all", "errors", "off"):
            raise ValueError(f"access log {access_log!r}: use all, errors or off")
        self.access_log = access_log
        self.tracer = telemetry.tracer()
        #: The tracer's sampler (the SDK's): asked before a span is made, so
        #: a call nobody samples gets its ids and no span (None: ask none).
        self.sampler: Sampler | None = getattr(self.tracer, "sampler", None)
        _observe_active_calls(telemetry.meter())

    def call(
        self, request: Any, call: ObservedCall, method: str, current: bool
    ) -> _Observed:
        return _Observed(self, request, call, method, current)

    def record(self, call: ObservedCall, method: str, outcome: tuple[str, str]) -> None:
        """Record a call a transport answered without a handler (no such
        method, the wrong protocol): ``outcome`` is its code's name and its
        reason."""
        with self.call(None, call, method, current=False) as observed:
            observed.code = Code[outcome[0]]
            observed.reason = outcome[1]

    def span(self, method: _Method, headers: Mapping[str, str]) -> trace.Span:
        """The call's span: the tracer's when its sampler samples the call,
        else one that records nothing, with ids as the tracer would give it
        (the log lines' trace id; the caller's trace id when it sent one)."""
        parent = propagate.extract(headers) if "traceparent" in headers else None
        span = telemetry.dropped(
            self.sampler, method.name, parent, trace.SpanKind.SERVER, method.base
        )
        if span is not None:
            return span
        return self.tracer.start_span(
            method.name,
            context=parent,
            kind=trace.SpanKind.SERVER,
            attributes=method.base,
        )


class _Method:
    """A method's attributes on one transport, made once: its metrics'
    and span's, and those of each status it ended with; and how many of
    its calls are in flight (``strata.rpc.server.active_calls``)."""

    def __init__(self, method: str, transport: str) -> None:
        self.name = method.strip("/")
        self.base = {
            "rpc.system.name": "connectrpc" if transport == "connect" else "grpc",
            "rpc.method": self.name,
            "strata.transport": transport,
        }
        self.active = 0
        self._statuses: dict[Code, tuple[dict[str, str], metering.Series]] = {}

    def status(self, code: Code) -> tuple[dict[str, str], metering.Series]:
        """What a call that ended with ``code`` adds: the span's attributes,
        and the duration's series (the method's attributes with them)."""
        made = self._statuses.get(code)
        if made is None:
            status = {"rpc.response.status_code": code.name}
            if code is not Code.OK:
                status["error.type"] = code.name
            series = _duration().series({**self.base, **status})
            made = self._statuses[code] = (status, series)
        return made


def _duration() -> metering.Histogram:
    """``rpc.server.call.duration`` (the process's one)."""
    return telemetry.histogram(
        "rpc.server.call.duration",
        unit="s",
        description="Duration of RPCs served, by system, method and status "
        "(OpenTelemetry RPC conventions), every transport",
    )


#: The methods' attributes by (method, transport), at most :data:`METHODS`
#: (a path a caller made up past them is counted apart and not kept).
_METHODS: dict[tuple[str, str], _Method] = {}
METHODS = 4096
_active_observed: list[bool] = []


def _method(method: str, transport: str) -> _Method:
    made = _METHODS.get((method, transport))
    if made is None:
        made = _Method(method, transport)
        if len(_METHODS) < METHODS:
            _METHODS[(method, transport)] = made
    return made


def _observe_active_calls(meter: metrics.Meter) -> None:
    """``strata.rpc.server.active_calls``, read from the methods' counts
    when the metrics are collected (none written per call); once a process."""
    if _active_observed:
        return
    _active_observed.append(True)

    def observe(options: CallbackOptions) -> Iterable[Observation]:
        return [Observation(m.active, m.base) for m in list(_METHODS.values())]

    meter.create_observable_up_down_counter(
        "strata.rpc.server.active_calls",
        callbacks=[observe],
        description="Calls being served now, unary and streams, by method",
    )


class _Observed:
    """One call's observation: binds request id, method, game id (and trace
    id) to the log context of the call (context variables: each call's task
    has its own), opens its span (the current span while a unary handler
    runs, if it records), and at the end records its duration and writes
    its access line; also classifies the error that ends it."""

    def __init__(
        self,
        observer: Observer,
        request: Any,
        call: ObservedCall,
        method: str,
        current: bool,
    ) -> None:
        # Bounded before the request is checked (service.inputs): a log line
        # never holds more than a short prefix of what a caller sent.
        call.request_id = call.headers.get("x-request-id", "")[:128] or _next_id()
        call.response_headers["x-request-id"] = call.request_id
        self.observer = observer
        self.call = call
        self.method = method
        self.game_id = str(getattr(request, "game_id", "") or "")[:64]
        self.current = current
        self.code = Code.OK
        self.reason = ""
        self.sent = 0
        self._token: Any = None
        #: The call's log fields (:data:`service.telemetry.CALL_FIELDS`).
        self.fields: dict[str, str] = {}

    def __enter__(self) -> _Observed:
        call = self.call
        self.attributes = attributes = _method(self.method, call.transport)
        attributes.active += 1
        self.span = self.observer.span(attributes, call.headers)
        span_context = self.span.get_span_context()
        self.fields = {
            "request_id": call.request_id,
            "method": self.method,
            "game_id": self.game_id,
            "trace_id": format(span_context.trace_id, "032x"),
        }
        telemetry.CALL_FIELDS.set(self.fields)
        if self.current and self.span.is_recording():
            # Current for its steps' spans and SQL statements' (none are
            # made under a span that records nothing: nothing to attach).
            self._token = context_api.attach(trace.set_span_in_context(self.span))
        self.started = time.perf_counter()
        return self

    def __exit__(self, kind: Any, error: Any, traceback: Any) -> None:
        seconds = time.perf_counter() - self.started
        ms = seconds * 1000
        if self._token is not None:
            context_api.detach(self._token)
        self.attributes.active -= 1
        status, series = self.attributes.status(self.code)
        series.record(seconds)
        span = self.span
        if span.is_recording():
            if self.code is not Code.OK:
                span.set_status(trace.StatusCode.ERROR, self.reason)
                span.set_attribute("strata.reason", self.reason)
            span.set_attributes(status)
        span.end()
        mode = self.observer.access_log
        if (
            mode == "all" or (mode == "errors" and self.code is not Code.OK)
        ) and telemetry.logs_info():
            call = self.call
            log.info(
                "rpc",
                code=self.code.name,
                reason=self.reason,
                ms=round(ms, 2),
                transport=call.transport,
                peer=_peer_hash(call.peer),
                **({"sent": self.sent} if self.sent else {}),
            )
        telemetry.CALL_FIELDS.set(None)

    def context(self) -> contextvars.Context:
        """A copy of the current context with the call's span current in it
        (a stream's responses are made there: its span is never current in
        the stream's own task, whose context a closing generator may not be
        in)."""
        within = contextvars.copy_context()
        within.run(context_api.attach, trace.set_span_in_context(self.span))
        return within

    def names_game(self, game_id: object) -> None:
        """The game a call made (``CreateGame``, ``FindGame``: their
        requests name none) on the call's lines from now, the access line
        too."""
        if game_id and not self.game_id:
            self.game_id = str(game_id)[:64]
            self.fields["game_id"] = self.game_id

    def refused(self, error: BaseException) -> Refusal:
        """The refusal ``error`` is answered with (an unclassified error is
        logged with its traceback: a bug)."""
        refusal = classify(error)
        if refusal is None:
            log.error(
                "rpc.internal_error",
                method=self.method,
                transport=self.call.transport,
                exc_info=error,
            )
            self.span.record_exception(error)
            refusal = INTERNAL
        self.code = refusal.code
        self.reason = refusal.reason
        return refusal


@functools.lru_cache(maxsize=4096)
def _peer_hash(peer: str) -> str:
    """A caller's address in a log line: a short hash, not the address."""
    return hashlib.sha256(peer.encode()).hexdigest()[:12] if peer else ""


#: Request ids made here: this process's random prefix and a counter (unique
#: enough to find a call's log lines, and no system call per call).
_REQUEST_IDS = itertools.count(1)
_REQUEST_ID_PREFIX = uuid.uuid4().hex[:12]


def _next_id() -> str:
    return f"{_REQUEST_ID_PREFIX}-{next(_REQUEST_IDS):x}"


__all__ = ["ObservedCall", "Observer"]
