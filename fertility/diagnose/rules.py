"""From counts and evidence to findings: the verdict, the measured figures, the cause, the fix.

Pure judgement: nothing here tokenizes. Each rule reads additive counts, compares against a
named threshold (`Thresholds`), and says in one line what it saw and what to do.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from fertility.io.parallel import NOT_RECORDED, Parallelism
from fertility.metrics.balance import budget, gini, inversions, premiums
from fertility.metrics.counts import Counts, ratio
from fertility.results.findings import SEVERITIES, Finding

from .evidence import Evidence


@dataclass(frozen=True)
class Thresholds:
    premium_warning: float = 1.5  # tokens(lang) / tokens(reference)
    premium_error: float = 3.0
    ceiling_bound: float = 2.5  # chars per pre-token below which a language is capped
    ceiling_reference_min: float = 3.5  # ...while the reference's ceiling is at least this
    mark_cut_share: float = 0.01  # share of pre-token boundaries right before a \p{M}
    grapheme_cut_share: float = 0.05  # share of token boundaries inside a cluster
    unknown_share: float = 0.001
    unknown_inflation_share: float = 0.01  # UNK share above which chars/token is not efficiency
    byte_token_share: float = 0.10
    normalization_change: float = 0.005  # relative change of chars or tokens under NFC
    budget_shift: float = 0.10  # share moved between content and tokens


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def _collapse(pieces: tuple[str, ...]) -> list[str]:
    """Byte tokens of one character repeat it: `[ক] | [ক] | [ক]` reads better as `[ক]×3`."""
    out: list[tuple[str, int]] = []
    for piece in pieces:
        if out and piece == out[-1][0] and piece.startswith("["):
            out[-1] = (piece, out[-1][1] + 1)
        else:
            out.append((piece, 1))
    return [piece if n == 1 else f"{piece}×{n}" for piece, n in out]


def _example(word: str, pieces: tuple[str, ...], *, max_pieces: int = 14) -> str:
    """`word -> piece | piece | ...`, shortened for words as long as a Chinese sentence."""
    collapsed = _collapse(pieces)
    shown = " | ".join(collapsed[:max_pieces]) + (" | …" if len(collapsed) > max_pieces else "")
    label = word if len(word) <= 24 else word[:24] + "…"
    return f"{label} -> {shown}"


def _char_label(char: str) -> str:
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X} {char} {name}".strip()


def diagnose(tokenizers: tuple[str, ...], counts: dict[tuple[str, str], Counts], evidence: Evidence | None,
             *, reference: str = "eng_Latn", mix: dict[str, float] | None = None,
             parallel: Parallelism = NOT_RECORDED, thresholds: Thresholds = Thresholds()) -> list[Finding]:
    """Findings per tokenizer; premiums and their Gini only where `parallel` says the text is."""
    findings: list[Finding] = []
    for tokenizer in tokenizers:
        per_lang = {lang: c for (tok, lang), c in counts.items() if tok == tokenizer}
        findings += _balance(tokenizer, per_lang, reference, mix, parallel, thresholds)
        findings += _coverage(tokenizer, per_lang, evidence, thresholds)
        if evidence is not None:
            findings += _pretokenizer(tokenizer, per_lang, evidence, reference, thresholds)
            findings += _integrity(tokenizer, per_lang, evidence, thresholds)
            findings += _normalization(tokenizer, evidence, thresholds)
    order = {s: i for i, s in enumerate(SEVERITIES)}
    return sorted(findings, key=lambda f: (order[f.severity], tokenizers.index(f.tokenizer)))


def _balance(tokenizer, per_lang, reference, mix, parallel: Parallelism, t) -> list[Finding]:
    out: list[Finding] = []
    # Over text that is not parallel there is no premium and no Gini of premiums; why is said
    # once, by the corpus's decision (the table's note, the signature's `parallel`), not per tokenizer.
    result = premiums(per_lang, reference, parallel=parallel) if reference in per_lang and len(per_lang) > 1 else None
    if result is not None:
        for lang, premium in sorted(result.values.items(), key=lambda kv: -kv[1]):
            if lang == reference or not premium >= t.premium_warning:
                continue
            severity = "error" if premium >= t.premium_error else "warning"
            out.append(Finding(
                "premium", severity, tokenizer, lang,
                {"premium": premium, "reference": reference, "method": result.method,
                 "chars_per_token": ratio(per_lang[lang].n_chars, per_lang[lang].n_tokens),
                 "reference_chars_per_token": ratio(per_lang[reference].n_chars, per_lang[reference].n_tokens)},
                f"{lang} needs {premium:.2f}x the tokens of {reference} for the same content "
                f"({result.method})",
                "give the language more of the vocabulary (balanced training data, see "
                "`fertility retrain`), or budget its context and cost by tokens, not text"))
        values = [v for v in result.values.values()]
        if len(values) >= 3:
            out.append(Finding("gini", "info", tokenizer, None,
                               {"gini": gini(values), "languages": len(values), "method": result.method},
                               f"tokenizer fairness Gini over {len(values)} languages: {gini(values):.3f} "
                               "(0 = every language pays the same)", "compare tokenizers with "
                               "`fertility compare`; lower is fairer"))
    elif reference not in per_lang and parallel.parallel:
        out.append(Finding("no-reference", "info", tokenizer, None, {"reference": reference},
                           f"reference language {reference} is not in the corpus: no premiums",
                           "pass --reference with one of the corpus languages"))
    # Parallel text is not a data mix (its shares only reflect how long each script writes
    # the same content; the premium says it all): the budget is for a real or a given mix.
    if mix or (len(per_lang) > 1 and not parallel.parallel):
        rows = budget(per_lang, mix)
        for row in inversions(rows, threshold=t.budget_shift):
            if row.token_share <= row.content_share:
                continue  # report the expensive side; the cheap side is its mirror image
            out.append(Finding(
                "inverted-balance", "warning", tokenizer, row.lang,
                {"content_share": row.content_share, "token_share": row.token_share,
                 "text_share_by_tokens": row.text_share_by_tokens, "mix": "given" if mix else "corpus"},
                f"{row.lang} is {_pct(row.content_share)} of the text but costs {_pct(row.token_share)} "
                f"of the tokens; a mix set in tokens at {_pct(row.content_share)} would give it only "
                f"{_pct(row.text_share_by_tokens)} of the text per context window",
                "set data mixes in characters or bytes, not tokens, or fix the tokenizer's balance"))
    return out


def _coverage(tokenizer, per_lang, evidence, t) -> list[Finding]:
    out: list[Finding] = []
    for lang, c in per_lang.items():
        top = evidence.offenders.get((tokenizer, lang), []) if evidence else []
        top_text = ", ".join(f"{_char_label(ch)} ({n:,})" for ch, n in top[:3])
        unk = ratio(c.n_unknown_tokens, c.n_tokens)
        if unk > t.unknown_share:
            inflated = unk > t.unknown_inflation_share
            out.append(Finding(
                "unknown-tokens", "error" if inflated else "warning", tokenizer, lang,
                {"unknown_share": unk, "n_unknown_tokens": c.n_unknown_tokens,
                 "chars_per_token": ratio(c.n_chars, c.n_tokens), "top": top},
                f"{_pct(unk)} of {lang} tokens are the unknown token: that text is lost"
                + (f"; its chars/token ({ratio(c.n_chars, c.n_tokens):.2f}) is not efficiency, an UNK "
                   "swallows text" if inflated else "") + (f"; top: {top_text}" if top_text else ""),
                "use a byte-level or byte-fallback tokenizer, or add these characters to the vocabulary"))
        byte = ratio(c.n_byte_tokens, c.n_tokens)
        if byte > t.byte_token_share:
            out.append(Finding(
                "byte-fallback", "warning", tokenizer, lang,
                {"byte_token_share": byte, "n_byte_tokens": c.n_byte_tokens, "top": top},
                f"{_pct(byte)} of {lang} tokens are raw bytes, not whole characters"
                + (f"; top: {top_text}" if top_text else ""),
                "the vocabulary barely covers this script: train with more of it"))
    return out


def _pretokenizer(tokenizer, per_lang, evidence, reference, t) -> list[Finding]:
    out: list[Finding] = []
    name = evidence.pre_tokenizers.get(tokenizer)
    if name is None:
        if tokenizer in evidence.pre_tokenizers and per_lang:
            out.append(Finding("no-pretokenizer", "info", tokenizer, None, {},
                               "no pre-tokenizer (SentencePiece or a baseline): no pre-token ceiling "
                               "applies", "nothing to do"))
        return out
    ref = evidence.pretokens.get((tokenizer, reference))
    ref_ceiling = ratio(ref.n_chars, ref.n_pretokens) if ref else float("nan")
    for lang in per_lang:
        pre = evidence.pretokens.get((tokenizer, lang))
        if pre is None or lang == reference:
            continue
        ceiling = ratio(pre.n_chars, pre.n_pretokens)
        mark_share = ratio(pre.n_mark_cuts, pre.n_boundaries)
        examples = tuple(_example(e.word, e.pieces)
                         for e in evidence.pretoken_examples.get((tokenizer, lang), []))
        # capped: under the bound while the reference is not (or there is no reference to ask)
        capped = ceiling < t.ceiling_bound and (ref is None or ref_ceiling >= t.ceiling_reference_min)
        versus = f"{reference}: {ref_ceiling:.2f}" if ref is not None else f"{reference} not in the corpus"
        if capped:
            out.append(Finding(
                "pretokenizer-ceiling", "error", tokenizer, lang,
                {"chars_per_pretoken": ceiling, "reference": reference,
                 "reference_chars_per_pretoken": ref_ceiling, "pre_tokenizer": name,
                 "chars_per_token": ratio(per_lang[lang].n_chars, per_lang[lang].n_tokens)},
                f"the pre-tokenizer ({name}) caps {lang} at {ceiling:.2f} chars/pre-token ({versus}): "
                "no vocabulary, however large, can beat that",
                "split with a pattern that keeps marks with letters, e.g. [\\p{L}\\p{M}]+ "
                "(`fertility retrain` does)", examples))
        if mark_share > t.mark_cut_share:
            out.append(Finding(
                "marks-cut", "error" if capped else "warning", tokenizer, lang,
                {"n_mark_cuts": pre.n_mark_cuts, "mark_cut_share": mark_share,
                 "pretoken_cut_share": ratio(pre.n_cut_boundaries, pre.n_boundaries), "pre_tokenizer": name},
                f"cause: the pre-tokenizer cuts {pre.n_mark_cuts:,} combining marks (vowel signs, virama, "
                f"nukta: \\p{{M}}) from their base letters in {lang}; "
                f"{_pct(ratio(pre.n_cut_boundaries, pre.n_boundaries))} of its pre-token boundaries fall "
                "inside a grapheme, so no merge can span a word",
                "add \\p{M} wherever the pattern has \\p{L} (e.g. ` ?[\\p{L}\\p{M}]+`)", examples))
    return out


def _integrity(tokenizer, per_lang, evidence, t) -> list[Finding]:
    out: list[Finding] = []
    for lang, c in per_lang.items():
        share = ratio(c.n_cut_boundaries, c.n_boundaries)
        if share > t.grapheme_cut_share:
            examples = tuple(_example(e.word, e.pieces)
                             for e in evidence.token_examples.get((tokenizer, lang), []))
            out.append(Finding(
                "grapheme-cuts", "warning", tokenizer, lang,
                {"grapheme_cut_share": share, "n_cut_boundaries": c.n_cut_boundaries},
                f"{_pct(share)} of {lang} token boundaries fall inside a grapheme cluster "
                "(a letter split from its sign, a conjunct or an emoji cut apart)",
                "train with grapheme units (`fertility retrain --units graphemes`)", examples))
    return out


def _normalization(tokenizer, evidence, t) -> list[Finding]:
    out: list[Finding] = []
    for (tok, lang), n in evidence.normalization.items():
        if tok != tokenizer or not n.n_chars:
            continue
        chars_change = ratio(n.n_chars_nfc - n.n_chars, n.n_chars)
        tokens_change = ratio(n.n_tokens_nfc - n.n_tokens, n.n_tokens)
        if abs(chars_change) < t.normalization_change and abs(tokens_change) < t.normalization_change:
            continue
        out.append(Finding(
            "normalization", "info", tokenizer, lang, n.as_dict(),
            f"NFC would change {lang}: chars {n.n_chars_nfc - n.n_chars:+,} ({100 * chars_change:+.2f}%), "
            f"tokens {n.n_tokens_nfc - n.n_tokens:+,} ({100 * tokens_change:+.2f}%); NFKC tokens "
            f"{n.n_tokens_nfkc - n.n_tokens:+,}; {n.n_decomposable:,} characters NFC rewrites (e.g. ড় ঢ় য়, "
            "decomposed; the net change counts compositions too), "
            f"{n.n_joiners:,} ZWJ/ZWNJ; counts here are of the text as read (no normalization)",
            "normalize corpora and tokenizer input the same way, and report which form you count in"))
    return out
