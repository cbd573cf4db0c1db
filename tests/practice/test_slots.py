"""Slots: first come first served, and no slot lost to a cancelled request."""

from __future__ import annotations

import asyncio

import pytest

from felab_sim.practice import Slots


def test_slots_are_granted_in_arrival_order():
    async def main() -> list[str]:
        slots = Slots(1)
        await slots.acquire()
        order: list[str] = []

        async def waiter(name: str) -> None:
            await slots.acquire()
            order.append(name)

        tasks = [asyncio.create_task(waiter(name)) for name in "abcd"]
        await asyncio.sleep(0)
        assert (slots.active, slots.waiting) == (1, 4)
        for expected_waiting in (3, 2, 1, 0):
            slots.release()  # the holder leaves; the slot passes on without the count dipping
            await asyncio.sleep(0)
            assert (slots.active, slots.waiting) == (1, expected_waiting)
        slots.release()
        assert (slots.active, slots.waiting) == (0, 0)
        await asyncio.gather(*tasks)
        return order

    assert asyncio.run(main()) == ["a", "b", "c", "d"]


def test_a_cancelled_waiter_leaves_the_queue():
    async def main() -> None:
        slots = Slots(1)
        await slots.acquire()
        first = asyncio.create_task(slots.acquire())
        second = asyncio.create_task(slots.acquire())
        await asyncio.sleep(0)
        first.cancel()
        await asyncio.gather(first, return_exceptions=True)
        assert (slots.active, slots.waiting) == (1, 1)
        slots.release()
        await second  # the slot skips the cancelled request
        assert (slots.active, slots.waiting) == (1, 0)
        slots.release()
        assert slots.active == 0

    asyncio.run(main())


def test_a_waiter_cancelled_just_after_the_handover_passes_the_slot_on():
    async def main() -> None:
        slots = Slots(1)
        await slots.acquire()
        unlucky = asyncio.create_task(slots.acquire())
        next_in_line = asyncio.create_task(slots.acquire())
        await asyncio.sleep(0)
        slots.release()  # hands the slot to `unlucky`...
        unlucky.cancel()  # ...which is cancelled before it can run
        await asyncio.gather(unlucky, return_exceptions=True)
        assert unlucky.cancelled()
        await next_in_line
        assert (slots.active, slots.waiting) == (1, 0)
        slots.release()
        assert slots.active == 0

    asyncio.run(main())


def test_a_handed_over_slot_is_dated_at_the_release():
    async def main() -> None:
        loop = asyncio.get_running_loop()
        slots = Slots(1)
        await slots.acquire()
        waiter = asyncio.create_task(slots.acquire())
        await asyncio.sleep(0.01)
        before = loop.time()
        slots.release()
        after = loop.time()
        await asyncio.sleep(0.02)  # the waiter runs late; its grant time does not move
        assert before <= await waiter <= after

    asyncio.run(main())


def test_release_without_acquire_is_an_error():
    async def main() -> None:
        with pytest.raises(RuntimeError):
            Slots(2).release()

    asyncio.run(main())
