"""llama.cpp's token types and pre-tokenizer regexes, as its `llm_tokenizer_bpe` runs them,
and the `tokenizer.ggml.pre` names that choose them."""

from __future__ import annotations

# llama.cpp token types (gguf.TokenType)
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6

# The regexes of llama.cpp's llm_tokenizer_bpe, as it writes them (its "adapted" forms, which
# is what it really runs), applied one after the other, each splitting the previous pieces.
_CONTRACTIONS = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"
LLAMA3 = (_CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
          r"|\s+(?!\S)|\s+")
QWEN2 = (_CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
         r"|\s+(?!\S)|\s+")
QWEN35 = (_CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*"
          r"|\s*[\r\n]+|\s+(?!\S)|\s+")
GPT4O = (r"[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+" + _CONTRACTIONS + "?"
         r"|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*" + _CONTRACTIONS + "?"
         r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
TEKKEN = (r"[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+"
          r"|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*"
          r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
# Written as escapes: an editor's NFC would turn U+1F7D into U+03CE and empty the ranges.
_DEEPSEEK_LETTERS = (
    "A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af"
    "\u0370-\u0373\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1"
    "\u03a3-\u03f5\u03f7-\u0481\u048a-\u052f\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd"
    "\u1c90-\u1cba\u1cbd-\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d"
    "\u1f20-\u1f45\u1f48-\u1f4d\u1f50-\u1f57\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4"
    "\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6-\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec"
    "\u1ff2-\u1ff4\u1ff6-\u1ffc\u2102\u2107\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128"
    "\u212a-\u212d\u212f-\u2134\u2139\u213c-\u213f\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b"
    "\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3\ua640-\ua66d\ua680-\ua69b\ua722-\ua76f\ua771-\ua787"
    "\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17\uff21-\uff3a\uff41-\uff5a"
    "\U00010400-\U0001044f\U000104b0-\U000104d3\U000104d8-\U000104fb\U00010c80-\U00010cb2"
    "\U00010cc0-\U00010cf2\U000118a0-\U000118df\U0001e900-\U0001e943")
_DEEPSEEK_PUNCT = "!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002"
_CJK = "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+"
_BLOOM = " ?[^(\\s|.,!?\u2026\u3002\uff0c\u3001\u0964\u06d4\u060c)]+"

PRE_REGEXES: dict[str, list[str]] = {
    "default": [r"[\p{P}\$\+<=>\^~\|]+", GPT2, r"\p{N}+", "[0-9][0-9][0-9]"],
    "llama3": [LLAMA3],
    "dbrx": [LLAMA3],
    "chatglm4": [LLAMA3],
    "deepseek-llm": ["[\r\n]", "\\s?[" + _DEEPSEEK_LETTERS + "]+", "\\s?[" + _DEEPSEEK_PUNCT + "]+",
                     r"\s+\z", _CJK, r"\p{N}+"],
    "deepseek-coder": ["[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", _CJK, r"\p{N}"],
    "falcon": [r"[\p{P}\$\+<=>\^~\|`]+", GPT2, "[0-9][0-9][0-9]"],
    "starcoder": [r"\p{N}", GPT2],
    "gpt2": [GPT2],
    "qwen2": [QWEN2],
    "qwen35": [QWEN35],
    "bloom": [_BLOOM],
    "viking": [_BLOOM, r"\p{N}"],
    "tekken": [TEKKEN],
    "gpt4o": [GPT4O],
}
# `tokenizer.ggml.pre` names -> (regex family, ignore_merges), as llama_vocab::impl::load maps them.
PRE_NAMES: dict[str, tuple[str, bool]] = {
    "default": ("default", False),
    **dict.fromkeys(["llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0",
                     "lfm2"], ("llama3", True)),
    "deepseek-llm": ("deepseek-llm", False),
    "deepseek-coder": ("deepseek-coder", False),
    "falcon": ("falcon", False),
    **dict.fromkeys(["mpt", "olmo", "jais", "trillion", "granite-docling", "gpt-2", "phi-2", "jina-es",
                     "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum",
                     "modern-bert", "jina-v1-en", "jina-v2-code", "roberta-bpe", "exaone4"], ("gpt2", False)),
    **dict.fromkeys(["starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b"],
                    ("starcoder", False)),
    **dict.fromkeys(["qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "megrez", "stablelm2"], ("qwen2", False)),
    "qwen35": ("qwen35", False),
    **dict.fromkeys(["dbrx", "smaug-bpe"], ("dbrx", False)),
    "chatglm-bpe": ("chatglm4", False),
    **dict.fromkeys(["glm4", "glm5"], ("chatglm4", True)),
    **dict.fromkeys(["poro-chat", "bloom", "gpt3-finnish"], ("bloom", False)),
    "viking": ("viking", False),
    "tekken": ("tekken", True),
    **dict.fromkeys(["gpt-4o", "llama4", "kanana2", "talkie"], ("gpt4o", False)),
}
