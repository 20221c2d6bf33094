"""fertility: audit how much text each language gets per token.

The public API is what this module names; everything else is internal.
"""

from .audit import audit
from .backends import Tokenizer, load_tokenizer
from .compare import compare_live as compare
from .compare import compare_saved
from .corpus import Corpus, Document, read_corpus
from .diagnose import Finding, Thresholds
from .errors import CorpusError, FertilityError, InputError, TokenizerError, UsageError
from .results import AuditResult, Counts
from .retrain import retrain
from .train import train_tokenizer
from .version import __version__

__all__ = [
    "AuditResult", "Corpus", "CorpusError", "Counts", "Document", "FertilityError", "Finding",
    "InputError", "Thresholds", "Tokenizer", "TokenizerError", "UsageError", "__version__", "audit",
    "compare", "compare_saved", "load_tokenizer", "read_corpus", "retrain", "train_tokenizer",
]
