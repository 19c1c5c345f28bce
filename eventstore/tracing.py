"""SQL in the traces: every statement an engine of the store runs is a
client span (``db.system.name``, ``db.query.text``, the server's address),
made by OpenTelemetry's own SQLAlchemy instrumentation
(``opentelemetry-instrumentation-sqlalchemy``), hooked on each engine as the
store creates it (:func:`trace_engine`).

A statement is traced only within a unit of work already traced (a call, a
bot's move, a timeout, a projection's batch): its span is a child there. The
polls of the log, the health probe and the group committer's own thread run
outside any span, and a span for each of them would be hundreds of
parentless spans a second that say nothing about a call.

The store reaches OpenTelemetry through its API only: the providers are the
process's global ones, installed by whoever runs the store (the service); a
process that installs none (a script, a migration) traces nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.context import Context
from opentelemetry.instrumentation.sqlalchemy.engine import EngineTracer
from opentelemetry.instrumentation.sqlalchemy.version import __version__
from opentelemetry.trace import Link, Span, SpanKind
from opentelemetry.util.types import Attributes
from sqlalchemy import Engine

_SCOPE = "opentelemetry.instrumentation.sqlalchemy"


class WithinTraces(trace.Tracer):
    """A tracer whose spans are only children: with no span current (or in
    ``context``), it starts none (an invalid, unrecorded span); within a
    span that records nothing (a call the sampler left out) it starts none
    either: the child of an unsampled span is never sampled, and making it
    would cost ids, a sampler's decision and a context for nothing."""

    def __init__(self, inner: trace.Tracer) -> None:
        self._inner = inner

    def start_span(
        self,
        name: str,
        context: Context | None = None,
        kind: SpanKind = SpanKind.INTERNAL,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        start_time: int | None = None,
        record_exception: bool = True,
        set_status_on_exception: bool = True,
    ) -> Span:
        if not trace.get_current_span(context).is_recording():
            return trace.INVALID_SPAN
        return self._inner.start_span(
            name,
            context,
            kind,
            attributes,
            links,
            start_time,
            record_exception,
            set_status_on_exception,
        )

    def start_as_current_span(  # type: ignore[override]
        self, name: str, context: Context | None = None, *args: Any, **kwargs: Any
    ) -> AbstractContextManager[Span]:
        current = trace.get_current_span(context)
        if not current.is_recording():
            # Nothing to record: the current span stays current (a line
            # logged in the step keeps the call's trace id).
            return nullcontext(current)
        return self._recorded(name, context, *args, **kwargs)

    @contextmanager
    def _recorded(
        self, name: str, context: Context | None, *args: Any, **kwargs: Any
    ) -> Iterator[Span]:
        end_on_exit = kwargs.pop("end_on_exit", True)
        span = self._inner.start_span(name, context, *args, **kwargs)
        with trace.use_span(span, end_on_exit=end_on_exit) as current:
            yield current


class _EngineTracer(EngineTracer):
    """The instrumentation's tracer of one engine, which looks at a
    statement only within a recorded span: outside one (nothing exported,
    a call the sampler left out) a statement costs it one check, not the
    URL's and the statement's parsing for a span nobody records."""

    def _before_cur_exec(
        self,
        conn: Any,
        cursor: Any,
        statement: Any,
        params: Any,
        context: Any,
        executemany: bool,
    ) -> tuple[Any, Any]:
        if not trace.get_current_span().is_recording():
            return statement, params
        return super()._before_cur_exec(  # type: ignore[no-any-return, no-untyped-call]
            conn, cursor, statement, params, context, executemany
        )


_made: dict[str, Any] = {}


def trace_engine(engine: Engine) -> Engine:
    """Trace the statements ``engine`` runs (see the module's docstring);
    returns ``engine``."""
    if not _made:
        # The global providers, looked up when used: the service installs
        # its own after the store is opened.
        _made["tracer"] = WithinTraces(trace.get_tracer(_SCOPE, __version__))
        _made["usage"] = metrics.get_meter(_SCOPE, __version__).create_up_down_counter(
            name="db.client.connections.usage",
            unit="connections",
            description="Connections in the state the attribute says",
        )
    _EngineTracer(_made["tracer"], engine, _made["usage"])  # type: ignore[no-untyped-call]
    return engine


__all__ = ["WithinTraces", "trace_engine"]
