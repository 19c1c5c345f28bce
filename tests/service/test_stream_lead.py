"""How far a stream's responses are made ahead of a slow reader: a bounded
lead in responses and in events. A follower of FollowLog in batches of 500
that stops reading holds at most ``AHEAD_EVENTS`` events and one batch in
the server (it was 64 batches, 32,000 events), while one event a message
still runs 64 messages ahead."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import AsyncIterator

from strata.v1 import game_service_pb2 as game_pb
from strata.v1 import integration_service_pb2 as integration_pb

from service import door


def _batch(size: int, first: int) -> integration_pb.FollowLogResponse:
    return integration_pb.FollowLogResponse(
        position=first + size - 1,
        events=[game_pb.Event(position=first + n) for n in range(size)],
    )


async def _lead(size: int, taken: int) -> tuple[int, int]:
    """A stream of responses of ``size`` events each (a thousand of them),
    whose reader takes ``taken`` and then stops reading: (responses made,
    events made and not taken) once the maker has gone as far as it may."""
    made = 0

    async def responses() -> AsyncIterator[integration_pb.FollowLogResponse]:
        nonlocal made
        for n in range(1000):
            made += 1
            yield _batch(size, n * size + 1)

    pump = door._Pump(responses(), None, contextvars.copy_context())
    try:
        for n in range(taken):
            response = await pump.next()
            assert response.events[0].position == n * size + 1  # in order
        for _ in range(50):  # as far as it will go
            await asyncio.sleep(0.002)
        return made, (made - taken) * size
    finally:
        await pump.close()


def test_a_slow_batched_follower_holds_a_bounded_number_of_events() -> None:
    for taken in (0, 1, 5):
        made, held = asyncio.run(_lead(500, taken))
        assert made < 1000  # the maker waits for the reader
        assert held < door.AHEAD_EVENTS + 500, (taken, made)
        # ... and still keeps more than one batch ready, for the rate.
        assert held >= door.AHEAD_EVENTS


def test_one_event_a_message_still_runs_the_whole_lead_ahead() -> None:
    _made, held = asyncio.run(_lead(1, 3))
    assert held in (door.AHEAD, door.AHEAD + 1)  # the queue, and one in hand


def test_the_maker_goes_on_as_the_reader_takes() -> None:
    async def run() -> list[int]:
        async def responses() -> AsyncIterator[integration_pb.FollowLogResponse]:
            for n in range(40):
                yield _batch(500, n * 500 + 1)

        pump = door._Pump(responses(), None, contextvars.copy_context())
        seen = []
        while (response := await pump.next()) is not door._END:
            seen.append(response.events[0].position)
        await pump.close()
        return seen

    assert asyncio.run(run()) == [n * 500 + 1 for n in range(40)]
