import pytest

from evalsuite.domains.ap_exceptions.example import ap_example


@pytest.fixture(scope="session")
def ap(tmp_path_factory):
    """The bundled AP example: a built world and its derived tasks, shared by the session."""
    return ap_example(tmp_path_factory.mktemp("ap"))
