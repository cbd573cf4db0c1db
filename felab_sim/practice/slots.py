"""The practice server's slots: at most ``size`` requests hold one, the rest queue in arrival order."""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque


class Slots:
    """A first-come, first-served counting lock that reports how many hold it and how many wait.

    ``asyncio.Semaphore`` would do the limiting, but the server must read the number of holders
    at every decode step and report the queue in /health, and a slot must pass straight from a
    leaving request to the longest waiter: the count never dips between the two, exactly as the
    model's release hands the slot over. Not thread-safe; every call runs on one event loop.
    """

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"size must be at least 1, got {size}")
        self.size = size
        self.active = 0
        # Each waiter's future gets the loop time at which the slot became its own.
        self._waiters: deque[asyncio.Future[float]] = deque()

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    async def acquire(self) -> float:
        """Wait for a slot; returns the loop time (monotonic) at which it was granted.

        A waiter that is cancelled leaves the queue at once; one cancelled just after a leaving
        request handed it the slot passes the slot on, so cancellation never leaks a slot.
        """
        loop = asyncio.get_running_loop()
        if self.active < self.size and not self._waiters:
            self.active += 1
            return loop.time()
        waiter: asyncio.Future[float] = loop.create_future()
        self._waiters.append(waiter)
        try:
            return await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()
            else:
                # A release may already have dropped this cancelled future from the queue.
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)
            raise

    def release(self) -> None:
        """Give the slot to the longest waiter, or free it if nobody waits."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                # The grant time is now, not when the waiter's task next runs: its prefill starts
                # the moment the slot is free, as in the model.
                waiter.set_result(asyncio.get_running_loop().time())
                return
        if self.active <= 0:
            raise RuntimeError("release() without a matching acquire()")
        self.active -= 1
