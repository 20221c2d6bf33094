"""`check`: thresholds for CI, with JUnit, a markdown summary and a JSON verdict."""

from __future__ import annotations

import os
from pathlib import Path

import click

from fertility.errors import EXIT_THRESHOLD_FAILED, OutputError, ThresholdFailed, UsageError
from fertility.io.output import (
    Input,
    Output,
    check_append_target,
    check_output_file,
    output_target,
    refuse_inputs_as_outputs,
    write_output,
)

from . import options
from .common import PARALLEL_HELP, cache_input, corpus_inputs, hub_options, make_console, tokenizer_inputs


def _limits(text: str | None, option: str) -> dict[str, float] | None:
    """`0.05` (every language) or `ben_Beng=3.5,eng_Latn=4` -> {lang or "*": limit}."""
    if text is None:
        return None
    from fertility.io.numbers import real
    from fertility.metrics.balance import parse_pairs

    if "=" in text:
        return parse_pairs(text, option=option)
    return {"*": real(text, option=option)}  # finite; its range is the gate's to check


@click.command()
@click.option("--config", "config_path", type=click.Path(path_type=Path, dir_okay=False),
              help="fertility.toml or pyproject.toml ([tool.fertility]); default: found in the current folder.")
@click.option("-t", "--tokenizer", metavar="[NAME=]SPEC", help="Tokenizer to check (overrides the config).")
@click.argument("corpus", nargs=-1, type=click.Path(path_type=Path))
@click.option("--min-chars-per-token", metavar="V|LANG=V,...", help="Minimum chars/token.")
@click.option("--max-premium", metavar="V|LANG=V,...", help="Maximum premium against --reference.")
@click.option("--max-grapheme-cut-share", metavar="V|LANG=V,...", help="Maximum share of token boundaries inside graphemes.")
@click.option("--max-unknown-share", metavar="V|LANG=V,...", help="Maximum share of unknown tokens.")
@click.option("--baseline", type=click.Path(path_type=Path, dir_okay=False), help="Audit JSON to compare against.")
@click.option("--max-regression", type=options.NUMBER, help="Largest relative chars/token loss per language vs --baseline.")
@click.option("--reference", metavar="LANG", help="Reference language for premiums (default eng_Latn).")
@click.option("--parallel", is_flag=True, default=None, help=PARALLEL_HELP + " Key: parallel = true.")
@click.option("--normalize", type=click.Choice(["nfc", "nfkc", "none"]), default=None,
              help="Unicode normalization before tokenizing (chars and bytes stay the raw text's). "
                   "Default: what the tokenizer's runtime does, when known (Qwen: nfc), else none.")
@click.option("--junit", type=click.Path(path_type=Path), help="Write JUnit XML: one test per threshold.")
@click.option("--summary", type=click.Path(path_type=Path),
              help="Append a markdown summary here (default: $GITHUB_STEP_SUMMARY when set).")
@click.option("-f", "--format", "fmt", type=click.Choice(["table", "json", "html"]), default="table",
              show_default=True, help="json: the verdict (schema_version 1: each threshold's limit, measured "
                                      "value and pass/fail, and the signature); html: the checks with the "
                                      "audit's charts, as one self-contained page.")
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Write the table, JSON or page here (`-`: stdout).")
@click.option("--force", is_flag=True, help="Overwrite --output if it exists.")
@hub_options
@click.option("-q", "--quiet", is_flag=True,
              help="Print nothing on a pass or a failed threshold: the exit code tells (files asked for are written).")
@click.option("-j", "--jobs", type=options.JOBS, metavar="N",
              help="Worker processes [default: every core]; results are identical for any N.")
def check(config_path, tokenizer, corpus, min_chars_per_token, max_premium, max_grapheme_cut_share,
          max_unknown_share, baseline, max_regression, reference, parallel, normalize, junit, summary, fmt, output,
          force, quiet, jobs):
    """CI gate: exit 0 when every threshold holds, 1 when one fails, 2 for a config error.

    Thresholds come from [tool.fertility] in pyproject.toml or a fertility.toml (keys:
    tokenizer, corpus, per_file, reference, parallel, pattern, normalize, baseline, max_regression,
    min_chars_per_token, max_premium, max_grapheme_cut_share, max_unknown_share; per-language
    limits as tables, "*" for every language); options override the file. max_premium needs
    parallel text: aligned files, or parallel = true.
    """
    from fertility.gate import run as run_gate
    from fertility.gate.config import gather_config, listed_corpora, parse_config
    from fertility.report import tables as render

    target = summary or (Path(os.environ["GITHUB_STEP_SUMMARY"]) if os.environ.get("GITHUB_STEP_SUMMARY") else None)
    overrides = {"tokenizer": tokenizer, "corpus": [str(c) for c in corpus] or None,
                 "min_chars_per_token": _limits(min_chars_per_token, "--min-chars-per-token"),
                 "max_premium": _limits(max_premium, "--max-premium"),
                 "max_grapheme_cut_share": _limits(max_grapheme_cut_share, "--max-grapheme-cut-share"),
                 "max_unknown_share": _limits(max_unknown_share, "--max-unknown-share"),
                 "baseline": str(baseline) if baseline else None, "max_regression": max_regression,
                 "reference": reference, "normalize": normalize, "parallel": parallel}
    table, source, path = gather_config(config_path, overrides, cwd=Path.cwd())
    refuse_inputs_as_outputs(
        [Input("--config", path), *tokenizer_inputs([t for t in [table.get("tokenizer")] if isinstance(t, str)]),
         *corpus_inputs(listed_corpora(table)),
         *([Input("baseline", table["baseline"])] if isinstance(table.get("baseline"), str) else []),
         *cache_input()],
        [Output("-o", output), Output("--junit", junit), Output("--summary", target)])
    check_append_target(target, option="--summary")  # both reports' places, before the audit
    check_output_file(junit, force=True, option="--junit")
    output = output_target(output, force=force)
    if fmt == "html":
        from fertility.report.html import bundle
        bundle()  # vl-convert-python is there, before the audit
    if path is None and not tokenizer:
        raise UsageError("nothing to check: no fertility.toml or [tool.fertility] here and no -t SPEC")
    config = parse_config(table, source=source,
                          from_options=frozenset(key for key, value in overrides.items() if value is not None))
    report = run_gate(config, jobs=jobs)
    if fmt == "html":
        from fertility.report.contents import gate_report
        from fertility.report.html import page
        text = page(gate_report(report))
    elif fmt == "json":
        text = report.to_json()
    else:
        text = render.gate_text(report.checks) if output is not None else None
    if output is not None:
        write_output(output, text or "", force=force)
        if not quiet:
            click.echo(f"wrote {output}", err=True)
    elif quiet:
        pass
    elif text is not None:
        click.echo(text, nl=False)
    else:
        render.print_gate(make_console(), report.checks)
    if target is not None:
        try:
            with open(target, "a", encoding="utf-8") as handle:
                handle.write(report.markdown())
        except OSError as err:
            raise OutputError(f"{target}: cannot write the summary ({err.strerror})") from None
    if junit is not None:
        write_output(junit, report.junit(), force=True)
    if not report.passed:
        if quiet:
            raise click.exceptions.Exit(EXIT_THRESHOLD_FAILED)
        raise ThresholdFailed(report.verdict())
