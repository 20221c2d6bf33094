"""Command line: parse options, call the library, render, exit. No arithmetic here.

One module per command family; `common` holds what they share, `edge` turns errors into one
line and an exit code, `options` parses option values.
"""

from __future__ import annotations

import sys

import click

# Only light modules at the top: `fertility --help` must start without numpy, pandas or a tokenizer
# library. Each command imports the library parts it calls.
from fertility.errors import EXIT_OK

from . import about
from .audit import audit, merge
from .check import check
from .compare import compare
from .edge import FertilityGroup, silence_stdout, unwind_on_termination
from .leaderboard import leaderboard
from .report import report
from .schema import schema_command
from .show import list_tokenizers, show
from .train import extend, retrain

__all__ = ["FertilityGroup", "cli", "main", "unwind_on_termination"]


@click.group(cls=FertilityGroup, context_settings={"help_option_names": ["-h", "--help"]})
@about.version_option
def cli():
    """Audit tokenizers across languages: how much text each language gets per token."""


for command in (audit, merge, show, list_tokenizers, retrain, extend, compare, check, report, leaderboard, schema_command):
    cli.add_command(command)


def main() -> None:
    from fertility.engine.malloc import keep_freed_memory

    keep_freed_memory()  # the command's own process: chunk arrays reuse freed memory
    unwind_on_termination()
    try:
        cli(prog_name="fertility")
    except SystemExit as done:
        code = done.code
    else:
        code = EXIT_OK
    try:
        sys.stdout.flush()  # a pipe closed after our last write fails here, not in a command
    except BrokenPipeError:
        silence_stdout()
    sys.exit(code)
