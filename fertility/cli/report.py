"""`report`: the HTML page (and figures) of saved audits."""

from __future__ import annotations

from pathlib import Path

import click

from fertility.io.output import Input, Output, output_target, refuse_inputs_as_outputs

from .common import write_or_echo


@click.command()
@click.argument("audits", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Write the page here (`-`: stdout).")
@click.option("--force", is_flag=True, help="Overwrite --output (and the figures in --figures) if they exist.")
@click.option("--mix", metavar="LANG=SHARE,...", help="Content shares of your data mix (scaled to sum 1), for the budget chart.")
@click.option("--figures", type=click.Path(path_type=Path), metavar="DIR",
              help="Also write each chart as SVG and PNG into this folder, for papers.")
def report(audits, output, force, mix, figures):
    """One self-contained HTML page from saved audits (`fertility audit -f json`).

    Two audits of the same corpus (one tokenizer each) are also compared, as `fertility
    compare A.json B.json` does; more are drawn together, a series per tokenizer (`fertility
    leaderboard` ranks them). The page needs no network: scripts and data are inline.
    """
    from fertility.metrics.balance import parse_mix
    from fertility.report.contents import saved_report
    from fertility.report.figures import check_figures, figure_files
    from fertility.report.figures import figures as write_figures
    from fertility.report.html import bundle, page

    audit_inputs = [Input("AUDITS", path) for path in audits]
    refuse_inputs_as_outputs(audit_inputs, [Output("-o", output)])
    output = output_target(output, force=force)
    bundle()
    built = saved_report(list(audits), mix=parse_mix(mix) if mix else None)
    if figures is not None:  # the figures' names are known once the report is built; nothing is written yet
        refuse_inputs_as_outputs(audit_inputs, [Output("-o", output), Output("--figures", figures,
                                                                            tuple(figure_files(built)))])
        check_figures(figures, figure_files(built), force=force)
    write_or_echo(page(built), output, force)
    if figures is not None:
        written = write_figures(built, figures, force=force)
        click.echo(f"wrote {len(written)} figures to {figures}", err=True)
