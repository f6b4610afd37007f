import pytest
from site_support import publish


@pytest.fixture(scope="package")
def published(built, tmp_path_factory):
    """(release, run folder, site folder, build summary, home): the AP release, a run of the demo's baselines and
    their evidence site, shared by the tests of tests/site (site_support.publish)."""
    return publish(built, tmp_path_factory)
