"""fertility: audit how much text each language gets per token.

The public API is what this module names; everything else is internal. Names are imported on
first use (PEP 562), so `import fertility.cli` and `fertility --help` load no numpy, pandas
or tokenizer library.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from .errors import CorpusError, FertilityError, InputError, TokenizerError, UsageError
from .version import __version__

# public name -> "module:attribute"
_LAZY = {
    "audit": "fertility.audit:audit",
    "Tokenizer": "fertility.backends:Tokenizer",
    "load_tokenizer": "fertility.backends:load_tokenizer",
    "compare": "fertility.compare:compare_live",
    "compare_saved": "fertility.compare:compare_saved",
    "Corpus": "fertility.io.corpus:Corpus",
    "Document": "fertility.io.corpus:Document",
    "read_corpus": "fertility.io.corpus:read_corpus",
    "Finding": "fertility.results.findings:Finding",
    "Thresholds": "fertility.diagnose.rules:Thresholds",
    "AuditResult": "fertility.results.model:AuditResult",
    "Counts": "fertility.metrics.counts:Counts",
    "retrain": "fertility.train.retrain:retrain",
    "Signature": "fertility.results.signature:Signature",
    "train_tokenizer": "fertility.train.bpe:train_tokenizer",
}

if TYPE_CHECKING:
    from fertility.diagnose.rules import Thresholds
    from fertility.io.corpus import Corpus, Document, read_corpus
    from fertility.metrics.counts import Counts
    from fertility.results.findings import Finding
    from fertility.results.model import AuditResult
    from fertility.results.signature import Signature
    from fertility.train.bpe import train_tokenizer
    from fertility.train.retrain import retrain

    from .audit import audit
    from .backends import Tokenizer, load_tokenizer
    from .compare import compare_live as compare
    from .compare import compare_saved


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'fertility' has no attribute {name!r}")
    module, attribute = target.split(":")
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value  # once
    return value


class _Package(types.ModuleType):
    """Importing a submodule sets it as an attribute of the package; where the public name is
    that submodule's function (`audit`, `compare`, `retrain`), keep the function, as an eager
    `from .audit import audit` did."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and name in _LAZY:
            module, attribute = _LAZY[name].split(":")
            if value.__name__ == module:
                value = getattr(value, attribute)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "AuditResult", "Corpus", "CorpusError", "Counts", "Document", "FertilityError", "Finding",
    "InputError", "Signature", "Thresholds", "Tokenizer", "TokenizerError", "UsageError", "__version__",
    "audit", "compare", "compare_saved", "load_tokenizer", "read_corpus", "retrain", "train_tokenizer",
]
