from decimal import Decimal

from evalsuite.core.hashing import canonical_value, combine_sha256, table_sha256


def test_integer_and_float_forms_of_a_number_hash_equal():
    assert table_sha256(["a"], [(25,)]) == table_sha256(["a"], [(25.0,)])
    assert table_sha256(["a"], [(Decimal("25.00"),)]) == table_sha256(["a"], [(25,)])


def test_money_text_columns_hash_as_exact_decimals():
    assert table_sha256(["amt"], [("25.50",)], decimal_columns=[0]) == table_sha256(["amt"], [(Decimal("25.5"),)])
    assert (table_sha256(["amt"], [("0.10",)], decimal_columns=[0])
            != table_sha256(["amt"], [("0.1000001",)], decimal_columns=[0]))


def test_null_is_not_the_empty_string_and_text_is_not_a_number():
    assert table_sha256(["a"], [(None,)]) != table_sha256(["a"], [("",)])
    assert canonical_value("25") != canonical_value(25)


def test_world_hash_does_not_depend_on_table_order():
    assert combine_sha256({"a": "1", "b": "2"}) == combine_sha256({"b": "2", "a": "1"})
