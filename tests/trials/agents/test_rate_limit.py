"""The token bucket holds its rate: on a fake clock N takes last at least what the rate implies, a charge settled
after the fact (debt) delays the next take, and concurrent takers on a real loop are spaced at the rate."""
from __future__ import annotations

import asyncio
import time

import pytest

from evalsuite.trials.agents.rate_limit import TokenBucket


class FakeClock:
    """A clock that moves only when the bucket sleeps."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds


def _bucket(per_minute: float, burst: float) -> tuple[TokenBucket, FakeClock]:
    clock = FakeClock()
    return TokenBucket(per_minute, burst=burst, clock=clock, sleep=clock.sleep), clock


def test_n_takes_last_at_least_what_the_rate_implies():
    bucket, clock = _bucket(per_minute=600, burst=5)  # 10 a second, 5 at once

    async def takes():
        return [await bucket.take() for _ in range(45)]

    waits = asyncio.run(takes())
    assert waits[:5] == [0.0] * 5  # the burst goes at once
    assert clock.now == pytest.approx((45 - 5) / 10)  # the other 40 at 10 a second, not faster
    assert all(w == pytest.approx(0.1) for w in waits[5:])


def test_a_charge_settled_after_the_fact_puts_the_bucket_in_debt_and_delays_the_next_take():
    bucket, clock = _bucket(per_minute=6000, burst=100)  # 100 tokens a second

    async def run():
        assert await bucket.take(100) == 0.0  # the estimate: within the burst, no wait
        bucket.settle(200)  # the endpoint reported 300 tokens
        return await bucket.take(1)

    assert asyncio.run(run()) == pytest.approx(2.01)  # 200 owed, then 1 more, at 100 a second
    assert clock.now == pytest.approx(2.01)


def test_an_estimate_larger_than_the_count_is_refunded():
    bucket, clock = _bucket(per_minute=6000, burst=100)

    async def run():
        await bucket.take(100)
        bucket.settle(-60)  # only 40 were used
        return await bucket.take(60)

    assert asyncio.run(run()) == 0.0 and clock.now == 0.0


def test_concurrent_takers_are_spaced_at_the_rate():
    bucket = TokenBucket(per_minute=1200, burst=1)  # one every 50 ms

    async def run():
        start = time.monotonic()
        waits = await asyncio.gather(*(bucket.take() for _ in range(6)))
        return time.monotonic() - start, waits

    elapsed, waits = asyncio.run(run())
    assert elapsed >= 0.25 - 0.005  # five of them after the first, 50 ms apart
    assert sorted(waits) == pytest.approx([0.0, 0.05, 0.1, 0.15, 0.2, 0.25], abs=0.005)


def test_a_rate_must_be_positive():
    with pytest.raises(ValueError, match="must be positive"):
        TokenBucket(0)
