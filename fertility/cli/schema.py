"""`fertility schema NAME`: the JSON Schema of one of fertility's JSON outputs, as shipped.

Tools that read fertility's JSON validate against exactly the file the installed version
writes to, without a network or a checkout.
"""

from __future__ import annotations

import click

from fertility.results.contract import SCHEMA_VERSIONS, WHAT


def _names_help() -> str:
    return "; ".join(f"{name}: {WHAT[name]}" for name in SCHEMA_VERSIONS)


@click.command("schema", help="Print the JSON Schema of a JSON output: " + _names_help() + ".")
@click.argument("name", type=click.Choice(list(SCHEMA_VERSIONS)))
@click.option("--version", "show_version", is_flag=True,
              help="Print only the schema_version the installed fertility writes for NAME.")
def schema_command(name: str, show_version: bool) -> None:
    from fertility.results.contract import schema_text

    click.echo(SCHEMA_VERSIONS[name] if show_version else schema_text(name), nl=show_version)
