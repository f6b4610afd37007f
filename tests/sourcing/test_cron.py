"""sourcing.cron: a spec's schedule is checked when the spec is read, and never accepts what Dagster would refuse."""
import pytest
from dagster._utils.schedules import is_valid_cron_string  # the test may ask Dagster; the library may not
from hypothesis import given
from hypothesis import strategies as st
from input_support import fuzz

from evalsuite.sourcing.cron import cron_problem

VALID = ["0 6 * * 1", "*/5 * * * *", "0 0 1 jan *", "0 9 * * mon-fri", "0 0 29 2 *", "15 3 1,15 * *",
         "0 0 * * 7", "5-10/2 * * * *", "@daily", "@hourly"]
INVALID = {"every tuesday": "expected 5 fields", "61 * * * *": "minute '61': 61 is outside 0-59",
           "* * *": "got 3", "0 6 * * 8": "8 is outside 0-7", "0 0 30 2 *": "February has no day 30",
           "0 6 * * 1 2027": "got 6", "": "got 0", "*/0 * * * *": "0 is outside 1-60",
           "0 0 * * tuesday": "'tuesday' is not a number or a name", "1,,2 * * * *": "'' is not a number"}


@pytest.mark.parametrize("text", VALID)
def test_the_usual_schedules_are_cron_strings_to_both(text):
    assert cron_problem(text) is None and is_valid_cron_string(text)


@pytest.mark.parametrize("text", sorted(INVALID))
def test_what_is_no_cron_string_is_named_and_dagster_agrees(text):
    assert INVALID[text] in cron_problem(text)
    assert not is_valid_cron_string(text)


TOKENS = ["*", "0", "5", "59", "60", "1-5", "5-1", "*/15", "*/0", "3/7", "1,2", "jan", "JAN", "mon-fri", "sun", "7",
          "8", "30", "31", "2", "0-7", "a", "L", "?", "1#2"]


@fuzz(300)
@given(fields=st.lists(st.sampled_from(TOKENS), min_size=4, max_size=6))
def test_a_string_this_module_accepts_dagster_accepts(fields):
    text = " ".join(fields)
    if cron_problem(text) is None:
        assert is_valid_cron_string(text), text


def test_a_backwards_range_is_refused_though_croniter_would_wrap_it():
    assert "range 50-10 runs backwards" in cron_problem("50-10 * * * *")  # croniter: 50..59 then 0..10
