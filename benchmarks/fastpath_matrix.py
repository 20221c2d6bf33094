"""Which (tokenizer x language) cells does the fast path count exactly as the library does?

For every real tokenizer fertility can load here (every backend, GGUF included) and every
FLORES-200 devtest language, the non-empty lines are encoded twice, in batches of about 512 KB
as the engine cuts them: by the fast path (gigatoken's ids, with the spans and kinds fertility
derives from them, no self-check) and by the library backend alone (the arbiter). A cell is
exact when every line has the same tokens: count, ids, spans, unknown and byte flags. A
tokenizer the fast path refuses is listed with the reason; where gigatoken itself can load the
file anyway (e.g. a GGUF SentencePiece vocabulary), its raw ids are compared too, to show
what a future fast path could cover.

Run: python benchmarks/fastpath_matrix.py [--lines N] [--only SUBSTRING] [--extra DIR] [--markdown]
`--extra DIR` adds `o200k_base.tiktoken`, `p50k_base.tiktoken` and `r50k_base.tiktoken` from DIR
(not shipped in any PyPI package; the npm package js-tiktoken carries them, see FASTPATH.md).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from real_files import FIXTURES, SHARED_CORPORA

# Text every fast path must get right beyond FLORES: special and control token strings of the
# families we load, whitespace runs, controls, the SentencePiece space mark, digits, contractions.
ADVERSARIAL = [
    "<|endoftext|>", "a<|endoftext|>b", "<|begin_of_text|>hi<|eot_id|>", "<s> x </s>", "[INST] q [/INST]",
    "<unk>", "<0x41>", "[REF] [/REF]", "<pad>", "[UNK] [CLS]", "  two  spaces  ", "\t\ttabs\t", " lead", "trail ",
    "\u2581mark\u2581", "x\u00a0y\u3000z", "don't I'M it's", "12345678 3.14159 1,000,000", "a/b//c\r\nd\r\n\r\n",
    "e\u0301 \u0915\u094d\u0937 \U0001f469\u200d\U0001f467", "\x00\x01\x7f", "\ufeffBOM", "ABCdef ghIJK Ǆǅǆ",
    "\u202eRTL\u202c", "x" * 3000, "\u0e01" * 500, "\U0001f600" * 200,
]


@dataclass
class Row:
    spec: str
    label: str
    status: str = ""
    cells: dict[str, tuple[int, int]] = field(default_factory=dict)  # lang -> (lines exact, lines)
    first: str = ""
    fast_s: float = 0.0
    library_s: float = 0.0
    routed: int = 0  # batches left to the library (an added token in them, or ids its tables cannot place)


def specs(extra: Path | None) -> list[tuple[str, str, dict]]:
    """(label, spec, load options) of every real tokenizer available on this machine."""
    out: list[tuple[str, str, dict]] = [("cl100k_base", "tiktoken:cl100k_base", {})]
    for name, label in (("gpt2.tiktoken", "r50k_base (Whisper's gpt2.tiktoken)"),
                        ("multilingual.tiktoken", "Whisper multilingual"),
                        ("qwen/qwen.tiktoken", "Qwen qwen.tiktoken (runtime NFC)")):
        if (FIXTURES / name).is_file():
            out.append((label, str(FIXTURES / name), {}))
    if (FIXTURES / "qwen/qwen.tiktoken").is_file():
        out.append(("Qwen qwen.tiktoken --normalize none", str(FIXTURES / "qwen/qwen.tiktoken"), {"normalize": "none"}))
    if extra is not None:
        for name in ("o200k_base", "p50k_base", "r50k_base"):
            if (extra / f"{name}.tiktoken").is_file():
                out.append((name, str(extra / f"{name}.tiktoken"), {}))
    try:
        import mistral_common

        data = Path(mistral_common.__file__).parent / "data"
        out += [(f.name, str(f), {}) for f in sorted(data.glob("tekken*.json"))]
        out += [(f.name, str(f), {}) for f in sorted(data.glob("*.model*"))]
    except ImportError:
        pass
    for name, label in (("llama3/tokenizer.json", "Llama-3 tokenizer.json"),
                        ("minilm/tokenizer.json", "all-MiniLM-L6 (WordPiece) tokenizer.json")):
        if (FIXTURES / name).is_file():
            out.append((label, str(FIXTURES / name), {}))
    out += [(f.name, str(f), {}) for f in sorted((FIXTURES / "gguf").glob("*.gguf"))]
    return out


def batches(lines: list[str], size: int = 512 * 1024) -> list[list[str]]:
    out, current, used = [], [], 0
    for line in lines:
        current.append(line)
        used += len(line.encode("utf-8"))
        if used >= size:
            out.append(current)
            current, used = [], 0
    return out + ([current] if current else [])


def same_tokens(fast, library, texts: list[str]) -> list[bool]:
    """Per text: the same tokens (count, ids, spans relative to the text, flags)?"""
    from fertility.backends._gigatoken_check import byte_sizes, difference

    sizes = byte_sizes(texts)
    positions = list(range(len(texts)))
    verdict = [True] * len(texts)
    remaining = positions
    while remaining:  # `difference` names the first differing text; look past it until none is left
        found = difference(fast, texts, sizes, _subset(library, texts, remaining, positions), remaining)
        if found is None:
            break
        verdict[found[0]] = False
        remaining = [i for i in remaining if i > found[0]]
    return verdict


def _subset(library, texts, wanted: list[int], positions: list[int]):
    """The library's Tokens of `texts` restricted to the texts at `wanted` (all when equal)."""
    if wanted == positions:
        return library
    from fertility.backends import Tokens
    from fertility.backends._gigatoken_check import byte_sizes, cumulative

    edges = cumulative(library.counts)
    base = cumulative(np.fromiter(map(len, texts), dtype=np.int64) if library.in_chars else byte_sizes(texts))
    kept = [texts[i] for i in wanted]
    new_base = cumulative(np.fromiter(map(len, kept), dtype=np.int64) if library.in_chars else byte_sizes(kept))
    index = np.concatenate([np.arange(edges[i], edges[i + 1]) for i in wanted]) if wanted else np.zeros(0, int)
    shift = np.concatenate([np.full(edges[i + 1] - edges[i], new_base[j] - base[i]) for j, i in enumerate(wanted)]) \
        if wanted else np.zeros(0, int)

    def pick(values):
        return None if values is None else values[index]
    return Tokens(library.counts[wanted], library.starts[index] + shift, library.ends[index] + shift,
                  pick(library.unknown), pick(library.byte_fallback), library.in_chars, pick(library.ids), library.tiled,
                  pick(library.piece_bytes))


def raw_ids_rows(tokenizer, files: list[Path], lines_per_file: int | None) -> str:
    """For a tokenizer the fast path refuses: can gigatoken load the library's own
    tokenizer.json at all, and are its ids (not spans) the library's?"""
    import gigatoken

    hf = getattr(tokenizer, "tokenizer", None)
    if hf is None or not hasattr(hf, "to_str"):
        return "gigatoken cannot be handed this model"
    import json

    from fertility.backends._gigatoken_build import _without_special_tokens
    from fertility.backends._gigatoken_ids import GigatokenIds
    try:
        text, _ = _without_special_tokens(json.loads(hf.to_str()))
        ids = GigatokenIds(lambda: gigatoken.Tokenizer.from_json(text).backend, "raw")
    except BaseException as err:  # noqa: BLE001 - report whatever gigatoken or tokenizers raise
        return f"gigatoken refuses the library's tokenizer.json ({str(err).splitlines()[0][:120]})"
    exact = total = 0
    for path in files:
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()][:lines_per_file]
        counts, got = ids(lines)
        edges = np.concatenate(([0], np.cumsum(counts)))
        for i, line in enumerate(lines):
            total += 1
            exact += list(got[edges[i]:edges[i + 1]]) == hf.encode(line, add_special_tokens=False).ids
    return f"raw gigatoken ids equal on {exact} of {total} lines"


def run(options) -> list[Row]:
    from fertility.backends import load_tokenizer

    files = sorted((SHARED_CORPORA / "flores200" / "devtest").glob("*.txt"))
    rows = []
    for label, spec, load in specs(Path(options.extra) if options.extra else None):
        if options.only and options.only not in label:
            continue
        row = Row(spec, label)
        rows.append(row)
        try:
            tokenizer = load_tokenizer(spec, **load)
        except Exception as err:  # noqa: BLE001 - reported in the table
            row.status = f"does not load: {err}"
            continue
        fast = getattr(tokenizer, "inner", tokenizer) if not hasattr(tokenizer, "_ids") else tokenizer
        if getattr(fast, "_ids", None) is None:
            reason = tokenizer.info().get("fast_path", "off")
            row.status = f"{reason}; " + raw_ids_rows(getattr(fast, "inner", fast), files, options.lines)
            print(f"{label}: {row.status}", file=sys.stderr, flush=True)
            continue
        inner = fast.inner
        row.status = "fast path"
        for path in [*files, None]:
            lang = path.stem if path is not None else "adversarial"
            lines = ADVERSARIAL if path is None else \
                [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()][:options.lines]
            good = 0
            for batch in batches(lines):
                if fast.left_to_library(batch):  # as the fast path does: the library's tokens
                    row.routed += 1
                    good += len(batch)
                    continue
                start = time.perf_counter()
                counts, ids = fast._ids(batch)
                mine = fast._tokens(batch, fast_sizes(batch), counts, ids, fast._extra[0] if fast._extra else None)
                # (fast.fast_tokens(batch) computes the same; the ids are kept here for the case below)
                row.fast_s += time.perf_counter() - start
                start = time.perf_counter()
                theirs = inner.encode_many(batch) if hasattr(inner, "encode_many") else None
                row.library_s += time.perf_counter() - start
                if mine is None:  # as the fast path does: the library's tokens, its ids compared
                    row.routed += 1
                    edges, theirs_edges = np.cumsum(np.append(0, counts)), np.cumsum(np.append(0, theirs.counts))
                    verdict = [np.array_equal(ids[edges[i]:edges[i + 1]], theirs.ids[theirs_edges[i]:theirs_edges[i + 1]])
                               for i in range(len(batch))]
                    if not all(verdict) and not row.first:
                        row.first = f"{lang} line {verdict.index(False)} (ids): {batch[verdict.index(False)][:60]!r}"
                else:
                    verdict = same_tokens(mine, theirs, batch)
                    if not all(verdict) and not row.first:
                        row.first = f"{lang} line {verdict.index(False)}: {batch[verdict.index(False)][:60]!r}"
                good += sum(verdict)
            row.cells[lang] = (good, len(lines))
        exact = sum(a == b for a, b in row.cells.values())
        print(f"{label}: {exact} of {len(row.cells)} cells exact; fast {row.fast_s:.2f} s, library {row.library_s:.2f} s"
              + (f"; first difference {row.first}" if row.first else ""), file=sys.stderr, flush=True)
    return rows


def fast_sizes(texts: list[str]) -> np.ndarray:
    from fertility.backends._gigatoken_check import byte_sizes
    return byte_sizes(texts)


def markdown(rows: list[Row]) -> str:
    out = [("| tokenizer | fast path | FLORES cells exact (23) | adversarial lines | lines compared | batches left "
           "to the library | fast s | library s |"), "|---|---|---:|---:|---:|---:|---:|---:|"]
    for row in rows:
        if not row.cells:
            out.append(f"| {row.label} | {row.status} | | | | | | |")
            continue
        flores = {k: v for k, v in row.cells.items() if k != "adversarial"}
        exact = sum(a == b for a, b in flores.values())
        adv = row.cells.get("adversarial", (0, 0))
        lines = sum(b for _, b in row.cells.values())
        out.append(f"| {row.label} | yes | {exact} | {adv[0]} of {adv[1]} | {lines:,} | {row.routed} | {row.fast_s:.2f} "
                   f"| {row.library_s:.2f} |")
    bad = [(row, lang, cell) for row in rows for lang, cell in row.cells.items() if cell[0] != cell[1]]
    if bad:
        out += ["", "| tokenizer | language | lines exact | first difference |", "|---|---|---:|---|"]
        out += [f"| {row.label} | {lang} | {a} of {b} | {row.first} |" for row, lang, (a, b) in bad]
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=None, help="lines per language (default: all)")
    parser.add_argument("--only", default="", help="only tokenizers whose label contains this")
    parser.add_argument("--extra", default=None, help="folder with o200k_base/p50k_base/r50k_base .tiktoken files")
    options = parser.parse_args()
    rows = run(options)
    print(markdown(rows))


if __name__ == "__main__":
    main()
