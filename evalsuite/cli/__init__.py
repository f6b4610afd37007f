"""The `evalsuite` command line: a module per command group, each command parsing its options, calling one
library function and printing its result; the root app is assembled in `evalsuite.cli.app`."""
from evalsuite.cli.app import app

__all__ = ["app"]
