"""Metrics, traces and logs: what an operator sees of a running Strata.

**Metrics** are OpenTelemetry instruments (``opentelemetry-sdk``), read by
the Prometheus exporter into this process's own registry, which
``GET /metrics`` on the HTTP listener renders. The RPC figures follow the
OpenTelemetry RPC semantic conventions (``rpc.server.call.duration`` in
seconds, by ``rpc.system.name``, ``rpc.method`` and
``rpc.response.status_code``), measured once in the door for every transport:
gRPC's own OpenTelemetry plugin and the gRPC and Connect instrumentations
each see one transport, with different attributes; the door sees all three
the same way, with the stable reason of a refusal. The other figures are
Strata's own: commands by game type and outcome, the store's append
latency and group-commit batch sizes, the projection's and the bot runner's
lag behind the log, open streams, refusals at the door, and the saturation
and business figures of :mod:`service.saturation`. The hot path's
histograms (every call's, HTTP request's and append's duration) are
counted by :mod:`service.metering`, without the SDK's per-measurement
cost, and scraped through the same translation as the SDK's own. Every series carries
the ``process`` label (:func:`set_process`), every log line ``process``
and ``pid``.

**Traces**: a span per RPC (a W3C ``traceparent`` from the caller is
honoured) with child spans for loading, deciding and appending
(:func:`step_tracer`: never a root) and for each SQL statement
(:mod:`eventstore.tracing`); one root span per run of background work
(:func:`background`). Exported over OTLP when the standard
``OTEL_EXPORTER_OTLP_ENDPOINT`` is set, nowhere otherwise; the SDK reads
its own variables (the resource, the sampler, the exporter's and the batch's
settings). The trace id is in every log line of a call.

**Logs**: every line JSON on stderr, the standard library's and grpc's
own included (:func:`configure_logging`), with the call's request id,
method, game id and trace id when there is one.

The providers are the process's global ones (set up once,
:func:`setup`): one service per process, whose library code (the store,
the application) reaches them through the OpenTelemetry API.
"""

from __future__ import annotations

import collections
import contextvars
import logging
import os
import random
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import structlog
from opentelemetry import metrics, trace
from opentelemetry.context import Context
from opentelemetry.metrics import CallbackOptions, Observation
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.view import ExplicitBucketHistogramAggregation, View
from opentelemetry.sdk.resources import OTELResourceDetector, Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.trace.sampling import (
    ALWAYS_ON,
    Decision,
    ParentBased,
    Sampler,
    SamplingResult,
)
from prometheus_client import CollectorRegistry, ProcessCollector, generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from eventstore.tracing import WithinTraces
from service import metering

SERVICE = "strata"

#: Buckets of the duration histograms, in seconds (OpenTelemetry's advice
#: for HTTP and RPC durations, with three below 5 ms: most calls are).
DURATION_BUCKETS = (
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5,
    0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
)  # fmt: skip
_BATCH = (1, 2, 4, 8, 16, 32, 64, 128, 256)
_LAG_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)

_lock = threading.Lock()
_state: dict[str, Any] = {}
#: One scrape at a time in a process: the SDK's Prometheus collector and
#: metering's reader keep what one collection gathered on themselves, so
#: two at once (two listeners' scrapes) could give one scrape a family
#: twice and the other none.
_rendering = threading.Lock()

#: Which process of a deployment this is (``serve``, ``serve-1``,
#: ``worker``): on every series (label ``process``) and every log line.
_process: dict[str, str] = {"name": os.environ.get("STRATA_PROCESS", "serve")}


def set_process(name: str) -> None:
    """Name this process (before :func:`setup`, as it starts)."""
    _process["name"] = name


def process_name() -> str:
    return _process["name"]


class _Labelled(Collector):
    """Every family of ``inner``, each sample with the process's label: a
    scrape says which process of several it reached."""

    def __init__(self, inner: CollectorRegistry) -> None:
        self.inner = inner

    def collect(self) -> Iterable[Metric]:
        name = process_name()
        for family in self.inner.collect():
            # Only Strata's own instruments (and the process collector's):
            # a library's meter (a Rust runtime's, in a client) is not ours
            # to publish.
            family.samples = [
                sample._replace(labels={**sample.labels, "process": name})
                for sample in family.samples
                if sample.labels.get("otel_scope_name", "strata").startswith("strata")
            ]
            if family.samples or family.name == "target_info":
                yield family


def setup() -> None:
    """Install the process's meter and tracer providers (once). The standard
    OpenTelemetry settings are honoured: ``OTEL_SERVICE_NAME`` and
    ``OTEL_RESOURCE_ATTRIBUTES`` (the resource), ``OTEL_TRACES_SAMPLER``
    and ``OTEL_TRACES_SAMPLER_ARG`` (which spans are recorded), the
    ``OTEL_EXPORTER_OTLP_*`` variables and ``OTEL_TRACES_EXPORTER`` (where
    spans go: ``none``, nowhere)."""
    with _lock:
        if _state:
            return
        resource = _resource()
        collected = CollectorRegistry()
        # The SDK's Prometheus reader, with the hot path's histograms
        # (service.metering: counted without the SDK) in each collection.
        reader = metering.Reader(resource, registry=collected)
        ProcessCollector(registry=collected)  # CPU, memory, descriptors
        registry = CollectorRegistry()
        registry.register(_Labelled(collected))
        views = [
            View(
                instrument_name=name,
                aggregation=ExplicitBucketHistogramAggregation(buckets),
            )
            for name, buckets in (
                ("strata.store.batch.size", _BATCH),
                ("strata.event_loop.lag", _LAG_BUCKETS),
                ("strata.bot.move.delay", DURATION_BUCKETS),
                ("strata.timeout.lateness", DURATION_BUCKETS),
                ("strata.bot.think", DURATION_BUCKETS),
            )
        ]
        metrics.set_meter_provider(
            MeterProvider(resource=resource, metric_readers=[reader], views=views)
        )
        switch = _Switch()
        # A sampler the operator chose (OTEL_TRACES_SAMPLER) is the SDK's
        # own, read from the environment; none: record once exported.
        chosen = bool(os.environ.get("OTEL_TRACES_SAMPLER"))
        tracer_provider = (
            TracerProvider(resource=resource)
            if chosen
            else TracerProvider(resource=resource, sampler=switch)
        )
        if _exports_otlp():
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
                OTLPSpanExporter,
            )

            tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
            switch.on = True
        trace.set_tracer_provider(tracer_provider)
        _state.update(
            registry=registry, tracer_provider=tracer_provider, sampler=switch
        )


def _resource() -> Resource:
    """The SDK's resource (its detectors: ``OTEL_SERVICE_NAME``,
    ``OTEL_RESOURCE_ATTRIBUTES``, ``OTEL_EXPERIMENTAL_RESOURCE_DETECTORS``),
    with Strata's defaults only for what the operator did not set:
    ``service.name`` ``strata`` and ``service.instance.id`` the process's
    name and pid (a scrape's and a log line's ``process``)."""
    chosen = OTELResourceDetector().detect().attributes
    defaults = {
        "service.name": SERVICE,
        "service.instance.id": f"{process_name()}-{os.getpid()}",
    }
    return Resource.create({k: v for k, v in defaults.items() if k not in chosen})


def _exports_otlp() -> bool:
    """Whether spans go out over OTLP: an endpoint is set
    (``OTEL_EXPORTER_OTLP_ENDPOINT`` or ``..._TRACES_ENDPOINT``) and
    ``OTEL_TRACES_EXPORTER`` does not say ``none``."""
    exporters = os.environ.get("OTEL_TRACES_EXPORTER", "otlp").lower()
    if "otlp" not in {e.strip() for e in exporters.split(",")}:
        return False
    return bool(
        os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    )


def shutdown() -> None:
    """Export what is pending (spans in a batch) before the process ends."""
    provider = _state.get("tracer_provider")
    if provider is not None:
        provider.shutdown()


def add_span_processor(processor: SpanProcessor) -> None:
    """Also hand every finished span to ``processor`` (tests: an in-memory
    exporter)."""
    setup()
    _state["tracer_provider"].add_span_processor(processor)
    _state["sampler"].on = True


class _Switch(Sampler):
    """Records spans once something takes them (an OTLP exporter, a test's
    processor), and none before: a span nobody exports costs a call for
    nothing. Unrecorded spans still have ids (the log lines' trace ids), and
    a caller's sampled ``traceparent`` is followed."""

    def __init__(self) -> None:
        self.on = False
        self._recording = ParentBased(ALWAYS_ON)

    def should_sample(self, *args: Any, **kwargs: Any) -> SamplingResult:
        if self.on:
            return self._recording.should_sample(*args, **kwargs)
        return SamplingResult(Decision.DROP)

    def get_description(self) -> str:
        return "strata: on once spans are exported"


def prometheus_text() -> bytes:
    """The metrics in Prometheus' text format."""
    setup()
    with _rendering:
        return bytes(generate_latest(_state["registry"]))


def meter() -> metrics.Meter:
    setup()
    return metrics.get_meter("strata")


def counts(
    name: str,
    labels: tuple[str, ...],
    description: str,
    unit: str = "",
    up_down: bool = False,
) -> collections.Counter[tuple[str, ...]]:
    """The process's counts of ``name`` in plain integers, by the values of
    ``labels`` (a tuple per count), read by an observable counter (an
    up-down one with ``up_down``) when the metrics are collected: nothing
    of the SDK's is called per count. Made once per name; later callers
    get the same counts."""
    made_meter = meter()
    with _lock:
        made = _COUNTS.get(name)
        if made is not None:
            return made
        made = _COUNTS[name] = collections.Counter()

    def observe(options: CallbackOptions) -> Iterable[Observation]:
        return [
            Observation(count, dict(zip(labels, values, strict=True)))
            for values, count in list(made.items())
        ]

    create = (
        made_meter.create_observable_up_down_counter
        if up_down
        else made_meter.create_observable_counter
    )
    create(name, callbacks=[observe], unit=unit, description=description)
    return made


_COUNTS: dict[str, collections.Counter[tuple[str, ...]]] = {}


def histogram(name: str, unit: str, description: str) -> metering.Histogram:
    """A duration histogram of the hot path (seconds, :data:`DURATION_BUCKETS`)
    counted without the SDK (:mod:`service.metering`), exported as the
    meter's own instruments are."""
    setup()
    return metering.histogram(name, unit, description, DURATION_BUCKETS)


def tracer() -> trace.Tracer:
    setup()
    made = _state.get("tracer")
    if made is None:
        made = _state["tracer"] = trace.get_tracer("strata")
    return made


def step_tracer() -> trace.Tracer:
    """The tracer of a unit of work's steps (load, decide, append): a step
    is a child of its call or background run, never a span of its own, and
    within a run nobody records it is no span at all."""
    return WithinTraces(tracer())


def dropped(
    sampler: Sampler | None,
    name: str,
    parent: Context | None,
    kind: trace.SpanKind,
    attributes: dict[str, str],
) -> trace.Span | None:
    """The span of a call or run that ``sampler`` leaves out: one that
    records nothing, with ids as the tracer would give it (the caller's
    trace id when ``parent`` has one: the log lines' trace id); None when
    the sampler records it, or there is no sampler to ask. Asked before a
    span is made, so a run nobody samples costs no span of the SDK's."""
    if sampler is None:
        return None
    remote = trace.get_current_span(parent).get_span_context()
    trace_id = remote.trace_id if remote.is_valid else _random_bits(128)
    # Strata's own switch, off (nothing takes spans): dropped without asking.
    if not (type(sampler) is _Switch and not sampler.on):
        decision = sampler.should_sample(parent, trace_id, name, kind, attributes)
        if decision.decision is not Decision.DROP:
            return None
    return trace.NonRecordingSpan(
        trace.SpanContext(trace_id, _random_bits(64), is_remote=False)
    )


_random_bits = random.getrandbits


@contextmanager
def background(name: str, game_id: str = "") -> Iterator[trace.Span]:
    """One run of background work (a bot's move, a timeout, a projection's
    batch, a sweep): a root span ``name`` (never a child of whatever was
    current) with ``strata.game.id`` when the run is about one game; its
    steps and SQL statements are its children."""
    attributes = {"strata.game.id": game_id} if game_id else {}
    made = tracer()
    root = Context()
    span = dropped(
        getattr(made, "sampler", None), name, root, trace.SpanKind.INTERNAL, attributes
    )
    if span is None:
        span = made.start_span(
            name, context=root, kind=trace.SpanKind.INTERNAL, attributes=attributes
        )
    with trace.use_span(span, end_on_exit=True):
        yield span


class Gauges:
    """Observable gauges whose callbacks read the running service (the
    projection's lag, open streams, …); registered once, fed by the
    sources :meth:`watch` adds."""

    def __init__(self) -> None:
        self._sources: dict[str, list[Callable[[], Iterable[Observation]]]] = {}
        self._made: set[str] = set()

    def watch(
        self,
        name: str,
        description: str,
        source: Callable[[], Iterable[Observation]],
        unit: str = "1",
    ) -> None:
        self._sources.setdefault(name, []).append(source)
        if name in self._made:
            return
        self._made.add(name)

        def observe(options: CallbackOptions) -> Iterable[Observation]:
            out: list[Observation] = []
            for read in self._sources.get(name, []):
                try:
                    out.extend(read())
                except Exception:
                    continue
            return out

        meter().create_observable_gauge(
            name, callbacks=[observe], unit=unit, description=description
        )

    def forget(self, name: str, source: Callable[[], Iterable[Observation]]) -> None:
        sources = self._sources.get(name, [])
        if source in sources:
            sources.remove(source)


GAUGES = Gauges()


# -- logs ---------------------------------------------------------------------------


#: The log fields of the call being served (request id, method, game id,
#: trace id): one context variable set per call, merged into each line
#: logged within it. structlog's own context variables cost a walk of the
#: whole context to clear them: about 3 µs a call against 0.4.
CALL_FIELDS: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar(
    "strata_call_fields", default=None
)


def call_fields() -> dict[str, str]:
    """The log fields of the call being served ({} outside one)."""
    return dict(CALL_FIELDS.get() or {})


def _merge_call_fields(_: Any, __: str, event: dict[str, Any]) -> dict[str, Any]:
    fields = CALL_FIELDS.get()
    if fields:
        for key, value in fields.items():
            event.setdefault(key, value)
    return event


def _add_trace(_: Any, __: str, event: dict[str, Any]) -> dict[str, Any]:
    """The current span's trace and span ids, on a line logged within one."""
    context = trace.get_current_span().get_span_context()
    if context.is_valid:
        event.setdefault("trace_id", format(context.trace_id, "032x"))
        event.setdefault("span_id", format(context.span_id, "016x"))
    return event


def _add_process(_: Any, __: str, event: dict[str, Any]) -> dict[str, Any]:
    """Which process wrote the line: its name in the deployment, its pid."""
    event.setdefault("process", _process["name"])
    event.setdefault("pid", _PID)
    return event


_PID = os.getpid()


#: The level lines are logged from (configure_logging's).
_LEVEL = logging.INFO


def logs_info() -> bool:
    """Whether info lines are logged (so worth making: an access line's
    fields cost something to gather)."""
    return _LEVEL <= logging.INFO


def configure_logging(level: str = "info") -> None:
    """Every log line JSON on stderr: structlog's, and the standard
    library's (grpc, uvicorn, alembic, the store's listener), with the
    call's context and trace ids."""
    numeric = getattr(logging, level.upper(), logging.INFO)
    global _LEVEL
    _LEVEL = numeric
    shared: list[Any] = [
        _merge_call_fields,
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        _add_trace,
        _add_process,
    ]
    structlog.configure(
        processors=[
            *shared,
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[*shared, structlog.stdlib.add_logger_name],
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                structlog.processors.JSONRenderer(),
            ],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(numeric)
    # uvicorn's own handlers would print plain text: hand its lines to ours.
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers[:] = []
        logger.propagate = True
