"""fertility: audit how much text each language gets per token.

The public API is what this module names; everything else is internal.
"""

from .audit import audit
from .backends import Tokenizer, load_tokenizer
from .corpus import Corpus, Document, read_corpus
from .errors import CorpusError, FertilityError, InputError, TokenizerError, UsageError
from .results import AuditResult, Counts
from .version import __version__

__all__ = [
    "AuditResult", "Corpus", "CorpusError", "Counts", "Document", "FertilityError", "InputError",
    "Tokenizer", "TokenizerError", "UsageError", "__version__", "audit", "load_tokenizer",
    "read_corpus",
]
