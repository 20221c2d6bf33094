"""Every column a person reads, in one registry: its kind (how cells.number shows it) and its
header, short for terminals and Markdown, long for pages and notebooks.

One home, so that a new metric gets its header and its number format once and the terminal
table, the Markdown table, the HTML page and the notebook table never disagree on either. A
column without a short header (the premiums, Rényi efficiency) is left out of the terminal and
Markdown tables (they are in -f csv|json); a column without a long one (raw counts behind a
share) is left off the page.
"""

from __future__ import annotations

from typing import NamedTuple


class Column(NamedTuple):
    kind: str  # text, int, ratio, share (cells.number)
    short: str | None  # terminal and Markdown header; None: not in those tables
    long: str | None  # page and notebook header; None: not on the page


COLUMNS: dict[str, Column] = {
    "tokenizer": Column("text", short="tokenizer", long="tokenizer"),
    "lang": Column("text", short="lang", long="language"),
    "script": Column("text", short="script", long="script"),
    "n_docs": Column("int", short="docs", long="docs"),
    "n_bytes": Column("int", short="bytes", long="bytes"),
    "n_chars": Column("int", short="chars", long="chars"),
    "n_graphemes": Column("int", short="graphemes", long=None),
    "n_words": Column("int", short="words", long=None),
    "n_tokens": Column("int", short="tokens", long="tokens"),
    "n_split_words": Column("int", short="split words", long=None),
    "chars_per_token": Column("ratio", short="chars/tok", long="chars/token"),
    "bytes_per_token": Column("ratio", short="bytes/tok", long="bytes/token"),
    "graphemes_per_token": Column("ratio", short="graph/tok", long=None),
    "tokens_per_word": Column("ratio", short="tok/word", long="tokens/word"),
    "split_word_share": Column("share", short="split %", long="split words"),
    "n_unknown_tokens": Column("int", short="unk", long=None),
    "n_byte_tokens": Column("int", short="byte toks", long=None),
    "n_boundaries": Column("int", short="boundaries", long=None),
    "n_cut_boundaries": Column("int", short="cuts", long=None),
    "unknown_share": Column("share", short="unk %", long="unknown"),
    "byte_token_share": Column("share", short="byte %", long="byte tokens"),
    "grapheme_cut_share": Column("share", short="cut %", long="cuts in graphemes"),
    "n_single_token_words": Column("int", short="1-token words", long=None),
    "n_continuation_tokens": Column("int", short="cont. toks", long=None),
    "single_token_word_share": Column("share", short="1-token word %", long="single-token words"),
    "continuation_token_share": Column("share", short="cont. %", long="continuation tokens"),
    "premium": Column("ratio", short=None, long="premium"),
    "byte_premium": Column("ratio", short=None, long="byte premium"),
    "tokenizer_premium": Column("ratio", short=None, long="tokenizer part"),
    "renyi_efficiency": Column("ratio", short=None, long="Rényi efficiency (α=2.5)"),
}

# The page's order: what a reader compares first (cost, then its causes), every long header once.
PAGE_COLUMNS = ("tokenizer", "lang", "script", "n_docs", "n_bytes", "n_chars", "n_tokens", "chars_per_token",
                "bytes_per_token", "tokens_per_word", "premium", "byte_premium", "tokenizer_premium",
                "grapheme_cut_share", "split_word_share", "unknown_share", "byte_token_share",
                "single_token_word_share", "continuation_token_share", "renyi_efficiency")
# A notebook's glance; `AuditResult.to_frame()` has every column.
GLANCE_COLUMNS = ("n_tokens", "chars_per_token", "bytes_per_token", "tokens_per_word", "premium")
# The terminal table's columns (json/csv/markdown carry every count). On a narrow terminal,
# columns are dropped whole, least important first (DROP_ORDER), and a note names them: a
# number is never cut.
WIDE_COLUMNS = ["tokenizer", "lang", "script", "n_docs", "n_bytes", "n_chars", "n_graphemes", "n_words",
                "n_tokens", "chars_per_token", "bytes_per_token", "graphemes_per_token",
                "tokens_per_word", "split_word_share"]
DROP_ORDER = ["n_graphemes", "n_words", "n_bytes", "n_docs", "n_chars", "n_tokens", "script",
              "split_word_share", "graphemes_per_token", "bytes_per_token", "tokens_per_word"]


def short_columns(present) -> list[str]:
    """The columns of `present`, in its order, that terminal and Markdown tables show."""
    return [c for c in present if c in COLUMNS and COLUMNS[c].short is not None]
