"""Column types shared by domains."""
from __future__ import annotations

from decimal import Decimal

from sqlalchemy import String
from sqlalchemy.types import TypeDecorator, UserDefinedType

_BULK = 1_000  # values from which a block of money is checked in bulk


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

    def bind_block(self, values: list) -> list:
        """process_bind_param of each value of a block. Text already in its canonical form ("12.50" at 2 places, as
        a CSV export writes money) is that form: a block of it is checked by one RE2 pass and kept as it is, where a
        Decimal per value was 0.9 s of a 1M-row build's CPU."""
        import pyarrow as pa  # imported here: only large blocks need it, and a trial's process may not load it
        import pyarrow.compute as pc

        places = -self.quantum.as_tuple().exponent
        # Decimal writes an adjusted exponent below -6 in E notation ("0E-7"): beyond 6 places text is not canonical.
        if len(values) >= _BULK and places <= 6:
            try:
                text = pa.array(values)
            except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeEncodeError):  # not all text (or None)
                text = None
            shape = r"^-?(0|[1-9][0-9]{0,20})" + (rf"\.[0-9]{{{places}}}$" if places else "$")
            if text is not None and text.type == pa.string() and pc.all(pc.match_substring_regex(text, shape)).as_py():
                return values
        return [self.process_bind_param(v, None) for v in values]


class ExactNumber(UserDefinedType):
    """A number kept exactly as given: an int stays an int and a float stays a float.

    The column gets SQLite's BLOB affinity (declared type BLOB), which never coerces,
    where REAL would turn 0 into 0.0 and NUMERIC 0.0 into 0. Needed when a source's
    own hash tells 0 from 0.0.
    """

    cache_ok = True

    def get_col_spec(self, **kw):
        return "BLOB"
