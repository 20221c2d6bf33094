"""`compare`: two tokenizers side by side."""

from __future__ import annotations

from pathlib import Path

import click

from fertility.io.output import Output, output_target, refuse_inputs_as_outputs

from . import options
from .common import (
    PARALLEL_HELP,
    cache_input,
    corpus_inputs,
    hub_options,
    make_console,
    output_options,
    progress_bars,
    resolve_format,
    tokenizer_inputs,
    warn_of_suffix,
    write_or_echo,
)


@click.command()
@click.argument("a")
@click.argument("b")
@click.argument("corpus", nargs=-1, type=click.Path(path_type=Path))
@click.option("--per-file", is_flag=True, help="One document per file instead of per line.")
@click.option("--reference", default="eng_Latn", show_default=True, metavar="LANG",
              help="Reference language for premiums.")
@click.option("--parallel", is_flag=True, help=PARALLEL_HELP)
@click.option("--pattern", metavar="NAME|REGEX", help="Split pattern for unknown .tiktoken files.")
@click.option("--normalize", type=click.Choice(["nfc", "nfkc", "none"]), default=None,
              help="Unicode normalization before tokenizing (chars and bytes stay the raw text's). "
                   "Default: what the tokenizer's runtime does, when known (Qwen: nfc), else none.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bars.")
@click.option("-j", "--jobs", type=options.JOBS, metavar="N",
              help="Worker processes [default: every core]; results are identical for any N.")
@output_options
@hub_options
def compare(a, b, corpus, per_file, reference, parallel, pattern, normalize, quiet, jobs, fmt, output, force):
    """Two tokenizers side by side on the same corpora (default: the bundled samples).

    A and B are tokenizer specs, or two saved `fertility audit -f json` files (compared
    without re-running, if their corpus and counting settings agree).
    """
    from fertility.compare import run as run_compare
    from fertility.report import compare_tables as render_compare

    given_format, fmt = fmt is not None, resolve_format(fmt)
    refuse_inputs_as_outputs([*tokenizer_inputs([a], "A"), *tokenizer_inputs([b], "B"), *corpus_inputs(corpus),
                              *cache_input()], [Output("-o", output)])
    output = output_target(output, force=force)
    warn_of_suffix(output, fmt, given=given_format)
    with progress_bars(not quiet) as progress:
        comparison = run_compare(a, b, list(corpus), per_file=per_file, reference=reference, pattern=pattern,
                                 normalize=normalize, progress=progress, parallel=parallel, jobs=jobs)
    if fmt == "table" and output is None and (console := make_console()).is_terminal:
        render_compare.print_comparison(console, comparison, width=console.width)
        return
    text = {"json": render_compare.to_json, "csv": render_compare.to_csv, "markdown": render_compare.to_markdown,
            "table": render_compare.to_text, "html": _compare_html}[fmt](comparison)
    write_or_echo(text, output, force)


def _compare_html(comparison) -> str:
    from fertility.report.contents import comparison_report
    from fertility.report.html import page
    return page(comparison_report(comparison))
