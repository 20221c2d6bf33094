"""`fertility leaderboard AUDIT.json ...`: many saved audits of one corpus ranked in one table."""

from __future__ import annotations

from pathlib import Path

import click

from fertility.io.output import Input, Output, output_target, refuse_inputs_as_outputs, write_output

# report/leaderboard.py's LEADERBOARD_FORMATS (a test holds them equal): not imported, so that
# `fertility --help` loads no result model
FORMATS = ("table", "markdown", "latex", "csv", "html")


@click.command("leaderboard")
@click.argument("audits", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-f", "--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
              help="table (terminal), markdown (READMEs), latex (booktabs, for papers), csv (one row per "
                   "tokenizer and language), html (one offline page, sortable, shaded).")
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Write here instead of stdout (`-`: stdout).")
@click.option("--force", is_flag=True, help="Overwrite --output if it exists.")
def leaderboard(audits, fmt, output, force):
    """Rank the tokenizers of saved audits (`fertility audit -f json`) of one corpus.

    Each line is a tokenizer: chars/token over all languages (the ranking) and per language;
    over parallel text also each language's premium and the Gini over them. Audits of
    different corpora or counting settings are refused, naming the difference.
    """
    from fertility.report.leaderboard import build
    from fertility.report.leaderboard_formats import render

    refuse_inputs_as_outputs([Input("AUDITS", path) for path in audits], [Output("-o", output)])
    target = output_target(output, force=force)
    text = render(build(list(audits)), fmt)
    if target is None:
        click.echo(text, nl=False)
    else:
        write_output(target, text, force=force)
        click.echo(f"wrote {target}", err=True)
