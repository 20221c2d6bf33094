"""`retrain` and `extend`: a new tokenizer from a corpus, or more tokens for an existing one."""

from __future__ import annotations

from pathlib import Path

import click

from fertility.choices import (
    BALANCES,
    DEFAULT_GLOBAL_MERGES,
    DEFAULT_PARITY_ALPHA,
    DEFAULT_PARITY_VARIANT,
    DEFAULT_SUPERWORDS,
    EXTEND_SPLITS,
    FORMATS,
    MAX_TOKEN_CLUSTERS,
    MIN_ATOM_COUNT,
    PARITY_VARIANTS,
    TRAIN_PATTERN_NAMES,
    TRAINERS,
    UNITS,
)
from fertility.io.output import Input, Output, check_readable, refuse_inputs_as_outputs

from . import options
from .common import cache_input, corpus_inputs, emit, resolve_format, stderr_console, tokenizer_inputs, write_or_echo


@click.command()
@click.argument("corpus", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--vocab-size", type=options.VOCAB_SIZE, required=True, help="Vocabulary size.")
@click.option("-o", "--output", "out_dir", type=click.Path(path_type=Path), required=True,
              help="Folder for tokenizer.json and training.json (new or empty, or holding only those two "
                   "files and --force).")
@click.option("--units", type=click.Choice(UNITS),
              help="bytes: byte-level BPE; graphemes: merges never cut a grapheme cluster "
                   "[default: graphemes with --trainer parity, else bytes].")
@click.option("--pattern", "train_pattern", default="marks", show_default=True, metavar="NAME|REGEX",
              help=f"Pre-tokenizer split: {', '.join(TRAIN_PATTERN_NAMES)} or a regex.")
@click.option("--baseline-pattern", type=click.Choice(["gpt2"]),
              help="Train the naive tokenizer on purpose (the GPT-2 split), for demonstrations.")
@click.option("--weights", metavar="LANG=W,...", help="Sampling multipliers per language, e.g. ben=2,eng=1.")
@click.option("--temperature", type=options.TEMPERATURE, help="Temperature sampling: shares p become p^(1/T).")
@click.option("--balance", type=click.Choice(BALANCES), default="equal", show_default=True,
              help="Without --weights/--temperature: equal characters per language, or as given.")
@click.option("--target-parity", type=click.Path(path_type=Path), metavar="PARALLEL_DEV",
              help="Retrain with weights moved until premiums on this parallel dev set approach 1.0.")
@click.option("--trainer", type=click.Choice(TRAINERS),
              help="bpe: BpeTrainer (with --target-parity: reweighted and retrained); parity: tokenizers' "
                   "ParityBpeTrainer, each merge to the language worst compressed on the dev set, or on "
                   "byte-premium targets without one [default: parity with --target-parity, else bpe].")
@click.option("--parity-variant", type=click.Choice(PARITY_VARIANTS), default=DEFAULT_PARITY_VARIANT,
              show_default=True, help="ParityBpeTrainer variant.")
@click.option("--global-merges", type=options.SHARE, default=DEFAULT_GLOBAL_MERGES, show_default=True,
              metavar="SHARE", help="Share of the merges learned as plain BPE before parity mode.")
@click.option("--parity-alpha", type=options.POSITIVE, default=DEFAULT_PARITY_ALPHA,
              show_default=True, help="Window variant: the ParityBpeTrainer's alpha.")
@click.option("--min-atom-count", type=options.COUNT, default=MIN_ATOM_COUNT, show_default=True,
              help="Parity with grapheme units: a cluster seen fewer times in the distinct training lines is "
                   "spelled in bytes, not an atom (0 or 1: every cluster is one).")
@click.option("--max-token-clusters", type=options.COUNT, default=MAX_TOKEN_CLUSTERS, show_default=True,
              help="Parity with grapheme units: no token longer than this many clusters (0: no cap).")
@click.option("--superwords", type=options.SUPERWORD_SHARE, is_flag=False,
              flag_value=DEFAULT_SUPERWORDS, metavar="[FRACTION]",
              help="Two stages: stage one as without it, then this share of the vocabulary learned across the "
                   "spaces between words (never across sentence ends or lines), with the same trainer "
                   f"[alone: {DEFAULT_SUPERWORDS}].")
@click.option("--reference", default="eng_Latn", show_default=True, metavar="LANG",
              help="Reference language for premiums.")
@click.option("--seed", type=options.SEED, default=0, show_default=True, help="Seed for fractional sampling weights.")
@click.option("--per-file", is_flag=True, help="One training document per file instead of per line.")
@click.option("--compare-with", metavar="[NAME=]SPEC", help="Audit this tokenizer beside the new one.")
@click.option("--held-out", type=click.Path(path_type=Path), multiple=True,
              help="Corpus for the before/after audit (default: the bundled parallel samples).")
@click.option("--force", is_flag=True, help="Replace tokenizer.json and training.json in the output folder.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bars.")
@click.option("-f", "--format", "fmt", type=click.Choice(FORMATS), help="Format of the audit after training.")
def retrain(corpus, vocab_size, out_dir, units, train_pattern, baseline_pattern, weights, temperature,
            balance, target_parity, trainer, parity_variant, global_merges, parity_alpha, min_atom_count,
            max_token_clusters, superwords, reference, seed, per_file, compare_with, held_out, force, quiet, fmt):
    """Train a grapheme-aware BPE (a standard tokenizer.json) that fixes the language balance.

    CORPUS: files or folders; a file's language is its name (ben_Beng.txt) or the nearest
    folder named like a language (mono/ben/news/x.txt is ben). After training, the new
    tokenizer (and --compare-with) is audited on held-out text, with findings.
    """
    from fertility.backends import load_tokenizer
    from fertility.io.corpus_paths import find_files
    from fertility.metrics.balance import parse_pairs
    from fertility.train.output_folder import OUR_FILES
    from fertility.train.output_folder import check_output as check_retrain_output
    from fertility.train.parity_trainer import ParitySettings
    from fertility.train.retrain import retrain as run_retrain
    from fertility.train.retrain_report import report as retrain_report
    from fertility.train.retrain_report import summary as retrain_summary
    from fertility.train.superwords import SuperwordSettings

    fmt = resolve_format(fmt)
    refuse_inputs_as_outputs([*corpus_inputs(corpus), Input("--target-parity", target_parity),
                              *corpus_inputs(held_out, "--held-out"), *tokenizer_inputs([compare_with], "--compare-with"),
                              *cache_input()], [Output("-o", out_dir, OUR_FILES)])
    check_retrain_output(out_dir, force=force)  # every path and option before hours of training
    check_readable(held_out, option="--held-out")
    for path in held_out:
        find_files(path)  # a folder holding no .txt files fails now, not after training
    if compare_with:
        from fertility.backends.labels import split_name

        load_tokenizer(split_name(compare_with)[1], exact_library=True)  # it loads: checked before training
    console = stderr_console()
    result = run_retrain(list(corpus), output=out_dir, vocab_size=vocab_size, units=units,
                         pattern=baseline_pattern or train_pattern,
                         weights=parse_pairs(weights, option="--weights") if weights else None,
                         temperature=temperature, balance=balance, target_parity=target_parity,
                         reference=reference, seed=seed, per_file=per_file, force=force,
                         trainer=trainer, held_out=list(held_out) or None,
                         parity=ParitySettings(variant=parity_variant, global_merges=global_merges,
                                               alpha=parity_alpha, min_atom_count=min_atom_count,
                                               max_token_clusters=max_token_clusters or None),
                         superwords=None if superwords is None else SuperwordSettings(superwords),
                         show_progress=not quiet and console.is_terminal)
    console.print(retrain_summary(result), markup=False)
    report = retrain_report(result, compare_with=compare_with, held_out=list(held_out), reference=reference)
    if fmt == "html":
        from fertility.report.contents import retrain_report as before_after
        from fertility.report.html import page
        write_or_echo(page(before_after(report.after)), None, False)
        return
    emit(fmt, None, False, result=report.after, findings=True)
    if result.held_out_parity is not None and fmt in ("table", "markdown"):
        from fertility.train.parity import render_parity
        click.echo(render_parity(result.held_out_parity))
    if result.superwords is not None and fmt in ("table", "markdown"):
        from fertility.train.superword_report import render_superwords
        click.echo(render_superwords(result.superwords))


@click.command()
@click.argument("base", type=click.Path(path_type=Path))
@click.argument("corpus", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--add", "add", type=options.TOKENS_TO_ADD, required=True, metavar="N", help="How many tokens to add.")
@click.option("-o", "--output", "out_dir", type=click.Path(path_type=Path), required=True,
              help="Folder for tokenizer.json and training.json (new or empty, or holding only those two "
                   "files and --force).")
@click.option("--split", type=click.Choice(EXTEND_SPLITS), default="keep", show_default=True,
              help="keep: the base pre-tokenizer as it is; marks: combining marks stay with their letters "
                   "(reports which held-out lines that alone changes).")
@click.option("--held-out", type=click.Path(path_type=Path), multiple=True,
              help="Corpus for the before/after audit and the changed-lines report "
                   "(default: the bundled parallel samples).")
@click.option("--reference", default="eng_Latn", show_default=True, metavar="LANG",
              help="Reference language for premiums.")
@click.option("--force", is_flag=True, help="Replace tokenizer.json and training.json in the output folder.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bars.")
@click.option("-f", "--format", "fmt", type=click.Choice(FORMATS), help="Format of the before/after audit.")
def extend(base, corpus, add, out_dir, split, held_out, reference, force, quiet, fmt):
    """Add N tokens for the corpus's languages to a byte-level BPE tokenizer.json.

    Every existing id and merge stays: new tokens get ids after the last one and new merges
    rank after the old, and each new token holds bytes only the corpus's scripts use, so text
    in other scripts encodes to the same ids. BASE is audited beside the result on held-out text.
    """
    from fertility.io.corpus_paths import find_files
    from fertility.train.extend import extend as run_extend
    from fertility.train.output_folder import OUR_FILES
    from fertility.train.output_folder import check_output as check_retrain_output
    from fertility.train.retrain_report import audit_extended, extend_summary

    fmt = resolve_format(fmt)
    refuse_inputs_as_outputs([Input("BASE", base), *corpus_inputs(corpus), *corpus_inputs(held_out, "--held-out"),
                              *cache_input()], [Output("-o", out_dir, OUR_FILES)])
    check_retrain_output(out_dir, force=force)  # every path and option before the work
    check_readable([base, *corpus], option="extend")
    check_readable(held_out, option="--held-out")
    for path in held_out:
        find_files(path)
    console = stderr_console()
    result = run_extend(base, list(corpus), add=add, output=out_dir, split=split,
                        check_corpus=list(held_out) or None, force=force,
                        show_progress=not quiet and console.is_terminal)
    for line in extend_summary(result.record, out_dir, asked=add):
        console.print(line, markup=False)
    after = audit_extended(base, out_dir, list(held_out), reference=reference)
    emit(fmt, None, False, result=after, findings=True)
