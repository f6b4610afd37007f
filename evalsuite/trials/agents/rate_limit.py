"""A token bucket for an endpoint's request-rate and token-rate limits, shared by every trial in flight.

A take reserves its tokens at once and waits until the bucket has refilled what it owes: the level may go
negative (debt), and whoever comes next waits for that debt too, so concurrent takers are served in the
order they asked and the rate holds however many of them there are. A token-rate charge is an estimate
made before the request goes; `settle` charges (or refunds) the difference once the endpoint has reported
the real count, which may put the bucket further into debt.

aiolimiter is not used: it admits or refuses a fixed amount up front and has no way to charge after the fact.
"""
from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable


class TokenBucket:
    """`per_minute` tokens a minute, at most `burst` of them at once (default: one second's worth, at least 1,
    as hosted APIs enforce a minute's limit over shorter windows). `clock` and `sleep` are injectable so a
    test can run the bucket on a fake clock."""

    def __init__(self, per_minute: float, burst: float | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[object]] = asyncio.sleep):
        if per_minute <= 0:
            raise ValueError(f"a rate limit must be positive, not {per_minute}")
        self.rate = per_minute / 60.0  # tokens a second
        self.burst = burst if burst is not None else max(1.0, self.rate)
        self._clock, self._sleep = clock, sleep
        self.level = self.burst
        self._at = clock()

    def _refill(self) -> None:
        now = self._clock()
        self.level = min(self.burst, self.level + (now - self._at) * self.rate)
        self._at = now

    async def take(self, amount: float = 1.0) -> float:
        """Reserve `amount` tokens and wait until the bucket is out of debt; the seconds it waited. A take
        cancelled while waiting gives its tokens back."""
        self._refill()
        self.level -= amount
        owed = -self.level / self.rate if self.level < 0 else 0.0
        if owed > 0:
            try:
                await self._sleep(owed)
            except asyncio.CancelledError:
                self.settle(-amount)
                raise
        return owed

    def settle(self, difference: float) -> None:
        """Charge `difference` more tokens (a refund when negative) for a take already made: the real count
        the endpoint reported minus the estimate taken."""
        self._refill()
        self.level = min(self.burst, self.level - difference)
