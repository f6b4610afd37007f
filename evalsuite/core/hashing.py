"""Canonical content hashes of tables and worlds.

A hash must not depend on how a value happened to be stored: 25 and 25.0 are
the same number, money is an exact decimal, NULL is not the empty string, and
rows are ordered by primary key. So every value is reduced to a tagged,
canonical form before it is hashed, and the same data gives the same hash on
any machine.
"""
from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime
from decimal import Decimal

Row = Sequence[object]


def canonical_number(value: int | float | Decimal) -> str:
    """Fixed-point text of a number with no trailing zeros: 25, 25.0, Decimal('25.00') -> '25'."""
    if isinstance(value, float):
        if not math.isfinite(value):
            return repr(value)
        if value.is_integer():
            return str(int(value))
        value = Decimal(repr(value))
    elif isinstance(value, int):
        return str(value)
    text = format(value.normalize(), "f")
    return "0" if text in ("-0", "0") else text


def canonical_value(value: object) -> object:
    """A JSON-able, type-tagged form: numbers and text never collide, None stays null."""
    if value is None:
        return None
    if isinstance(value, bool):
        return ["n", "1" if value else "0"]
    if isinstance(value, (int, float, Decimal)):
        return ["n", canonical_number(value)]
    if isinstance(value, str):
        return ["s", value]
    if isinstance(value, datetime):
        return ["s", value.isoformat()]
    if isinstance(value, date):
        return ["s", value.isoformat()]
    if isinstance(value, bytes):
        return ["b", value.hex()]
    raise TypeError(f"cannot hash a value of type {type(value).__name__}")


def canonical_row(row: Row, decimal_columns: Sequence[int] = ()) -> list[object]:
    """Canonical row; money columns stored as text are read back as exact decimals."""
    out = [canonical_value(v) for v in row]
    for i in decimal_columns:
        if isinstance(row[i], str):
            out[i] = ["n", canonical_number(Decimal(row[i]))]
    return out


def table_sha256(columns: Sequence[str], rows: Iterable[Row], decimal_columns: Sequence[int] = ()) -> str:
    """Hash of one table; `rows` must already be ordered by primary key."""
    digest = hashlib.sha256()
    digest.update(json.dumps(list(columns)).encode())
    for row in rows:
        digest.update(b"\n")
        digest.update(json.dumps(canonical_row(row, decimal_columns), separators=(",", ":")).encode())
    return digest.hexdigest()


def combine_sha256(parts: Mapping[str, str]) -> str:
    """Hash of a set of named hashes (tables of a world, tasks of a suite), order-free."""
    body = json.dumps(dict(sorted(parts.items())), separators=(",", ":"))
    return hashlib.sha256(body.encode()).hexdigest()


def json_sha256(obj: object) -> str:
    """Hash of a JSON-able object with sorted keys (records, manifests, specs)."""
    body = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(body.encode()).hexdigest()


def file_sha256(path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
