"""`show` and `tokenizers`: one text's tokens, and the tokenizers this machine can load."""

from __future__ import annotations

from pathlib import Path

import click

from fertility.backends import DEFAULT_TOKENIZERS
from fertility.errors import UsageError

from .common import TOKENIZER_HELP, hub_options, make_console


@click.command()
@click.option("-t", "--tokenizer", "tokenizers", multiple=True, metavar="[NAME=]SPEC", help=TOKENIZER_HELP)
@click.argument("text", required=False)
@click.option("--file", "file", type=click.Path(path_type=Path, dir_okay=False),
              help="Read the text from a UTF-8 file instead.")
@click.option("--pattern", metavar="NAME|REGEX", help="Split pattern for unknown .tiktoken files.")
@hub_options
def show(tokenizers, text, file, pattern):
    """Draw a text's token boundaries; `¦` marks a boundary inside a grapheme cluster.

    Example: fertility show -t tiktoken:cl100k_base "বাংলা ভাষা"
    """
    from fertility.backends import load_tokenizer
    from fertility.io.utf8 import read_text_file
    from fertility.report.show import render_shown
    from fertility.report.show import show as show_tokens

    if (text is None) == (file is None):
        raise UsageError("give TEXT or --file FILE (exactly one)")
    if file is not None:
        text = read_text_file(file)
    console = make_console()
    from fertility.backends.labels import split_name

    for given in tokenizers or DEFAULT_TOKENIZERS:
        name, spec = split_name(given)
        tokenizer = load_tokenizer(spec, pattern=pattern, exact_library=True)  # the library's own tokens
        # soft_wrap: a drawing cut into lines at the console's width (80 columns off a terminal)
        # would put line breaks between tokens that are not in the text
        console.print(render_shown(name or tokenizer.name, show_tokens(tokenizer, text), color=not console.no_color),
                      soft_wrap=True)


@click.command("tokenizers")
@click.option("--json", "as_json", is_flag=True, help="One JSON object: formats and available tokenizers.")
def list_tokenizers(as_json):
    """List the formats fertility reads and every named tokenizer that loads offline here
    (tiktoken cache, installed packages, Hugging Face hub cache), with backend and vocab size."""
    import dataclasses
    import json

    from fertility.backends.discovery import FORMATS, available

    found = available()
    if as_json:
        click.echo(json.dumps({"formats": dict(FORMATS), "available": [dataclasses.asdict(a) for a in found]},
                              ensure_ascii=False, indent=2))
        return
    click.echo("Formats (-t PATH is recognised by content; or SCHEME:REF):")
    for scheme, what in FORMATS:
        click.echo(f"  {scheme:<22} {what}")
    click.echo("\nAvailable offline on this machine:" if found else "\nNo named tokenizer available offline.")
    rows = [("SPEC", "BACKEND", "VOCAB", "FROM")] + [(a.spec, a.backend, a.vocab_size, a.where) for a in found]
    widths = [max(len(row[i]) for row in rows) for i in range(3)] if found else []
    for row in rows if found else []:
        click.echo("  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[3])
