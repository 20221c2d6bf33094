"""A check's settings: `[tool.fertility]` of a pyproject.toml or a fertility.toml, found from the
folder the command runs in, with the options given over it, validated key by key.

A typo in a key or a threshold out of its range is a configuration error (exit 2), never a
silent pass: a gate that checks nothing must not look like a gate that passed.
"""

from __future__ import annotations

import difflib
import math
import tomllib
from dataclasses import dataclass
from pathlib import Path

from fertility.errors import UsageError
from fertility.io.numbers import describe_range, real
from fertility.limits import read_file_capped

# A config is read whole: a pyproject.toml of a large project is tens of kilobytes, so 16 MiB is
# far above any real one and keeps `--config /dev/zero` (or a huge file) from exhausting memory.
MAX_CONFIG_BYTES = 1 << 24

PER_LANGUAGE = ("min_chars_per_token", "max_premium", "max_grapheme_cut_share", "max_unknown_share")
SETTINGS = ("tokenizer", "corpus", "per_file", "reference", "pattern", "normalize", "baseline", "max_regression",
            "parallel")
KEYS = (*SETTINGS, *PER_LANGUAGE)

@dataclass(frozen=True)
class GateConfig:
    tokenizer: str
    corpus: list[str]
    per_file: bool = False
    reference: str = "eng_Latn"
    pattern: str | None = None
    normalize: str | None = None  # nfc, nfkc, none; default: what the tokenizer's runtime does
    baseline: str | None = None
    max_regression: float | None = None
    limits: dict[str, dict[str, float]] | None = None  # threshold -> {lang or "*": limit}
    source: str = "options"
    parallel: bool = False  # the user states that line i is the same content in every language
    from_options: frozenset[str] = frozenset()  # keys the command line set over the file

    def where(self, key: str) -> str:
        """Who set `key`, for a message about it: its option when the command line gave it (a
        file's name would send the user to a file that does not hold the value), else the file."""
        return _where(key, self.source, self.from_options)


def _where(key: str, source: str, from_options: frozenset[str]) -> str:
    return f"--{key.replace('_', '-')}" if key in from_options else source


# Where each threshold means something: (low, high, low_open, high_open, what it is). NaN and
# infinities are refused for all of them (NaN passes every comparison a check makes).
THRESHOLD_RANGES: dict[str, tuple[float, float, bool, bool, str]] = {
    "min_chars_per_token": (0.0, math.inf, False, False, "characters per token"),
    "max_premium": (0.0, math.inf, True, False, "tokens against the reference's"),
    "max_grapheme_cut_share": (0.0, 1.0, False, False, "a share of token boundaries"),
    "max_unknown_share": (0.0, 1.0, False, False, "a share of tokens"),
    "max_regression": (0.0, 1.0, False, True, "a relative loss of chars/token, e.g. 0.02 for 2%"),
}


def _suggest(key: str) -> str:
    close = difflib.get_close_matches(key, KEYS, n=1)
    return (f" (did you mean {close[0]!r}?)" if close else "") + f"; known keys: {', '.join(KEYS)}"


def threshold(value: object, *, key: str, where: str) -> float:
    """A threshold's value, finite and in its range (`where` names it in the message)."""
    low, high, low_open, high_open, what = THRESHOLD_RANGES[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):  # TOML's "2" is a slip, not 2
        raise UsageError(f"{where} must be a number, not {value!r}")
    try:
        return real(value, option=where, low=low, high=high, low_open=low_open, high_open=high_open)
    except UsageError:
        raise UsageError(f"{where} must be a finite number{describe_range(low, high, low_open, high_open)} "
                         f"({what}), not {value!r}") from None


def load_config(path: Path) -> tuple[dict, str]:
    """The raw table: `[tool.fertility]` of a pyproject.toml, or all of a fertility.toml."""
    raw = read_file_capped(path, MAX_CONFIG_BYTES, "configuration file", UsageError)
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise UsageError(f"{path}: invalid TOML ({err})") from None
    except ValueError as err:  # an integer of over 4,300 digits, which Python will not convert
        raise UsageError(f"{path}: invalid TOML ({err})") from None
    except RecursionError:  # tomllib recurses once per nested array or inline table
        raise UsageError(f"{path}: invalid TOML (arrays or inline tables nested too deeply to read)") from None
    if path.name == "pyproject.toml":
        tool = data.get("tool", {})
        table = tool.get("fertility") if isinstance(tool, dict) else None
        if not isinstance(tool, dict):
            raise UsageError(f"{path}: 'tool' must be a table, not {type(tool).__name__} ({tool!r:.40})")
        if table is None:
            raise UsageError(f"{path}: no [tool.fertility] table")
        if not isinstance(table, dict):
            raise UsageError(f"{path}: [tool.fertility] must be a table of settings, not "
                             f"{type(table).__name__} ({table!r:.40})")
        return table, f"{path} [tool.fertility]"
    tool = data.get("tool")
    if isinstance(tool, dict) and "fertility" in tool:  # pyproject's layout copied into another file
        raise UsageError(f"{path}: a [tool.fertility] table is read from pyproject.toml only; in {path.name}, "
                         "write its keys at the top level (without the [tool.fertility] line)")
    return data, str(path)


def find_config(folder: Path) -> Path | None:
    for name in ("fertility.toml", "pyproject.toml"):
        candidate = folder / name
        if candidate.is_file() and (name == "fertility.toml" or
                                    b"[tool.fertility" in read_file_capped(candidate, MAX_CONFIG_BYTES,
                                                                           "configuration file", UsageError)):
            return candidate
    return None


PATH_KEYS = ("tokenizer", "corpus", "baseline")


def resolve_paths(table: dict, base: Path) -> dict:
    """Paths written in a config file are relative to that file's folder (command-line values
    are not passed through here: they are relative to where the command runs)."""
    def resolve(value):
        if isinstance(value, str) and not Path(value).is_absolute() and (base / value).exists():
            return str(base / value)
        return value
    out = dict(table)
    for key in PATH_KEYS:
        if key in out:
            out[key] = [resolve(v) for v in out[key]] if isinstance(out[key], list) else resolve(out[key])
    return out


def _typed(table: dict, key: str, kind: type, source: str, what: str):
    value = table.get(key)
    if value is not None and (not isinstance(value, kind) or (kind is not bool and isinstance(value, bool))):
        raise UsageError(f"{source}: {key} must be {what}, not {value!r}")
    return value


def gather_config(config_path: Path | None, overrides: dict, *, cwd: Path) -> tuple[dict, str, Path | None]:
    """The settings of a check: the config file given, else the one found from `cwd`
    (fertility.toml, pyproject.toml's [tool.fertility]), its paths resolved against its
    folder, then the options given (None: not given) over it. Returns (table, where the
    settings came from, the config file or None)."""
    path = config_path or find_config(cwd)
    table: dict = {}
    source = "options"
    if path is not None:
        table, source = load_config(path)
        table = resolve_paths(table, path.parent)
    return {**table, **{k: v for k, v in overrides.items() if v is not None}}, source, path


def listed_corpora(table: dict) -> list[str]:
    """The corpus paths a settings table names (one string or a list), before it is validated."""
    corpus = table.get("corpus")
    listed = [corpus] if isinstance(corpus, str) else corpus if isinstance(corpus, list) else []
    return [c for c in listed if isinstance(c, str)]


def parse_config(table: dict, *, source: str, from_options: frozenset[str] = frozenset()) -> GateConfig:
    """Validate keys and types: a typo or a wrong type is a configuration error (`from_options`:
    the keys the command line set, named by their option in messages)."""
    for key in table:
        if key not in KEYS:
            raise UsageError(f"{source}: unknown key {key!r}{_suggest(key)}")
    limits: dict[str, dict[str, float]] = {}
    for key in PER_LANGUAGE:
        if key not in table:
            continue
        value = table[key]
        if isinstance(value, dict):
            if not value:
                raise UsageError(f"{source}: {key} is an empty table; give LANG = limit (\"*\" for every language)")
            limits[key] = {lang: threshold(limit, key=key, where=f"{source}: {key}.{lang}")
                           for lang, limit in value.items()}
        else:
            limits[key] = {"*": threshold(value, key=key, where=f"{source}: {key}.*")}
    tokenizer = _typed(table, "tokenizer", str, source, "a tokenizer spec (a string)")
    if not tokenizer:
        raise UsageError(f"{source}: missing key 'tokenizer' (a tokenizer spec)")
    corpus = table.get("corpus", [])
    corpus = [corpus] if isinstance(corpus, str) else corpus
    if not isinstance(corpus, list) or not all(isinstance(c, str) for c in corpus):
        raise UsageError(f"{source}: corpus must be a path or a list of paths")
    regression = table.get("max_regression")
    if regression is not None:
        regression = threshold(regression, key="max_regression", where=f"{source}: max_regression")
    baseline = _typed(table, "baseline", str, source, "a path to an audit JSON (a string)")
    if regression is not None and baseline is None:
        raise UsageError(f"{_where('max_regression', source, from_options)}: max_regression needs a baseline "
                         "audit JSON (--baseline, or the key 'baseline')")
    return GateConfig(tokenizer=tokenizer, corpus=corpus,
                      per_file=_typed(table, "per_file", bool, source, "true or false") or False,
                      reference=_typed(table, "reference", str, source, "a language key (a string)") or "eng_Latn",
                      pattern=_typed(table, "pattern", str, source, "a pattern name or regex (a string)"),
                      normalize=_typed(table, "normalize", str, source, "nfc, nfkc or none (a string)"),
                      baseline=baseline, max_regression=float(regression) if regression is not None else None,
                      limits=limits, source=source,
                      parallel=_typed(table, "parallel", bool, source, "true or false") or False,
                      from_options=from_options)
