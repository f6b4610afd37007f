"""A block of money bound in bulk is bound as each value alone would be."""
from decimal import Decimal

import pytest

from evalsuite.worlds.types import Money

CANONICAL = ["12.50", "-0.00", "0.01", "1000000.00"]


@pytest.mark.parametrize("odd", [None, "1.5", "007.50", "12.500", "1e3", " 1.00", Decimal("2.5"), 3, 0.1, "-0"])
@pytest.mark.parametrize("places", [0, 2, 3, 7])
def test_a_block_of_money_binds_as_each_value_alone(odd, places):
    money = Money(places)
    values = [str(Decimal(v).quantize(money.quantum)) for v in CANONICAL] * 500 + [odd]
    assert money.bind_block(values) == [money.process_bind_param(v, None) for v in values]
