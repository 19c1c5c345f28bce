"""Event times reach the wire as protobuf's own conversion would put them."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta, timezone

from google.protobuf.timestamp_pb2 import Timestamp

from service.answers import _timestamp


def test_event_times_convert_as_protobuf_converts_them():
    rng = random.Random(7)
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    times = [epoch, epoch - timedelta(microseconds=1), datetime(2026, 11, 30, 12)]
    for _ in range(2000):
        at = epoch + timedelta(microseconds=rng.randint(-(10**16), 10**17))
        if rng.random() < 0.3:
            at = at.astimezone(timezone(timedelta(minutes=rng.randint(-720, 720))))
        elif rng.random() < 0.2:
            at = at.replace(tzinfo=None)  # naive: both read it as UTC
        times.append(at)
    for at in times:
        expected = Timestamp()
        expected.FromDatetime(at)
        assert _timestamp(at) == (expected.seconds, expected.nanos), at
