"""What the input tests share: hypothesis settings sized for `make test` (EVALSUITE_FUZZ_EXAMPLES raises them),
and the one shape every refusal must have."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# `EVALSUITE_FUZZ_EXAMPLES=2000 pytest tests/tasks/test_input_fuzz.py tests/sourcing/test_spec_fuzz.py
# tests/test_cli_inputs.py` runs every property with that many examples instead of the small default.
_EXAMPLES = int(os.environ.get("EVALSUITE_FUZZ_EXAMPLES", "0"))


def fuzz(examples: int) -> settings:
    """Settings for one property: `examples` by default (derandomized, so a run is repeatable)."""
    return settings(max_examples=_EXAMPLES or examples, deadline=None, database=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def one_line_naming(message: str, file: str | Path) -> str:
    """The message, checked to be one line that starts with the file (after an optional `error: `)."""
    assert "\n" not in message.strip(), message
    assert message.removeprefix("error: ").startswith(str(file)), (message, str(file))
    return message


def refused(error: type[Exception], fn, *args, file: str | Path) -> str:
    """fn(*args) raises exactly `error`, as one line naming `file`."""
    with pytest.raises(error) as caught:
        fn(*args)
    assert type(caught.value) is error or isinstance(caught.value, error)
    return one_line_naming(str(caught.value), file)
