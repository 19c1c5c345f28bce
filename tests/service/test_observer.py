"""What is seen of a call (service/observer.py): a call no sampler records
carries its trace ids but makes no span; one it records is a span with the
method's attributes and its status; the calls in flight are counted."""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF, ALWAYS_ON, ParentBased

from service import telemetry
from service.door import Call
from service.errors import Code
from service.observer import Observer

METHOD = "/strata.v1.GameService/GetGame"
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_SPAN = "00f067aa0ba902b7"


def observer_sampled_by(root: ParentBased) -> tuple[Observer, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(sampler=root)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    observer = Observer("off")
    observer.tracer = provider.get_tracer("test")
    observer.sampler = root
    return observer, exporter


def a_call(flags: str) -> Call:
    headers = {"traceparent": f"00-{TRACE_ID}-{PARENT_SPAN}-{flags}"}
    return Call(METHOD, headers, "127.0.0.1", "test-connection")


def test_a_call_no_sampler_records_has_its_ids_and_makes_no_span() -> None:
    observer, exporter = observer_sampled_by(ParentBased(ALWAYS_OFF))

    with observer.call(None, a_call("00"), METHOD, current=True) as observed:
        inside = trace.get_current_span().get_span_context()
        logged = telemetry.call_fields()

    assert not observed.span.is_recording()
    # The log lines carry the caller's trace id; the call's span has an id
    # of its own; nothing is made current (no step span would record).
    assert logged["trace_id"] == TRACE_ID
    own = observed.span.get_span_context()
    assert format(own.trace_id, "032x") == TRACE_ID
    assert own.span_id not in (0, int(PARENT_SPAN, 16))
    assert not inside.is_valid
    assert exporter.get_finished_spans() == ()


def test_a_call_the_sampler_records_is_a_span_with_its_method_and_status() -> None:
    observer, exporter = observer_sampled_by(ParentBased(ALWAYS_ON))

    with observer.call(None, a_call("01"), METHOD, current=True) as observed:
        observed.code, observed.reason = Code.NOT_FOUND, "GAME_NOT_FOUND"
        assert trace.get_current_span() is observed.span  # its steps' parent
    with observer.call(None, a_call("01"), METHOD, current=False):
        pass

    failed, ok = exporter.get_finished_spans()
    assert format(failed.context.trace_id, "032x") == TRACE_ID
    assert failed.attributes == {
        "rpc.system.name": "grpc",
        "rpc.method": METHOD.strip("/"),
        "strata.transport": "grpc",
        "rpc.response.status_code": "NOT_FOUND",
        "error.type": "NOT_FOUND",
        "strata.reason": "GAME_NOT_FOUND",
    }
    assert failed.status.status_code is trace.StatusCode.ERROR
    assert ok.attributes is not None
    assert ok.attributes["rpc.response.status_code"] == "OK"
    assert "error.type" not in ok.attributes


def active_calls() -> str:
    lines = telemetry.prometheus_text().decode().splitlines()
    (line,) = [
        x
        for x in lines
        if x.startswith("strata_rpc_server_active_calls{")
        and 'rpc_method="strata.v1.GameService/GetGame"' in x
        and 'strata_transport="connect"' in x
    ]
    return line.rsplit(" ", 1)[1]


def test_the_calls_in_flight_are_counted_by_method_and_transport() -> None:
    observer = Observer("off")
    call = Call(METHOD, {}, "127.0.0.1", "test-connection", transport="connect")

    with observer.call(None, call, METHOD, current=False):
        with observer.call(None, call, METHOD, current=False):
            assert float(active_calls()) == 2
        assert float(active_calls()) == 1
    assert float(active_calls()) == 0
