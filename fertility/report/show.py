"""`fertility show`: a text with its token boundaries drawn, grapheme-cutting ones marked.

One glance shows the trap: `ক|ি` where a vowel sign was cut from its consonant.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text

from fertility.backends import Tokenizer
from fertility.diagnose.integrity import token_pieces
from fertility.diagnose.pretokens import analyse
from fertility.engine.count import cut_boundaries
from fertility.text.units import profile

CUT = "¦"  # a boundary inside a grapheme cluster
UNKNOWN = "⟪{}⟫"  # the text an unknown token swallowed
BOUNDARY = "|"
_STYLES = ("on grey23", "on grey35")


@dataclass(frozen=True)
class Shown:
    pieces: list[str]
    cuts: list[bool]  # per boundary between pieces
    unknown: list[bool]  # per piece: the unknown token (its text is lost)
    n_chars: int
    n_graphemes: int
    pre_pieces: list[str] | None  # the pre-tokenizer's pieces, when it has one
    pre_cuts: list[bool] | None
    pre_tokenizer: str | None


def show(tokenizer: Tokenizer, text: str) -> Shown:
    prof = profile(text)
    encoded = tokenizer.encode([text])[0]
    cuts = cut_boundaries(prof, encoded).tolist()
    pre = tokenizer.pre_tokenizer()
    pre_pieces = pre_cuts = None
    if pre is not None:
        seen, spans = pre.split(text)
        _, _, cut_positions = analyse(seen, spans)
        pre_pieces = [seen[a:b] for a, b in spans]
        cut_at = set(cut_positions)
        pre_cuts = [a in cut_at for a, _ in spans[1:]]
    unknown = encoded.unknown.tolist() if encoded.unknown is not None else [False] * len(encoded.starts)
    return Shown(token_pieces(text, encoded), cuts, unknown, prof.n_chars, prof.n_graphemes,
                 pre_pieces, pre_cuts, pre.name if pre is not None else None)


def _line(pieces: list[str], cuts: list[bool], *, color: bool, unknown: list[bool] | None = None) -> Text:
    out = Text()
    for index, piece in enumerate(pieces):
        if index:
            cut = cuts[index - 1]
            out.append(CUT if cut else BOUNDARY, style="bold red" if cut else "dim")
        piece = piece.replace("\n", "⏎")
        if unknown and unknown[index]:
            out.append(UNKNOWN.format(piece), style="bold red" if color else None)
        else:
            out.append(piece, style=_STYLES[index % 2] if color else None)
    return out


def render_shown(name: str, shown: Shown, *, color: bool = True) -> Text:
    n_cuts, n_unknown = sum(shown.cuts), sum(shown.unknown)
    out = Text()
    out.append(f"{name}: ", style="bold")
    out.append(f"{len(shown.pieces):,} tokens, {shown.n_chars:,} chars "
               f"({shown.n_chars / len(shown.pieces):.2f} chars/token), "
               f"{n_cuts:,} of {len(shown.cuts):,} boundaries inside a grapheme ({CUT})"
               + (f", {n_unknown:,} unknown {UNKNOWN.format('…')}: text lost" if n_unknown else "") + "\n"
               if shown.pieces else "0 tokens\n")
    out.append("  tokens:      ")
    out.append_text(_line(shown.pieces, shown.cuts, color=color, unknown=shown.unknown))
    out.append("\n")
    if shown.pre_pieces is not None and shown.pre_cuts is not None:
        out.append("  pre-tokens:  ")
        out.append_text(_line(shown.pre_pieces, shown.pre_cuts, color=color))
        out.append(f"\n  ({shown.pre_tokenizer}: {len(shown.pre_pieces):,} pre-tokens, "
                   f"{sum(shown.pre_cuts):,} cuts inside a grapheme)\n", style="dim")
    else:
        out.append("  pre-tokens:  none (no pre-tokenizer)\n", style="dim")
    return out
