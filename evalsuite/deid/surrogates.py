"""Faker surrogates seeded from each value's keyed token, redrawn until they contain no original value."""
from __future__ import annotations

from collections.abc import Callable
from itertools import accumulate
from typing import Any

from evalsuite.core.pii import ValueIndex
from evalsuite.deid.keys import Keyed
from evalsuite.deid.rules import DeidError, SurrogateRule

# Each surrogate kind a rule may name, and how its value is drawn (bench_deid.py's floor draws the same).
SURROGATE_KINDS: dict[str, Callable[[Any, str], str]] = {
    "name": lambda g, t: g.name(),
    "first_name": lambda g, t: g.first_name(),
    "last_name": lambda g, t: g.last_name(),
    # Token digits keep emails distinct (they are often join keys); reserved domains
    # (example.com/.org/.net) guarantee a surrogate never reaches a real mailbox.
    "email": lambda g, t: f"{g.user_name()}.{t[:4]}@{g.safe_domain_name()}",
    "phone": lambda g, t: g.phone_number(),
    "company": lambda g, t: g.company(),
    "street_address": lambda g, t: g.street_address(),
    "iban": lambda g, t: g.iban(),
    "bank_account": lambda g, t: g.bban(),
}


class Surrogates:
    """Keyed surrogates with a per-value cache shared by all tables of one run."""

    # Redraws before giving up on a surrogate that keeps containing an original value.
    MAX_REDRAWS = 50

    def __init__(self, keyed: Keyed, originals: ValueIndex | None = None):
        self.keyed = keyed
        # Original personal values no surrogate may contain: Faker draws from the same
        # name lists the real people's names come from, and a surrogate that happens to be
        # another record's real name would be indistinguishable from a leak.
        self._originals = originals or ValueIndex()
        self._generators: dict[str, Any] = {}
        self._surrogates: dict[tuple[str, str, str], str] = {}

    def surrogate(self, rule: SurrogateRule, text: str) -> str:
        cache_key = (rule.locale, rule.kind, text)
        if cache_key not in self._surrogates:
            self._surrogates[cache_key] = self._draw(rule, text)
        return self._surrogates[cache_key]

    def _draw(self, rule: SurrogateRule, text: str) -> str:
        gen = self._generator(rule.locale)
        for attempt in range(self.MAX_REDRAWS):
            # Redraws are keyed too, so the same data and key always give the same surrogate.
            token = self.keyed.token("value", text if attempt == 0 else f"{text}\x1fredraw{attempt}")
            gen.seed_instance(int(token[:16], 16))
            value = SURROGATE_KINDS[rule.kind](gen, token)
            if next(self._originals.finditer(value), None) is None:
                return value
        raise DeidError(f"no {rule.kind} surrogate free of original values after {self.MAX_REDRAWS} draws")

    def _generator(self, locale: str) -> Any:
        # One generator per locale and run: it is reseeded before every draw, so sharing it is safe.
        if locale not in self._generators:
            self._generators[locale] = faker_generator(locale)
        return self._generators[locale]


def faker_generator(locale: str) -> Any:
    """A Faker generator for locale whose weighted name picks are fast but draw the stock values."""
    from faker import Factory  # imported here: only surrogate rules need Faker

    gen = Factory.create(locale)
    _fast_weighted_names(gen)
    return gen


def _fast_weighted_names(gen: Any) -> None:
    """Make Faker's weighted name picks O(log n) instead of O(n).

    Faker rebuilds the cumulative weights of ~1000 names on every pick (~100 us);
    handing random.choices precomputed cum_weights draws the same name from the same
    random state. Installed only if a self-check proves identical output.
    """
    person = next((p for p in gen.get_providers() if hasattr(p, "first_names")), None)
    if person is None:
        return
    for method in ("first_name", "first_name_male", "first_name_female", "first_name_nonbinary", "last_name"):
        weights = getattr(person, method.replace("_name", "_names"), None)
        if not isinstance(weights, dict) or not hasattr(person, method):
            continue
        keys, cum = tuple(weights), list(accumulate(weights.values()))

        def fast(keys=keys, cum=cum) -> str:
            return gen.random.choices(keys, cum_weights=cum, k=1)[0]

        stock = getattr(person, method)
        if all(_same_draw(gen, stock, fast, seed) for seed in range(25)):
            gen.set_formatter(method, fast)


def _same_draw(gen: Any, a: Callable[[], str], b: Callable[[], str], seed: int) -> bool:
    gen.seed_instance(seed)
    first = a()
    gen.seed_instance(seed)
    return first == b()
