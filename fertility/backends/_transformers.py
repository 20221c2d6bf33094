"""Folders only `transformers` can read (a BERT vocab.txt, a slow-only T5/XLM-R folder, ...).

`transformers.AutoTokenizer` builds them offline (`local_files_only`), never running a
repository's own code (`trust_remote_code=False`); we count with the `tokenizers` object it
converts them to (`backend_tokenizer`), as its fast tokenizer counts. Optional: install
`fertility[transformers]` (no torch needed).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from fertility.errors import TokenizerError

from ._common import display_name
from ._hf import HFTokenizer


class TransformersTokenizer(HFTokenizer):
    def __init__(self, folder: Path, built, class_name: str, version: str):
        super().__init__(folder / "tokenizer_config.json", name=display_name(folder / "tokenizer.json"), built=built)
        self.class_name, self.version = class_name, version

    def info(self) -> dict[str, str]:
        # the config alone does not pin the vocabulary: hash what counts, the converted tokenizer
        converted = hashlib.sha256(self.tokenizer.to_str().encode("utf-8")).hexdigest()
        return {**super().info(), "backend": "transformers", "sha256": f"{converted} (converted tokenizer)",
                "model": f"{self.class_name} -> {type(self.tokenizer.model).__name__}",
                "library": f"transformers {self.version} (converted), {super().info()['library']}"}


def load(reference: str, *, pattern: str | None = None) -> TransformersTokenizer:
    """A model folder `transformers` can read (`pattern` ignored)."""
    folder = Path(reference)
    if folder.is_file():
        folder = folder.parent
    if not folder.is_dir():
        raise TokenizerError(f"{reference}: no such folder")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")  # its "PyTorch was not found" is no news to us
    try:
        import transformers
    except ImportError:
        raise TokenizerError(f"{folder}: only transformers can read this folder; install it with "
                             "pip install 'fertility[transformers]' (no torch needed)") from None
    try:
        loaded = transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True,
                                                            trust_remote_code=False)
    except Exception as err:  # noqa: BLE001 - transformers raises many types for unreadable folders
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise TokenizerError(f"{folder}: transformers cannot load this tokenizer ({first[:200]})") from None
    built = getattr(loaded, "backend_tokenizer", None)
    if built is None:
        raise TokenizerError(f"{folder}: {type(loaded).__name__} has no fast (tokenizers) form to count with")
    return TransformersTokenizer(folder, built, type(loaded).__name__, transformers.__version__)
