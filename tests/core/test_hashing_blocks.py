"""Table hashes computed a column and a block at a time are the canonical rows' hash, value for value."""
from __future__ import annotations

import hashlib
import json
import random
from datetime import date, datetime
from decimal import Decimal

import pytest

from evalsuite.core.hashing import TableHash, canonical_row, table_sha256

VALUES = [None, "a", "", "é\"\\\n\x00😀", "\u2028", "12.50", 1, 1.0, True, False, 0.1, Decimal("0.1"), Decimal(0.1),
          -0.0, float("inf"), 2**70, date(2020, 1, 2), datetime(2020, 1, 2, 3, 4, 5), b"\x00\xff"]
MONEY = ["0", "0.0", "-0.00", "-0", "10", "100.00", "10.10", "0.000", "-12.340", "1E+2", "007.5", "+5", ".5",
         "12.5000001", "1000000", "999999999999999.999999999999", "123456789012345678901234567890.5"]


def defined(columns, rows, money=()) -> str:
    """The definition: the column names, then each canonical row as compact JSON on its own line."""
    digest = hashlib.sha256(json.dumps(list(columns)).encode())
    for row in rows:
        digest.update(b"\n" + json.dumps(canonical_row(row, money), separators=(",", ":")).encode())
    return digest.hexdigest()


@pytest.mark.parametrize("seed", range(40))
def test_any_mix_of_values_and_money_hashes_as_defined_in_any_block_size(seed):
    rng = random.Random(seed)
    money = [i for i in range(3) if rng.random() < 0.4]
    not_text = [v for v in VALUES if not isinstance(v, str)]  # money text must be a number; other values pass as is

    def value(i: int) -> object:
        if i in money:
            return rng.choice(MONEY) if rng.random() < 0.8 else rng.choice(not_text)
        return rng.choice(VALUES)

    rows = [tuple(value(i) for i in range(3)) for _ in range(rng.randint(0, 60))]
    assert table_sha256("abc", rows, money, block=rng.randint(1, 9)) == defined("abc", rows, money)


def test_a_long_money_column_is_canonical_in_bulk():
    rows = [(f"PAY-{i}", f"{i // 100}.{i % 100:02d}") for i in range(-500, 5000)]
    assert table_sha256(["id", "amount"], rows, [1], block=700) == defined(["id", "amount"], rows, [1])


def test_a_table_without_columns_still_counts_its_rows():
    digest = TableHash([])
    digest.add_rows([(), ()])
    assert digest.hexdigest() == defined([], [(), ()]) != defined([], [()])


def test_a_value_that_has_no_canonical_form_is_refused_by_its_type():
    with pytest.raises(TypeError, match="cannot hash a value of type list"):
        table_sha256(["a"], [([1],)])


@pytest.mark.parametrize("odd", [None, "say \"hi\"", "back\\slash", "tab\there", "é", "\x7f", 7, "", b"text", "\ud800"])
def test_large_blocks_of_plain_text_and_money_joined_by_arrow_hash_as_defined(odd):
    """Blocks of thousands of rows are made canonical and joined by Arrow where every value is plain; one value
    that needs escaping, or is not text, sends its column back to Python, and the hash is the same either way."""
    rows = [(f"PAY-{i:06d}", f"{i // 100}.{i % 100:02d}", f"note {i} ~!#$%&'()*+,-./:;<=>?@[]^_`{{|}}")
            for i in range(-3000, 9000)]
    rows[7777] = (rows[7777][0], rows[7777][1], odd)
    assert table_sha256(["id", "amount", "note"], rows, [1], block=5000) == defined(["id", "amount", "note"], rows,
                                                                                   [1])
