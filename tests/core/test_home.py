"""The home folder is private to its owner: created 0700, and an existing open one closed before use."""
import stat

from evalsuite.core.home import private_home
from evalsuite.tasks.heldout import access_log_path


def _mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_home_is_created_private(tmp_path, monkeypatch):
    home = tmp_path / "parent" / "home"
    monkeypatch.setenv("EVALSUITE_HOME", str(home))
    assert access_log_path() == home / "access_log.jsonl"  # the first writer to need it makes it
    assert _mode(home) == 0o700


def test_an_existing_open_home_is_closed(tmp_path):
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    (home / "tasks.jsonl").write_text("{}\n")
    assert private_home(home) == home.resolve() and _mode(home) == 0o700
