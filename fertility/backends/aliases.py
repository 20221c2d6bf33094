"""Model names as tokenizers: `-t gpt-4o` is the encoding tiktoken itself maps that model to.

The table is tiktoken's own (`tiktoken.model`: exact names, then prefixes such as `gpt-4o-` or
`ft:gpt-4`), so fertility never keeps a second copy that could drift. The encoding comes from the
offline sources named encodings always use (tiktoken's cache, an installed package); the row is
named as asked (`gpt-4o`) and the signature gives both the alias and the encoding.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import TokenizerError

if TYPE_CHECKING:
    from . import Tokenizer

# Encodings that differ from a named one only in special tokens, which fertility never counts.
SAME_RANKS = {"o200k_harmony": "o200k_base"}


def encoding_for(name: str) -> str | None:
    """The encoding tiktoken maps a model name to, or None when it is no model name it knows."""
    if not name or "/" in name or name.startswith(("tiktoken:", "hf:")):
        return None
    from tiktoken.model import encoding_name_for_model

    try:
        return encoding_name_for_model(name)
    except KeyError:
        return None


def load_alias(name: str, encoding: str) -> Tokenizer:
    """The model's encoding, loaded offline, named after the model."""
    import tiktoken

    from ._tiktoken import NAMED_ENCODINGS, load_named, tiktoken_cache_dir
    from .hub import Described

    counted = SAME_RANKS.get(encoding, encoding)
    if counted not in NAMED_ENCODINGS:
        raise TokenizerError(f"{name}: tiktoken {tiktoken.__version__} maps it to {encoding}, which fertility "
                             f"does not know ({', '.join(n for n in NAMED_ENCODINGS if n != 'gpt2')})")
    try:
        tokenizer = load_named(counted)
    except TokenizerError:
        raise TokenizerError(
            f"{name}: tiktoken maps it to {counted}, which is not available offline here (not in tiktoken's cache "
            f"{tiktoken_cache_dir()} and no installed package bundles it); get it once where there "
            f"is a network with: python -c \"import tiktoken; tiktoken.get_encoding('{counted}')\" (it stays in "
            f"that cache; set TIKTOKEN_CACHE_DIR to keep it elsewhere), or give the file: "
            f"-t tiktoken:path/to/{counted}.tiktoken") from None
    extra = {"alias": name, "encoding": encoding,
             "alias_table": f"tiktoken {tiktoken.__version__} (tiktoken.model)"}
    if counted != encoding:
        extra["counted_as"] = f"{counted} (same ranks and split pattern; only special tokens differ, never counted)"
    return Described(tokenizer, name=name, extra=extra)

