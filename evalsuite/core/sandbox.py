"""The sealed boundary an external agent runs in: its own system user, a private home and tmp, a narrow view of
the disk.

An external (mcp:) agent is untrusted code. The harness holds what it must never see (goal
states and reference solutions in the task file, the world file, the seed, the home folder,
the de-identification key in its environment), so the agent process and everything it starts
run behind a boundary made of existing mechanisms:

- `bwrap` (bubblewrap), where it works: a private mount namespace that shows only the system
  folders (/usr, /etc, ...), the harness's Python and virtualenv, the folders of the agent's
  own program and whatever EVALSUITE_AGENT_READ names, all read-only; a new /proc (own PID
  namespace: the harness's processes do not exist in it), a private tmpfs /tmp and the trial's
  private home. The home folder is never shown (masked with an empty tmpfs if a shown folder
  holds it). When the harness is root, the agent also runs as the dedicated user below.
- `uid` (no usable bwrap, harness is root): `setpriv` to the dedicated system user, created on
  first use with `useradd`. File permissions are the boundary: the home is 0700
  (evalsuite.core.home.private_home), so the user can read nothing below it.

EVALSUITE_AGENT_SANDBOX picks: auto (default: bwrap, else uid), bwrap, uid, or none, the
explicit opt-out, which every trial record carries (AgentConfig.sandbox). Anything else, or no
boundary to be had, is a one-line SandboxError before the first trial.
"""
from __future__ import annotations

import functools
import os
import pwd
import shutil
import stat
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from evalsuite.core.agent_limits import tmp_bytes
from evalsuite.core.home import private_home
from evalsuite.core.identity import SANDBOX_VAR

BASE_ENV = ("PATH", "LANG", "LC_ALL", "TZ")  # enough to start a program; anything else is passed on request

USER_VAR = "EVALSUITE_AGENT_USER"  # the system user agents run as (created on first use)
READ_VAR = "EVALSUITE_AGENT_READ"  # more folders the agent may read under bwrap, separated by os.pathsep
DEFAULT_USER = "evalsuite-agent"
MODES = ("auto", "bwrap", "uid", "none")
SYSTEM_DIRS = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
AGENT_HOME, AGENT_TMP = "/home/agent", "/tmp"  # where the agent sees its private folders under bwrap
# The harness's namespaces stay out of reach, its network too: the agent's own has only loopback, where netgate
# relays its trial's URL to the tool server's Unix socket (evalsuite/core/netgate.py).
BWRAP_FLAGS = ("--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net", "--unshare-cgroup-try",
               "--die-with-parent")
NETGATE = Path(__file__).with_name("netgate.py")
GATE_DIR = "/run/evalsuite"  # inside the sandbox: netgate.py and the tool server's socket folder (at mcp/)
SOCKET_NAME = "mcp.sock"
SHM, MQUEUE = "/dev/shm", "/dev/mqueue"  # the sandbox's own; a long-lived agent's trials would share them
# Drop to the agent user for good: no groups, no capabilities, no regaining privileges through setuid programs.
SETPRIV_FLAGS = ("--clear-groups", "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all")


class SandboxError(ValueError):
    """No boundary can be made (or the one asked for cannot): one line naming what is missing. A ValueError, so
    `evalsuite run` reports it like a bad --agent, before any trial."""


@dataclass(frozen=True)
class Endpoint:
    """Where a tool server listens: its loopback port, and the folder of its Unix socket (SOCKET_NAME), which a
    sealed agent's netgate relays that port to from inside the agent's network namespace."""

    folder: str
    port: int


@dataclass(frozen=True)
class Launch:
    """How to start one sealed agent: the full argv, the folder to start it in, and HOME/TMPDIR for its env."""

    argv: list[str]
    cwd: str
    env: dict[str, str]


@dataclass(frozen=True)
class Sandbox:
    """One boundary: its mechanism and, when the harness can switch users, the uid and gid the agent runs as."""

    mechanism: Literal["bwrap", "uid", "none"]
    user: tuple[int, int] | None = None

    def check(self, command: Sequence[str]) -> None:
        """Refuse, before any trial, a command this boundary cannot run sealed (one line saying why)."""
        if self.mechanism == "uid":
            _check_runnable(command)
        elif self.mechanism == "bwrap":
            agent_paths(command)

    def launch(self, command: Sequence[str], trial_dir: Path, endpoint: Endpoint | None = None) -> Launch:
        """Start `command` behind this boundary; trial_dir is an empty folder of this trial only (removed after).
        Under bwrap the agent's network is its own, and `endpoint`, its tool server, is all it reaches of the
        host's (without one it reaches nothing)."""
        home, tmp = self._private_dirs(Path(trial_dir))
        plain = {"HOME": str(home), "TMPDIR": str(tmp)}
        if self.mechanism == "none":
            return Launch(list(command), str(home), plain)
        private_home()  # a home made before homes were private is closed before any agent runs
        drop = _setpriv(self.user) if self.user else []
        if self.mechanism == "uid":
            return Launch(drop + list(command), str(home), plain)
        view = bwrap_view(command, home, endpoint)
        gate = _netgate(endpoint) if endpoint else []
        return Launch(view + gate + drop + list(command), str(home), {"HOME": AGENT_HOME, "TMPDIR": AGENT_TMP})

    def trial_dirs(self, worker_home: Path, name: str) -> tuple[Path, dict[str, str]]:
        """A fresh home and tmp for one trial of a long-lived agent (launched with worker_home as its home): the
        folder to remove after the trial, and HOME/TMPDIR as the agent sees them."""
        folder = worker_home / name
        folder.mkdir(mode=0o700)
        home, tmp = self._private_dirs(folder)
        if self.mechanism == "bwrap":  # worker_home is bound at AGENT_HOME inside
            home, tmp = (Path(AGENT_HOME) / p.relative_to(worker_home) for p in (home, tmp))
        return folder, {"HOME": str(home), "TMPDIR": str(tmp)}

    @property
    def scratch(self) -> tuple[str, ...]:
        """Folders private to one launch that a long-lived agent empties between trials: bwrap's tmpfs /tmp."""
        return (AGENT_TMP,) if self.mechanism == "bwrap" else ()

    @property
    def ipc_dirs(self) -> tuple[str, ...]:
        """What else of one launch a zygote empties between trials: bwrap's /dev/shm (POSIX shared memory and
        semaphores) and its POSIX message queues."""
        return (SHM, MQUEUE) if self.mechanism == "bwrap" else ()

    @property
    def private_ipc(self) -> bool:
        """Whether a launch has System V IPC of its own (bwrap's IPC namespace), which a zygote then sweeps
        between trials; elsewhere it is the host's, shared with every process."""
        return self.mechanism == "bwrap"

    def seen(self, worker_home: Path) -> str:
        """A long-lived agent's home (the worker_home it was launched with) as the agent sees it."""
        return AGENT_HOME if self.mechanism == "bwrap" else str(worker_home)

    def _private_dirs(self, trial_dir: Path) -> tuple[Path, Path]:
        """home/ and tmp/ in trial_dir, owned by the agent user and 0700 (trial_dir too)."""
        home, tmp = trial_dir / "home", trial_dir / "tmp"
        for folder in (home, tmp):
            folder.mkdir(mode=0o700)
        for folder in (trial_dir, home, tmp):
            folder.chmod(0o700)
            if self.user:
                os.chown(folder, *self.user)
        return home, tmp


def requested_mode() -> str:
    """EVALSUITE_AGENT_SANDBOX (auto when unset); anything else is refused."""
    mode = os.environ.get(SANDBOX_VAR, "").strip() or "auto"
    if mode not in MODES:
        raise SandboxError(f"{SANDBOX_VAR}={mode!r}: expected one of {', '.join(MODES)}")
    return mode


def sandbox_for(seal: str | None = None) -> Sandbox:
    """The boundary for an agent whose config says `seal` (AgentConfig.sandbox): none only if it says none;
    sealed agents get the mechanism EVALSUITE_AGENT_SANDBOX asks for (auto when it asks for none)."""
    mode = requested_mode()
    if seal == "none" or (seal is None and mode == "none"):
        return Sandbox("none")
    return _resolve("auto" if mode == "none" else mode, os.environ.get(USER_VAR, "").strip() or DEFAULT_USER)


@functools.cache
def _resolve(mode: str, user: str) -> Sandbox:
    """Detect once per process: bwrap that works, root to switch users, the agent user (created if missing)."""
    root = os.geteuid() == 0
    if mode in ("auto", "bwrap") and bwrap_works():
        return Sandbox("bwrap", agent_user(user) if root else None)
    if mode == "bwrap":
        raise SandboxError(f"{SANDBOX_VAR}=bwrap: bubblewrap is not installed or cannot create namespaces here "
                           f"(install the bubblewrap package; in a container, allow user namespaces)")
    if not root:
        raise SandboxError(f"no sandbox for external agents: bubblewrap is unusable and switching to user {user!r} "
                           f"needs root; install bubblewrap, run as root, or set {SANDBOX_VAR}=none to run them "
                           f"unsealed (recorded in every trial)")
    return Sandbox("uid", agent_user(user))


def agent_user(name: str) -> tuple[int, int]:
    """uid and gid of the system user agents run as; created (no home, no login shell) if it does not exist."""
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        entry = _create_user(name)
    if entry.pw_uid == 0 or entry.pw_gid == 0:
        raise SandboxError(f"{USER_VAR}={name!r}: the agent user must not be root or in group root")
    return entry.pw_uid, entry.pw_gid


def _create_user(name: str) -> pwd.struct_passwd:
    useradd = shutil.which("useradd") or "/usr/sbin/useradd"
    done = subprocess.run([useradd, "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
                           "--shell", "/usr/sbin/nologin", "--comment", "evalsuite sandboxed agents", name],
                          capture_output=True, text=True)
    try:  # another worker may have created it at the same moment: its user is as good as ours
        return pwd.getpwnam(name)
    except KeyError:
        raise SandboxError(f"cannot create the agent user {name!r} with useradd: "
                           f"{done.stderr.strip() or f'exit {done.returncode}'}") from None


@functools.cache
def bwrap_works() -> bool:
    """bwrap is installed and can make the namespaces the boundary uses (a container may forbid them)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return False
    probe = [bwrap, *BWRAP_FLAGS, "--ro-bind", "/", "/", "--proc", "/proc", "--", "/bin/true"]
    return subprocess.run(probe, capture_output=True).returncode == 0


def _setpriv(user: tuple[int, int]) -> list[str]:
    setpriv = shutil.which("setpriv") or "/usr/bin/setpriv"
    return [setpriv, f"--reuid={user[0]}", f"--regid={user[1]}", *SETPRIV_FLAGS, "--"]


def _netgate(endpoint: Endpoint) -> list[str]:
    """What runs first inside the sandbox: netgate, relaying 127.0.0.1:PORT there to the tool server's socket."""
    return [sys.executable, "-I", "-S", f"{GATE_DIR}/{NETGATE.name}", f"{GATE_DIR}/mcp/{SOCKET_NAME}",
            str(endpoint.port), "--"]


def bwrap_view(command: Sequence[str], home: Path, endpoint: Endpoint | None = None) -> list[str]:
    """The bwrap argv that shows the agent only what it needs, with `home` as its home and a private /tmp, and
    netgate and the tool server's socket folder (read-only, in a folder closed to the agent user) for `endpoint`."""
    argv = [shutil.which("bwrap") or "bwrap", *BWRAP_FLAGS]
    for folder in SYSTEM_DIRS:
        if os.path.islink(folder):  # merged /usr: /bin -> usr/bin
            argv += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            argv += ["--ro-bind", folder, folder]
    # /tmp is memory: its size is the disk cap (evalsuite.core.agent_limits), past which writes fail ENOSPC
    argv += ["--proc", "/proc", "--dev", "/dev", "--mqueue", MQUEUE, "--perms", "1777", "--size", str(tmp_bytes()),
             "--tmpfs", AGENT_TMP]
    if endpoint is not None:
        argv += ["--perms", "0700", "--dir", GATE_DIR, "--ro-bind", str(NETGATE), f"{GATE_DIR}/{NETGATE.name}",
                 "--ro-bind", endpoint.folder, f"{GATE_DIR}/mcp"]
    shown, secret = agent_paths(command), str(private_home())
    argv += _parents([*shown, AGENT_HOME])
    for path in shown:
        argv += ["--ro-bind", path, path]
    if any(_within(secret, path) for path in shown):
        argv += ["--tmpfs", secret]  # the home sits in a folder the agent reads: it is shown empty
    return argv + ["--bind", str(home), AGENT_HOME, "--chdir", AGENT_HOME, "--"]


def _parents(paths: Sequence[str]) -> list[str]:
    """Folders leading to each path, made 0755: bwrap would make them 0700 (root's), closed to the agent user."""
    made: list[str] = []
    for path in paths:
        for parent in reversed(Path(path).parents[:-1]):  # not / itself
            if str(parent) not in made and str(parent) != AGENT_TMP:
                made.append(str(parent))
    return [arg for folder in made for arg in ("--perms", "0755", "--dir", folder)]


def agent_paths(command: Sequence[str]) -> list[str]:
    """What the agent may read besides the system, parents before children: the harness's Python and
    virtualenv, each absolute path in its command (its program and script: the file itself, a folder whole)
    with its symlink target, and the folders in EVALSUITE_AGENT_READ.

    None of them may lie inside the home folder, which the agent must not read at all.
    """
    program = shutil.which(command[0]) if command else None
    named = [a for a in [program or "", *command] if os.path.isabs(a) and os.path.exists(a)]
    named += [p for p in os.environ.get(READ_VAR, "").split(os.pathsep) if p]
    wanted = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    wanted |= {q for p in named for q in (os.path.abspath(p), os.path.realpath(p))}
    secret = str(private_home())
    for path in wanted:
        if path == "/":
            raise SandboxError("agent path / would show the agent the whole disk; name its own files or folders")
        if _within(path, secret):
            raise SandboxError(f"agent path {path} lies inside the home folder {secret} (EVALSUITE_HOME), which "
                               f"the agent may not read; move the agent's files out of it")
    shown = sorted(p for p in wanted if os.path.exists(p) and not any(_within(p, s) for s in SYSTEM_DIRS))
    return [p for p in shown if not any(p != q and _within(p, q) for q in shown)]  # a parent already shows it


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _check_runnable(command: Sequence[str]) -> None:
    """Under uid alone the agent user must be able to reach its own program; say so now, not as a crash later."""
    program = shutil.which(command[0]) if command else None
    if program is None:
        return  # the exec fails and the agent's output says which program was missing
    real = Path(os.path.realpath(program))
    for folder in (*reversed(real.parents), real):
        mode = folder.stat().st_mode
        if not mode & stat.S_IXOTH:
            raise SandboxError(f"the agent user cannot run {program}: {folder} is closed to other users; "
                               f"install bubblewrap (which shows it read-only) or move the program")
