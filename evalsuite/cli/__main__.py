"""`python -m evalsuite.cli`: the same command line as the `evalsuite` script."""
from evalsuite.cli.app import app

app(prog_name="evalsuite")
