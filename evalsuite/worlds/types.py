"""Column types shared by domains."""
from __future__ import annotations

from decimal import Decimal

from sqlalchemy import String
from sqlalchemy.types import TypeDecorator, UserDefinedType


class Money(TypeDecorator):
    """An exact decimal amount stored as canonical text, so no float ever touches money."""

    impl = String(32)
    cache_ok = True

    def __init__(self, places: int = 2):
        super().__init__()
        self.quantum = Decimal(1).scaleb(-places)

    def process_bind_param(self, value, dialect):
        if value is None:
            return None
        return str(Decimal(str(value)).quantize(self.quantum))

    def process_result_value(self, value, dialect):
        return None if value is None else Decimal(value)


class ExactNumber(UserDefinedType):
    """A number kept exactly as given: an int stays an int and a float stays a float.

    The column gets SQLite's BLOB affinity (declared type BLOB), which never coerces,
    where REAL would turn 0 into 0.0 and NUMERIC 0.0 into 0. Needed when a source's
    own hash tells 0 from 0.0.
    """

    cache_ok = True

    def get_col_spec(self, **kw):
        return "BLOB"
