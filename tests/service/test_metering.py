"""The hot path's histograms (service.metering) against the SDK's own: the
same measurements give the same Prometheus exposition, byte for byte, so
an operator's rules, boards and scrapes see no difference."""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from opentelemetry.exporter.prometheus import PrometheusMetricReader
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint
from opentelemetry.sdk.metrics.view import ExplicitBucketHistogramAggregation, View
from opentelemetry.sdk.resources import Resource
from prometheus_client import CollectorRegistry, generate_latest

from service import metering, telemetry

BOUNDS = telemetry.DURATION_BUCKETS
RESOURCE = Resource.create({"service.name": "strata-test"})


def exposition(family: str, registry: CollectorRegistry) -> list[str]:
    """The lines of ``family`` (and target_info) in a scrape of ``registry``."""
    text = generate_latest(registry).decode()
    return [
        line for line in text.splitlines() if family in line or "target_info" in line
    ]


def both(
    measurements: Iterable[tuple[float, dict[str, Any]]],
) -> tuple[list[str], list[str]]:
    """The scrape of the SDK's histogram and of metering's, given the same
    measurements (a fresh name: histograms are the process's)."""
    name = f"test.metering.h{uuid.uuid4().hex[:8]}"
    description = "Durations, for the comparison"
    sdk_registry, ours_registry = CollectorRegistry(), CollectorRegistry()
    sdk = MeterProvider(
        resource=RESOURCE,
        metric_readers=[PrometheusMetricReader(registry=sdk_registry)],
        views=[
            View(
                instrument_name=name,
                aggregation=ExplicitBucketHistogramAggregation(BOUNDS),
            )
        ],
    )
    # A provider with no instrument of its own: the reader's collection
    # finds nothing of the SDK's, and still gives metering's histograms.
    MeterProvider(
        resource=RESOURCE,
        metric_readers=[metering.Reader(RESOURCE, registry=ours_registry)],
    )
    instrument = sdk.get_meter("strata").create_histogram(
        name, unit="s", description=description
    )
    ours = metering.histogram(name, "s", description, BOUNDS)
    for value, attributes in measurements:
        instrument.record(value, attributes)
        ours.record(value, attributes)
    family = name.replace(".", "_")
    return exposition(family, sdk_registry), exposition(family, ours_registry)


def test_the_same_measurements_give_the_same_scrape() -> None:
    # Given values on and between the bounds, past the last one, and
    # attribute sets of different keys (an OK call has no error.type)
    rng = random.Random(7)
    base = {
        "rpc.method": "GameService/SubmitCommand",
        "rpc.system.name": "grpc",
    }
    sets: list[dict[str, Any]] = [
        {**base, "rpc.response.status_code": "OK"},
        {**base, "rpc.response.status_code": "NOT_FOUND", "error.type": "NOT_FOUND"},
        {
            "rpc.method": "GameService/ListGames",
            "strata.transport": "connect",
        },
        {"http.response.status_code": 200, "http.route": "/"},
    ]
    values = [*BOUNDS, 0.0, 11.0, 0.0003]
    values += [rng.uniform(0, 0.2) for _ in range(300)]
    measurements = [(v, rng.choice(sets)) for v in values]

    # When both record them
    sdk, ours = both(measurements)

    # Then the scrapes are the same, line for line
    assert sum("_bucket{" in line for line in sdk) == len(sets) * (len(BOUNDS) + 1)
    assert ours == sdk


def test_past_the_cardinality_limit_the_same_overflow_series() -> None:
    # Given more attribute sets than a histogram keeps (a caller's made-up
    # method names)
    limit = metering.CARDINALITY_LIMIT
    measurements = [
        (0.001 * (i % 7), {"rpc.method": f"made/up{i}"}) for i in range(limit + 25)
    ]

    # When both record them
    sdk, ours = both(measurements)

    # Then both keep the limit's sets and count the rest in one overflow
    # series, the same way
    overflow = [line for line in ours if 'otel_metric_overflow="true"' in line]
    assert overflow and any(line.endswith(" 25.0") for line in overflow)
    assert ours == sdk


def test_measurements_from_threads_are_all_counted() -> None:
    # Given one series recorded into by four threads at once
    histogram = metering.histogram(
        f"test.metering.t{uuid.uuid4().hex[:8]}", "s", "threads", BOUNDS
    )
    series = histogram.series({"k": "v"})
    each = 20_000

    def run(values: Sequence[float]) -> None:
        for value in values:
            series.record(value)

    threads = [
        threading.Thread(target=run, args=([0.001 * (n + 1)] * each,)) for n in range(4)
    ]

    # When they are done
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    # Then every measurement is in the count, the buckets and the sum
    metric = histogram.metric(0)
    assert metric is not None
    (point,) = metric.data.data_points
    assert isinstance(point, HistogramDataPoint)
    assert point.count == 4 * each
    assert sum(point.bucket_counts) == 4 * each
    assert abs(point.sum - each * 0.001 * (1 + 2 + 3 + 4)) < 1e-6
    assert (point.min, point.max) == (0.001, 0.004)


def test_a_histogram_is_one_per_name() -> None:
    # Given two callers of one name (two servers in a process)
    first = metering.histogram("test.metering.once", "s", "once", BOUNDS)
    second = metering.histogram("test.metering.once", "s", "once", BOUNDS)

    # When one records
    first.series({"k": "v"}).record(0.5)

    # Then the other's series has it
    assert first is second
    assert second.series({"k": "v"}).count == 1


def test_counts_kept_in_integers_are_scraped_by_their_labels() -> None:
    # Given counts of one name asked for twice (two servers in a process)
    first = telemetry.counts(
        "test.metering.counts", ("kind", "side"), "Counts, for the test", up_down=True
    )
    second = telemetry.counts(
        "test.metering.counts", ("kind", "side"), "Counts, for the test", up_down=True
    )

    # When they go up and down
    first["a", "left"] += 2
    second["a", "left"] -= 1
    first["b", "right"] += 3

    # Then one set of counts, scraped with each count's labels
    assert first is second
    text = telemetry.prometheus_text().decode()
    lines = sorted(
        line for line in text.splitlines() if line.startswith("test_metering_counts{")
    )
    assert len(lines) == 2, lines
    assert 'kind="a"' in lines[0] and 'side="left"' in lines[0]
    assert lines[0].endswith(" 1.0")
    assert 'kind="b"' in lines[1] and lines[1].endswith(" 3.0")


def test_scrapes_at_once_each_get_every_family_once(monkeypatch: Any) -> None:
    # Given a histogram with a measurement, and collections slowed down (two
    # listeners of one process scraped at the same moment overlap)
    name = f"test.metering.at_once_{uuid.uuid4().hex[:8]}"
    metering.histogram(name, "s", "Scraped at once", BOUNDS).series({}).record(0.2)
    telemetry.prometheus_text()
    receive = metering.Reader._receive_metrics

    def slow(self: metering.Reader, *args: Any, **kwargs: Any) -> None:
        time.sleep(0.04)
        receive(self, *args, **kwargs)
        time.sleep(0.04)

    monkeypatch.setattr(metering.Reader, "_receive_metrics", slow)
    family = name.replace(".", "_") + "_seconds_count"

    # When four threads scrape at once, a little apart
    scrapes: list[str] = []

    def scrape(n: int) -> None:
        time.sleep(0.025 * n)
        scrapes.append(telemetry.prometheus_text().decode())

    threads = [threading.Thread(target=scrape, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)

    # Then each scrape has the histogram's count once
    assert len(scrapes) == 4
    for text in scrapes:
        counts = [line for line in text.splitlines() if line.startswith(family)]
        assert len(counts) == 1 and counts[0].endswith(" 1.0"), counts
