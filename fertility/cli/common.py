"""What every command shares: consoles and progress bars, output options, formats, checks of
inputs against outputs, writing a result."""

from __future__ import annotations

import functools
import os
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from rich.console import Console

from fertility.backends import BACKENDS, BASELINES, DEFAULT_TOKENIZERS, spec_path
from fertility.choices import FORMATS
from fertility.errors import OutputError
from fertility.io.output import Input, write_output


def make_console(*, stderr: bool = False) -> Console:
    """A rich Console (rich is imported when something is drawn, not at start-up)."""
    from rich.console import Console
    return Console(stderr=stderr)


def stderr_console() -> Console:
    return make_console(stderr=True)


@contextmanager
def progress_bars(enabled: bool):
    """Yield a `(label, total bytes) -> advance(n bytes)` factory drawing a bar on stderr (only
    on a terminal), with throughput and time left; None otherwise. One bar covers reading,
    profiling, tokenizing and findings, since every chunk goes through all of them."""
    if not enabled or not (terminal := stderr_console()).is_terminal:
        yield None
        return
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )
    with Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(binary_units=True),
                  TransferSpeedColumn(), TimeRemainingColumn(), TimeElapsedColumn(),
                  console=terminal, transient=True) as bars:
        def start(label: str, total: int | None):
            task = bars.add_task(label, total=total)
            return functools.partial(bars.advance, task)
        yield start


def output_options(command):
    """The same --format/--output/--force flags on every command that prints results."""
    command = click.option("--force", is_flag=True,
                           help="Overwrite --output if it exists.")(command)
    command = click.option("-o", "--output", type=click.Path(path_type=Path),
                           help="Write results to this file instead of stdout (`-`: stdout).")(command)
    command = click.option("-f", "--format", "fmt", type=click.Choice(FORMATS),
                           help="Output format [default: $FERTILITY_FORMAT, else table].")(command)
    return command


def hub_options(command):
    """--offline on every command that may fetch tokenizers or corpora from the hub; its progress
    bars follow -q (and appear on a terminal only)."""
    @functools.wraps(command)
    def run(*args, offline: bool, **kwargs):
        from fertility.hub.download import hub_settings

        quiet = kwargs.get("quiet")
        with hub_settings(offline=offline, progress=None if quiet is None else not quiet):
            return command(*args, **kwargs)
    return click.option("--offline", is_flag=True,
                        help="Never ask the Hugging Face hub: hub tokenizers and named corpora from the "
                             "local cache only (as HF_HUB_OFFLINE=1).")(run)


def resolve_format(fmt: str | None) -> str:
    """--format, else $FERTILITY_FORMAT (checked, since click does not see it), else table."""
    if fmt:
        return fmt
    value = os.environ.get("FERTILITY_FORMAT") or "table"
    if value not in FORMATS:
        raise OutputError(f"FERTILITY_FORMAT={value!r} is not a format; "
                          f"choose one of {', '.join(FORMATS)}")
    return value


# what a file name promises; -o audit.json without -f json wrote the text table into it
SUFFIX_FORMATS = {".json": "json", ".csv": "csv", ".md": "markdown", ".html": "html", ".htm": "html"}


def warn_of_suffix(output: Path | None, fmt: str, *, given: bool) -> None:
    """When -f was not given and the output file's suffix names another format than the one
    used, say so once the output is known to be written (a suffix never picks the format)."""
    promised = SUFFIX_FORMATS.get(output.suffix.lower()) if output is not None else None
    if given or promised is None or promised == fmt or promised not in FORMATS:
        return
    import warnings

    from fertility.errors import FertilityWarning

    chosen_by = "$FERTILITY_FORMAT" if os.environ.get("FERTILITY_FORMAT") else "the default format"
    warnings.warn(f"{output}: written as {fmt} ({chosen_by}); for {promised}, pass -f {promised}",
                  FertilityWarning, stacklevel=2)


def tokenizer_inputs(specs, option: str = "-t") -> list[Input]:
    return [Input(option, spec_path(spec)) for spec in specs if spec]


def corpus_inputs(paths, option: str = "CORPUS") -> list[Input]:
    """The corpus paths, or the bundled samples a command reads when none is given."""
    if not paths:
        from fertility.io.samples import samples_dir
        return [Input(f"{option} (the bundled samples, read by default)", samples_dir())]
    return [Input(option, path) for path in paths]


def cache_input(enabled: bool = True) -> list[Input]:
    """The unit-profile cache: an output must not replace one of its entries."""
    if not enabled:
        return []
    from fertility.caches import cache_dir
    return [Input("the profile cache ($FERTILITY_CACHE_DIR)", cache_dir(), whole=False)]


PARALLEL_HELP = ("State that line i is the same content in every language (premiums need it; "
                 "aligned files such as FLORES-200 and NTREX prove it themselves).")


TOKENIZER_HELP = (f"Tokenizer spec, repeatable: a path (recognised by content), "
                  f"SCHEME:REF with scheme {', '.join(BACKENDS)}, a hub id ORG/NAME[@REVISION] (its "
                  "tokenizer files, downloaded once into the Hugging Face cache), or a model name tiktoken "
                  f"knows (gpt-4o, gpt-4); baselines: {', '.join(BASELINES)}. "
                  f"NAME=SPEC names it in every table, chart and JSON (an existing path is never split). "
                  f"Default: {', '.join(DEFAULT_TOKENIZERS)}.")


def write_or_echo(text: str, output: Path | None, force: bool) -> None:
    if output is None:
        click.echo(text, nl=False)
    else:
        write_output(output, text, force=force)
        click.echo(f"wrote {output}", err=True)


def emit(fmt: str, output: Path | None, force: bool, *, result, findings: bool = True, by: str = "lang") -> None:
    """Render an AuditResult to stdout or write it atomically to --output. The table format
    fits a terminal by dropping whole columns; off a terminal it is the full table."""
    shown = list(result.findings) if findings else None
    if fmt == "json":  # the result written out: no table renderer (nor rich) to load
        write_or_echo(result.to_json(by=by, findings=findings), output, force)
        return
    from fertility.report import tables as render

    if fmt == "table" and output is None and (console := make_console()).is_terminal:
        render.print_table(console, result.to_frame(by=by), result.signature, findings=shown, width=console.width)
        if getattr(result, "intervals", None) and by == "lang":
            from fertility.io.sampling import footer
            console.print(footer(result), end="", highlight=False)
        return
    text = {
        "html": lambda: _audit_html(result, findings),
        "csv": lambda: render.to_csv(result.to_frame(by=by)),
        "markdown": lambda: render.to_markdown(result.to_frame(by=by), result.signature, findings=shown),
        "table": lambda: render.to_text_table(result.to_frame(by=by), result.signature, findings=shown),
    }[fmt]()
    if fmt in ("table", "markdown") and getattr(result, "intervals", None) and by == "lang":
        from fertility.io.sampling import footer
        text += footer(result)
    write_or_echo(text, output, force)


def _audit_html(result, findings: bool) -> str:
    """The page of the audit's JSON: `fertility report` on the saved JSON draws the same page."""
    from fertility.report.contents import audit_report
    from fertility.report.html import page
    return page(audit_report(result, findings=findings))
