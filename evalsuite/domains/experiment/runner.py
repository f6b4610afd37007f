"""Runs one submitted analysis inside the sealed boundary and reports what it tried to reach (stdlib only).

The boundary (evalsuite.core.sandbox: under bubblewrap no network, no view of the harness's files, a private
/tmp) is what makes a connection or a foreign file fail. This runner adds the record: an audit hook (PEP 578)
refuses every socket, every program started and every file opened outside the analysis's own folder and the
interpreter's libraries, and writes each refusal to the report descriptor, so a run whose code swallowed the
error still fails its trial. Usage: python -I runner.py REPORT_FD SCRIPT
"""
import os
import runpy
import sys

SOCKET_EVENTS = {"socket.__new__", "socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr",
                 "socket.getnameinfo"}
PROGRAM_EVENTS = {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
                  "os.forkpty", "pty.spawn"}
LISTING_EVENTS = {"os.listdir", "os.scandir", "glob.glob"}
DEVICES = ("/dev/null", "/dev/urandom", "/dev/random")
# what numpy and the standard library read of the system by themselves: CPU quotas, time zones
SYSTEM_READS = ("/sys/fs/cgroup", "/proc/self", "/usr/share/zoneinfo")
MAX_REPORTS = 20


def _roots():
    """What the analysis may open: its own folder and TMPDIR, the interpreter's libraries (read) and this file."""
    libs = {sys.prefix, sys.base_prefix, sys.exec_prefix, *(p for p in sys.path if p)}
    libs |= {os.path.realpath(p) for p in libs}
    # TMPDIR is the run's own (bwrap's private /tmp, or a folder removed with the run), never the host's /tmp
    return tuple(sorted({os.getcwd(), os.environ["TMPDIR"], __file__, *SYSTEM_READS, *libs}))


def _within(path, roots):
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _hook(report_fd):
    roots, reported = _roots(), []

    def refuse(what):
        if len(reported) < MAX_REPORTS and what not in reported:
            reported.append(what)
            try:
                os.write(report_fd, (what + "\n").encode("utf-8", "replace"))
            except OSError:  # the code closed the report: nothing it does is believed, the run ends here
                os._exit(70)
        raise PermissionError(f"sealed analysis: {what} is not allowed")

    def hook(event, args):
        if event in SOCKET_EVENTS:
            refuse(f"network: {event}{_show(args)}")
        elif event in PROGRAM_EVENTS:
            refuse(f"program: {event}{_show(args[:1])}")
        elif event == "open" and isinstance(args[0], (str, bytes)):
            path = os.path.realpath(os.fsdecode(args[0]))
            if path not in DEVICES and not _within(path, roots):
                refuse(f"file: {path}")
        elif event in LISTING_EVENTS and args and isinstance(args[0], (str, bytes)):
            path = os.path.realpath(os.fsdecode(args[0]))
            if not _within(path, roots):
                refuse(f"file: {path}")

    return hook


def _show(args):
    return " " + repr(args)[:120] if args else ""


def main():
    report_fd, script = int(sys.argv[1]), sys.argv[2]
    sys.argv = [script]
    sys.addaudithook(_hook(report_fd))
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
