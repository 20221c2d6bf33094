"""Which tokenizers a command was given, and what its rows call them.

A tokenizer arrives as a spec (`hf:tokenizer.json`), as `NAME=SPEC` with a display name, as a
{name: spec} mapping from the library, or as a loaded object; every command and the library
turn them into loaded tokenizers and unique row labels here, so that a name means the same in
a table, a chart, a JUnit file and a saved JSON.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import regex

from fertility.errors import UsageError

from . import Tokenizer, adapt_object, load_tokenizer


def unique_names(tokenizers: Sequence[Tokenizer], specs: Sequence[str],
                 given: Sequence[str | None] | None = None) -> list[str]:
    """Row labels: the display name given (`NAME=SPEC`), else each tokenizer's short name, or
    its full spec where two short names collide. Two tokenizers may not share a label."""
    names = [t.name for t in tokenizers]
    labels = [chosen or (spec if names.count(name) > 1 else name)
              for name, spec, chosen in zip(names, specs, given or [None] * len(names))]
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice and given and any(chosen in twice for chosen in given):
        raise UsageError(f"two tokenizers would be named {twice[0]!r}: give each -t NAME=SPEC its own NAME")
    if twice:
        raise UsageError(f"the same tokenizer is given twice: {', '.join(specs)}")
    return labels


# A display name: letters, digits and `_ . + @ ( ) -` (spaces inside), so that a path (`/`, `\`)
# or a scheme (`hf:`, `tiktoken:`) before an `=` is never taken for one.
_NAME = regex.compile(r"\w(?:[\w .+@()-]{0,78}[\w.+@()-])?")


def split_name(spec: str) -> tuple[str | None, str]:
    """`NAME=SPEC` -> (NAME, SPEC); any other spec -> (None, spec). Split on the first `=` only,
    and only when what precedes it is a name and the whole string is not an existing path (a
    path may hold `=`, as Hive partitions do: the path wins)."""
    name, sep, rest = spec.partition("=")
    if not sep or not _NAME.fullmatch(name) or Path(spec).exists():
        return None, spec
    if not rest.strip():
        raise UsageError(f"-t {spec!r}: no tokenizer spec after '{name}='")
    return name, rest


def named(tokenizers: Any) -> tuple[list[Any], list[str | None]]:
    """Specs (or loaded tokenizers) and their display names: from `NAME=SPEC` strings, or the
    keys of a {name: spec} mapping (the library's way to name them). One spec or object alone
    is a list of one."""
    if isinstance(tokenizers, str) or not isinstance(tokenizers, (Mapping, Sequence)):
        tokenizers = [tokenizers]
    if isinstance(tokenizers, Mapping):
        for name in tokenizers:
            if not isinstance(name, str) or not _NAME.fullmatch(name):
                raise UsageError(f"{name!r} is not a tokenizer name (letters, digits, spaces and _ . + @ ( ) -)")
        return list(tokenizers.values()), list(tokenizers)
    pairs = [split_name(t) if isinstance(t, str) else (None, t) for t in tokenizers]
    return [spec for _, spec in pairs], [name for name, _ in pairs]


def as_tokenizer(given: object, *, pattern: str | None, normalize: str | None,
                 exact_library: bool = False) -> Tokenizer:
    """A spec loaded, a fertility tokenizer as it is, a library's tokenizer object adapted
    (`backends.objects`), anything else one ArgumentTypeError naming it."""
    if isinstance(given, str):
        return load_tokenizer(given, pattern=pattern, normalize=normalize, exact_library=exact_library)
    if isinstance(given, Tokenizer):
        return given
    return adapt_object(given, normalize=normalize)
