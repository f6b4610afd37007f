"""Canonical content hashes of tables and worlds.

A hash must not depend on how a value happened to be stored: 25 and 25.0 are
the same number, money is an exact decimal, NULL is not the empty string, and
rows are ordered by primary key. So every value is reduced to a tagged,
canonical form before it is hashed, and the same data gives the same hash on
any machine.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime
from decimal import Decimal
from json.encoder import encode_basestring_ascii as _json_string  # what json.dumps writes for a str
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

Row = Sequence[object]
# Values per column from which plain text is made canonical and joined into rows by Arrow rather than in Python.
_BULK = 1_000


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


def canonical_text(value: object, decimal: bool = False) -> str:
    """The JSON text of one canonical value, exactly as a row of table_sha256 writes it (decimal: money as text)."""
    if isinstance(value, str):
        if decimal:
            return '["n",' + _json_string(canonical_number(Decimal(value))) + "]"
        return '["s",' + _json_string(value) + "]"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):  # bool included; the digits of a number need no JSON escaping
        return '["n","' + (("1" if value else "0") if isinstance(value, bool) else canonical_number(value)) + '"]'
    return json.dumps(canonical_value(value), separators=(",", ":"))


def column_texts(values: Sequence[object], decimal: bool = False) -> list[str]:
    """canonical_text of every value of one column; a column of plain text, the common case, in one pass."""
    texts = _texts(values, decimal)
    return texts if isinstance(texts, list) else texts.to_pylist()


def _texts(values: Sequence[object] | pa.Array, decimal: bool = False) -> list[str] | pa.Array:
    """column_texts, as an Arrow array where Arrow made them (plain ASCII text, money written plainly): a block of
    a large table is then joined into rows and hashed without a Python string per value. `values` may be an Arrow
    array (nulls are None)."""
    if (strings := _strings(values)) is not None:
        if (bulk := _plain_decimals(strings) if decimal else _plain_texts(strings)) is not None:
            return bulk
    if type(values).__module__.startswith("pyarrow"):  # not plain: each value as Python gives it
        values = values.to_pylist()
    if all(type(v) is str for v in values):
        if not decimal:
            return ['["s",' + text + "]" for text in map(_json_string, values)]
        if (plain := _plain_decimals(values)) is not None:
            return plain
    return _canonical_texts(values, decimal)


def _strings(values: Sequence[object] | pa.Array) -> pa.Array | None:
    """A large block's values as an Arrow string array if every one is text (Arrow's inference refuses anything
    else: numbers, None, or bytes, which it would make a binary array); None otherwise. An Arrow text array is taken
    as it is: a column of a frame held by Arrow is hashed without a Python string per value."""
    import pyarrow as pa  # imported here: only large tables are hashed in bulk

    if len(values) < _BULK:
        return None
    if isinstance(values, pa.Array):
        plain = pa.types.is_string(values.type) or pa.types.is_large_string(values.type)
        return values.cast(pa.string()) if plain and not values.null_count else None
    try:
        strings = pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeEncodeError):  # UTF-8 has no lone surrogate ("\ud800")
        return None
    return strings if strings.type == pa.string() and not strings.null_count else None


def _plain_texts(texts: pa.Array) -> pa.Array | None:
    """canonical_text of text that JSON writes as it is (printable ASCII, no quote or backslash), in bulk; None if
    any value needs escaping."""
    import numpy as np
    import pyarrow.compute as pc

    # Checked on the bytes of the data buffer at once (a string array without nulls): a regex per value was 1.1 s
    # of a 1M-row build's CPU.
    offsets = np.frombuffer(texts.buffers()[1], dtype=np.int32)[texts.offset:texts.offset + len(texts) + 1]
    if offsets[-1] > offsets[0]:
        data = np.frombuffer(texts.buffers()[2], dtype=np.uint8)[offsets[0]:offsets[-1]]
        if not ((data >= 0x20) & (data <= 0x7E) & (data != 0x22) & (data != 0x5C)).all():  # '"' and '\\' escape
            return None
    return pc.binary_join_element_wise('["s","', texts, '"]', "")


def _canonical_texts(values: Sequence[object], decimal: bool) -> list[str]:
    """canonical_text of each value, each distinct one made canonical once."""
    # Money and codes repeat: each distinct value is made canonical once. Keyed by type too: 0.1 == Decimal(0.1)
    # in Python, yet their canonical texts differ.
    memo: dict[tuple[type, object], str] = {}
    out = []
    for v in values:
        try:
            key = (v.__class__, v)
            text = memo.get(key)
        except TypeError:  # unhashable: canonical_text refuses it by its type
            text = key = None
        if text is None:
            text = canonical_text(v, decimal)
            if key is not None:
                memo[key] = text
        out.append(text)
    return out


def _plain_decimals(values: Sequence[str] | pa.Array) -> pa.Array | None:
    """canonical_text of money written plainly ('-12.50'), trailing zeros dropped in bulk; None if any is not plain."""
    import pyarrow as pa  # imported here: only large money columns need it
    import pyarrow.compute as pc

    texts = values if isinstance(values, pa.Array) else pa.array(values, pa.string())
    # At most 27 significant digits: Decimal.normalize rounds beyond its 28-digit context, and this must not.
    if not pc.all(pc.match_substring_regex(texts, r"^-?(0|[1-9][0-9]{0,14})(\.[0-9]{1,12})?$")).as_py():
        return None
    texts = pc.replace_substring_regex(texts, r"(\.[0-9]*?)0+$", r"\1")  # 12.50 -> 12.5, 12.00 -> 12.
    texts = pc.replace_substring_regex(texts, r"\.$", "")  # 12. -> 12
    texts = pc.replace_substring_regex(texts, r"^-0$", "0")  # -0.00 -> 0, as Decimal.normalize gives
    return pc.binary_join_element_wise('["n","', texts, '"]', "")


class TableHash:
    """table_sha256 computed incrementally, a block of rows at a time: the same digest for the same rows in the
    same order however they are split into blocks."""

    def __init__(self, columns: Sequence[str], decimal_columns: Sequence[int] = ()):
        self._width = len(columns)
        self._decimal = set(decimal_columns)
        self._digest = hashlib.sha256(json.dumps(list(columns)).encode())

    def add_columns(self, texts: Sequence[Sequence[str] | pa.Array]) -> None:
        """A block of rows given as one list (or Arrow array) of canonical texts per column (column_texts), in key
        order."""
        if len(texts) != self._width:
            raise ValueError(f"expected {self._width} columns, got {len(texts)}")
        arrow = [type(t).__module__.startswith("pyarrow") for t in texts]
        if any(arrow) and len(texts[0]):  # canonical texts are ASCII (JSON escapes the rest): Arrow takes them as is
            self._digest.update(_joined_rows([t if a else _arrow_strings(t) for t, a in zip(texts, arrow)]))
            return
        self._digest.update("".join(["\n[" + ",".join(row) + "]" for row in zip(*texts)]).encode())

    def add_values(self, columns: Sequence[Sequence[object] | pa.Array]) -> None:
        """A block of rows given as one sequence of values (or Arrow array) per column, in key order."""
        self.add_columns([_texts(col, i in self._decimal) for i, col in enumerate(columns)])

    def add_rows(self, rows: Sequence[Row]) -> None:
        """A block of rows as tuples, in key order."""
        if not self._width:  # no columns to transpose: every row is the empty list
            self._digest.update(b"\n[]" * len(rows))
            return
        self.add_values(list(zip(*rows)))

    def hexdigest(self) -> str:
        return self._digest.hexdigest()


def _arrow_strings(texts: Sequence[str]) -> pa.Array:
    import pyarrow as pa

    return pa.array(texts, pa.string())


def _joined_rows(columns: Sequence[pa.Array]) -> memoryview:
    """The bytes TableHash.add_columns hashes for these columns of texts ("\\n[" + texts joined by "," + "]" per
    row), joined by Arrow: the joined array's data buffer holds the rows back to back."""
    import numpy as np
    import pyarrow.compute as pc

    parts: list = ["\n["]
    for i, column in enumerate(columns):
        parts += [column, ","] if i < len(columns) - 1 else [column]
    rows = pc.binary_join_element_wise(*parts, "]", "").cast("large_string")
    offsets = np.frombuffer(rows.buffers()[1], dtype=np.int64)[rows.offset:rows.offset + len(rows) + 1]
    return memoryview(rows.buffers()[2])[offsets[0]:offsets[-1]]


def row_digest(row: Row, decimal_columns: Sequence[int] = ()) -> bytes:
    """sha256 of one row's canonical text, as a table hash writes the row: compares rows stored differently."""
    text = ",".join(canonical_text(v, i in decimal_columns and isinstance(v, str)) for i, v in enumerate(row))
    return hashlib.sha256(("[" + text + "]").encode()).digest()


def table_sha256(columns: Sequence[str], rows: Iterable[Row], decimal_columns: Sequence[int] = (),
                 block: int = 50_000) -> str:
    """Hash of one table; `rows` must already be ordered by primary key (read `block` rows at a time)."""
    digest, it = TableHash(columns, decimal_columns), iter(rows)
    while chunk := list(itertools.islice(it, block)):
        digest.add_rows(chunk)
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


def canon(value: Any) -> str:
    """Text form of a value for keying: 25 and 25.0 key alike so int/float join columns match."""
    if hasattr(value, "item") and type(value).__module__ == "numpy":  # a numpy scalar, without importing numpy
        value = value.item()
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, Decimal)):
        return canonical_number(value)
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    return str(value)
