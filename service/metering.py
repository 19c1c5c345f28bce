"""Histograms recorded in plain counts, exported as OpenTelemetry's own.

The SDK's ``Histogram.record`` copies, cleans and hashes the attributes of
every measurement before it counts it (8 to 20 µs a call here): on the hot
path (every RPC, every HTTP request, every command's append) that was the
largest part of what telemetry cost. A :class:`Histogram` here is told its
attribute sets ahead (:meth:`Histogram.series`, kept by the caller), and a
measurement is a bucket found by bisection and three additions under a
lock.

What an operator sees is unchanged: at each collection the
:class:`Reader` (the SDK's Prometheus reader) hands the SDK's own data and
these histograms' data points, as the SDK's data types, to the same
translation, so ``/metrics`` has the same families, names, labels
(``otel_scope_*`` included) and buckets as before. Like the SDK, a
histogram keeps at most :data:`CARDINALITY_LIMIT` attribute sets; past
them, measurements go to one set ``otel.metric.overflow=true``.
"""

from __future__ import annotations

import threading
import time
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry.exporter.prometheus import PrometheusMetricReader
from opentelemetry.sdk.metrics.export import (
    AggregationTemporality,
    HistogramDataPoint,
    Metric,
    MetricsData,
    ResourceMetrics,
    ScopeMetrics,
)
from opentelemetry.sdk.metrics.export import (
    Histogram as HistogramData,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.util.instrumentation import InstrumentationScope

#: Attribute sets a histogram keeps (the SDK's default limit).
CARDINALITY_LIMIT = 2000
_OVERFLOW: dict[str, Any] = {"otel.metric.overflow": True}


class Series:
    """One attribute set's counts: what :meth:`record` adds to."""

    __slots__ = ("_histogram", "attributes", "count", "counts", "max", "min", "sum")

    def __init__(self, histogram: Histogram, attributes: Mapping[str, Any]) -> None:
        self._histogram = histogram
        self.attributes = dict(attributes)
        self.counts = [0] * (len(histogram.bounds) + 1)
        self.count = 0
        self.sum = 0.0
        self.min = float("inf")
        self.max = float("-inf")

    def record(self, value: float) -> None:
        """Count one measurement (the SDK's buckets: ``(bound[i-1], bound[i]]``)."""
        index = bisect_left(self._histogram.bounds, value)
        with self._histogram.lock:
            self.counts[index] += 1
            self.count += 1
            self.sum += value
            if value < self.min:
                self.min = value
            if value > self.max:
                self.max = value


class Histogram:
    """A histogram of explicit buckets, one :class:`Series` per attribute
    set; made once per name in a process (:func:`histogram`)."""

    def __init__(
        self,
        name: str,
        unit: str,
        description: str,
        bounds: Sequence[float],
        scope: str = "strata",
    ) -> None:
        self.name = name
        self.unit = unit
        self.description = description
        self.bounds = tuple(float(b) for b in bounds)
        self.scope = scope
        self.lock = threading.Lock()
        self.started = time.time_ns()
        self._series: dict[frozenset[tuple[str, Any]], Series] = {}

    def series(self, attributes: Mapping[str, Any] | None = None) -> Series:
        """The series of ``attributes`` (made on first use; past
        :data:`CARDINALITY_LIMIT` sets, the overflow series). Callers keep
        what this returns: it hashes the attributes."""
        key = frozenset((attributes or {}).items())
        made = self._series.get(key)
        if made is None:
            with self.lock:
                made = self._series.get(key)
                if made is None:
                    if len(self._series) >= CARDINALITY_LIMIT:
                        key = frozenset(_OVERFLOW.items())
                        attributes = _OVERFLOW
                        made = self._series.get(key)
                    if made is None:
                        made = self._series[key] = Series(self, attributes or {})
        return made

    def record(self, value: float, attributes: Mapping[str, Any] | None = None) -> None:
        """Count ``value`` under ``attributes`` (hashes them: where the set
        is known ahead, keep its :meth:`series` and record there)."""
        self.series(attributes).record(value)

    def metric(self, now: int) -> Metric | None:
        """The counts so far, as the SDK's data (cumulative); None before
        any measurement."""
        with self.lock:
            points = [
                HistogramDataPoint(
                    attributes=dict(s.attributes),
                    start_time_unix_nano=self.started,
                    time_unix_nano=now,
                    count=s.count,
                    sum=s.sum,
                    bucket_counts=list(s.counts),
                    explicit_bounds=self.bounds,
                    min=s.min,
                    max=s.max,
                )
                for s in self._series.values()
                if s.count
            ]
        if not points:
            return None
        return Metric(
            name=self.name,
            description=self.description,
            unit=self.unit,
            data=HistogramData(
                data_points=points,
                aggregation_temporality=AggregationTemporality.CUMULATIVE,
            ),
        )


_lock = threading.Lock()
_HISTOGRAMS: dict[str, Histogram] = {}


def histogram(
    name: str,
    unit: str,
    description: str,
    bounds: Sequence[float],
    scope: str = "strata",
) -> Histogram:
    """The process's histogram ``name`` (made by the first caller: as the
    SDK's meter gives one instrument per name)."""
    with _lock:
        made = _HISTOGRAMS.get(name)
        if made is None:
            made = _HISTOGRAMS[name] = Histogram(name, unit, description, bounds, scope)
        return made


def collected(now: int | None = None) -> list[ScopeMetrics]:
    """Every histogram's data, by scope, as the SDK's data."""
    now = time.time_ns() if now is None else now
    scopes: dict[str, list[Metric]] = {}
    for made in list(_HISTOGRAMS.values()):
        metric = made.metric(now)
        if metric is not None:
            scopes.setdefault(made.scope, []).append(metric)
    return [
        ScopeMetrics(scope=InstrumentationScope(name), metrics=metrics, schema_url="")
        for name, metrics in scopes.items()
    ]


class Reader(PrometheusMetricReader):
    """The SDK's Prometheus reader, with this module's histograms added to
    each collection (the same translation to Prometheus' families)."""

    def __init__(self, resource: Resource, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._resource = resource
        self._received = False

    def collect(self, timeout_millis: float = 10_000) -> None:  # type: ignore[misc]
        """The SDK's collection, and these histograms' even when the SDK
        has nothing (it then does not call :meth:`_receive_metrics`)."""
        self._received = False
        super().collect(timeout_millis)
        if not self._received:
            self._receive_metrics(None, timeout_millis)

    def _receive_metrics(
        self,
        metrics_data: MetricsData | None,
        timeout_millis: float = 10_000,
        **kwargs: Any,
    ) -> None:
        self._received = True
        ours = collected()
        if ours:
            resources = list(metrics_data.resource_metrics) if metrics_data else []
            if resources:
                first = resources[0]
                resources[0] = ResourceMetrics(
                    resource=first.resource,
                    scope_metrics=[*first.scope_metrics, *ours],
                    schema_url=first.schema_url,
                )
            else:
                resources = [
                    ResourceMetrics(
                        resource=self._resource, scope_metrics=ours, schema_url=""
                    )
                ]
            metrics_data = MetricsData(resource_metrics=resources)
        if metrics_data is not None:
            super()._receive_metrics(metrics_data, timeout_millis, **kwargs)


__all__ = ["CARDINALITY_LIMIT", "Histogram", "Reader", "Series", "histogram"]
