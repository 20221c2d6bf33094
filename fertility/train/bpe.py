"""Training a grapheme-aware BPE that any `tokenizers` install loads as a plain tokenizer.json.

Two kinds of units:
- `bytes` (default): byte-level BPE whose split pattern keeps combining marks (`\\p{M}`) with
  their letters, so merges can span whole Bengali words; nothing is ever unknown.
- `graphemes`: BPE whose merges never cut an extended grapheme cluster. `tokenizers` cannot do
  this natively (its initial alphabet is code points and Python pre-tokenizers cannot be
  saved), so training runs on text where every multi-code-point cluster stands as one private
  use character; afterwards the vocabulary and merges are written back in real text, and
  merges that assemble each cluster from its code points are put first, so encoding builds
  clusters before anything else. Unseen characters fall back to bytes (`<0xE0>`), losslessly.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import regex
import tokenizers
from tokenizers import Regex, decoders, models, pre_tokenizers, trainers

from fertility.backends.patterns import GPT2
from fertility.choices import (
    DEFAULT_GLOBAL_MERGES,
    DEFAULT_PARITY_ALPHA,
    DEFAULT_PARITY_VARIANT,
    MAX_TOKEN_CLUSTERS,
    MIN_ATOM_COUNT,
    PARITY_VARIANTS,
    TRAIN_PATTERN_NAMES,
    UNITS,
)
from fertility.errors import UsageError
from fertility.io.corpus import Document
from fertility.text.units import graphemes

# GPT-2's pattern with \p{M} beside \p{L}: vowel signs, virama and nukta stay in their word,
# and a word may keep the full stop, comma or danda written right after it (Bengali and Hindi
# end every sentence with ।). On FLORES devtest, 32k vocab, mono ben+eng: ben 4.16, eng 4.25
# chars/token, against 4.06 and 4.19 without the punctuation. The same holds for the full stops
# and commas of other scripts (Chinese/Japanese 。，、, Ethiopic ። ፣, Arabic ، ۔, Myanmar ။ ၊,
# Khmer ។): on 22 languages, 64k, the parity trainer's mean chars/token went from 2.980 to 2.995.
SENTENCE_PUNCTUATION = ".,।॥。，、።፣،۔။၊។"
MARKS = (r"""'(?:[sdmt]|ll|ve|re)| ?[\p{L}\p{M}]+[""" + SENTENCE_PUNCTUATION
         + r"""]?| ?\p{N}+| ?[^\s\p{L}\p{M}\p{N}]+|\s+(?!\S)|\s+""")
TRAIN_PATTERNS = dict(zip(TRAIN_PATTERN_NAMES, (MARKS, GPT2), strict=True))
_SEPARATOR = "\x1f"  # between pre-tokens fed to the trainer in grapheme mode (removed from input)
# The parity trainer's defaults with grapheme units, chosen by the 22-language acceptance run's
# FLORES devtest figures (benchmarks/bench_parity.py; the README has the table of what was tried):
# clusters or characters seen fewer than MIN_ATOM_COUNT times in training are not atoms (they fall
# back to bytes; 0, 3, 6, 8 gave 2.853, 2.906, 2.917 and, with the settings below, 3.00 chars/token),
# and no token is longer than MAX_TOKEN_CLUSTERS clusters (scripts written without spaces, Khmer
# above all, spend thousands of merges on whole phrases of the dev set; 8 cost 1.2% chars/token).
# (MIN_ATOM_COUNT and MAX_TOKEN_CLUSTERS live in choices.py, where the command line lists them.)
_PUA_START = 0xF0000  # supplementary private use area A: 65,534 cluster stand-ins

Progress = Callable[[str, int], Callable[[int], None]]


def sample_documents(documents: Sequence[Document], weights: dict[str, float] | None,
                     *, seed: int) -> list[Document]:
    """Each language's documents repeated `weight` times (fractions sampled with `seed`)."""
    if not weights:
        return list(documents)
    unknown = sorted(set(weights) - {d.lang for d in documents})
    if unknown:
        raise UsageError(f"--weights names languages not in the training corpus: {', '.join(unknown)}")
    rng = random.Random(seed)
    out: list[Document] = []
    for doc in documents:
        weight = weights.get(doc.lang, 1.0)
        copies = int(weight) + (rng.random() < weight - int(weight))
        out.extend([doc] * copies)
    return out


def language_chars(documents: Sequence[Document]) -> dict[str, int]:
    chars: dict[str, int] = {}
    for doc in documents:
        chars[doc.lang] = chars.get(doc.lang, 0) + len(doc.text)
    return chars


def equal_weights(char_counts: dict[str, int]) -> dict[str, float]:
    """Multipliers that give every language as many characters as the largest one has."""
    largest = max(char_counts.values())
    return {lang: largest / n for lang, n in char_counts.items()}


def temperature_weights(char_counts: dict[str, int], temperature: float) -> dict[str, float]:
    """Multipliers that turn natural shares p into p^(1/T) shares; the largest language keeps 1."""
    if temperature <= 0:
        raise UsageError("--temperature must be positive")
    total = sum(char_counts.values())
    shares = {lang: n / total for lang, n in char_counts.items()}
    target = {lang: p ** (1 / temperature) for lang, p in shares.items()}
    norm = sum(target.values())
    multipliers = {lang: (target[lang] / norm) / shares[lang] for lang in shares}
    base = multipliers[max(shares, key=shares.__getitem__)]
    return {lang: m / base for lang, m in multipliers.items()}


def _byte_level_tokenizer(pattern: str) -> tokenizers.Tokenizer:
    tokenizer = tokenizers.Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tokenizer.decoder = decoders.ByteLevel()
    return tokenizer


def train_bytes(texts: Callable[[], Iterator[str]], *, vocab_size: int, pattern: str,
                min_frequency: int, show_progress: bool) -> tokenizers.Tokenizer:
    tokenizer = _byte_level_tokenizer(pattern)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=show_progress)
    tokenizer.train_from_iterator(texts(), trainer)
    return tokenizer


class _ClusterMap:
    """Multi-code-point grapheme clusters <-> private-use stand-ins, built as text streams by."""

    def __init__(self) -> None:
        self.to_char: dict[str, str] = {}
        self.to_cluster: dict[str, str] = {}

    def encode(self, text: str) -> str:
        out = []
        for cluster in graphemes(text):
            if len(cluster) == 1:
                out.append(cluster)
                continue
            char = self.to_char.get(cluster)
            if char is None:
                if len(self.to_char) >= 0xFFFE:
                    raise UsageError("more than 65,534 distinct grapheme clusters: "
                                     "use --units bytes for this corpus")
                char = chr(_PUA_START + len(self.to_char))
                self.to_char[cluster], self.to_cluster[char] = char, cluster
            out.append(char)
        return "".join(out)

    def decode(self, text: str) -> str:
        return "".join(self.to_cluster.get(c, c) for c in text)


class _GraphemeText:
    """Texts mapped to cluster stand-ins, pre-tokens joined by the separator; the mapping also
    learns which clusters exist: the strings their assembly merges build take vocabulary room,
    except those already in the alphabet.

    With `min_count`, a cluster or character seen fewer times in the training text (`count`)
    is not an atom: it becomes a separator in the training text (no merge spans it), gets no
    assembly merges and falls back to bytes when encoded. On 22 languages most such atoms are
    rare Myanmar, Indic and Han clusters that devtest barely uses; their room goes to merges."""

    def __init__(self, pattern: str, *, min_count: int = 0):
        self.split = regex.compile(pattern)
        self.clusters = _ClusterMap()
        self.alphabet: set[str] = set()
        self.min_count = min_count
        self.common: set[str] | None = None  # the atoms, once `count` has seen the training text

    def _map(self, texts: Iterable[str]) -> list[str]:
        return [_SEPARATOR.join(self.clusters.encode(piece)
                                for piece in self.split.findall(text.replace(_SEPARATOR, " ")))
                for text in texts]

    def count(self, texts: Iterable[str]) -> None:
        """Keep as atoms what these (distinct training) texts hold at least `min_count` times;
        in training text anything else becomes the separator."""
        if self.min_count <= 1:
            return
        seen: dict[str, int] = {}
        for text in self._map(texts):
            for char in text:
                seen[char] = seen.get(char, 0) + 1
        self.common = {char for char, n in seen.items() if n >= self.min_count} | {_SEPARATOR}

    def map(self, texts: Iterable[str], *, dev: bool = False) -> list[str]:
        """Dev text keeps every cluster (what it costs is what is measured) but adds no atoms."""
        mapped = self._map(texts)
        if dev and self.common is not None:
            return mapped
        if self.common is not None:
            common = self.common
            mapped = ["".join(c if c in common else _SEPARATOR for c in text) for text in mapped]
        for text in mapped:
            self.alphabet.update(text)
        return mapped

    def room(self, vocab_size: int) -> tuple[list[tuple[str, str]], int]:
        """Assembly merges, and how many learned tokens fit beside them and the 256 bytes."""
        alphabet = {self.clusters.decode(c) for c in self.alphabet}
        kept = {cluster: char for cluster, char in self.clusters.to_char.items()
                if self.common is None or char in self.common}
        assembly = _assembly_merges(kept)
        extra = {piece for merge in assembly for piece in (*merge, merge[0] + merge[1])} - alphabet
        room = vocab_size - 256 - len(extra)
        if room < 1000:
            raise UsageError(f"--vocab-size {vocab_size} leaves no room: {len(assembly)} grapheme clusters "
                             f"and 256 bytes need to fit first; use at least {vocab_size - room + 1000}")
        return assembly, room


def _separator_tokenizer() -> tokenizers.Tokenizer:
    trainer_tokenizer = tokenizers.Tokenizer(models.BPE())
    trainer_tokenizer.pre_tokenizer = pre_tokenizers.Split(_SEPARATOR, behavior="removed")
    return trainer_tokenizer


def train_graphemes(texts: Callable[[], Iterator[str]], *, vocab_size: int, pattern: str,
                    min_frequency: int, show_progress: bool) -> tokenizers.Tokenizer:
    grapheme_text = _GraphemeText(pattern)
    mapped = grapheme_text.map(texts())
    assembly, room = grapheme_text.room(vocab_size)
    trainer_tokenizer = _separator_tokenizer()
    trainer = trainers.BpeTrainer(vocab_size=room, min_frequency=min_frequency,
                                  show_progress=show_progress)
    trainer_tokenizer.train_from_iterator(mapped, trainer)
    return _assemble(trainer_tokenizer, grapheme_text.clusters, assembly, pattern)


@dataclass(frozen=True)
class ParitySettings:
    """How `tokenizers`' ParityBpeTrainer is run (see README: the combination that was measured)."""

    variant: str = DEFAULT_PARITY_VARIANT  # "window" or "base"
    global_merges: float = DEFAULT_GLOBAL_MERGES  # share of the merges learned as plain BPE first
    window_size: int = 100
    alpha: float = DEFAULT_PARITY_ALPHA  # window variant
    min_atom_count: int = MIN_ATOM_COUNT  # units graphemes: rarer clusters/characters fall back to bytes
    max_token_clusters: int | None = MAX_TOKEN_CLUSTERS  # units graphemes: no longer tokens

    def fragment(self) -> dict:
        return {"variant": self.variant, "global_merges": self.global_merges,
                "window_size": self.window_size, "alpha": self.alpha, "min_atom_count": self.min_atom_count,
                "max_token_clusters": self.max_token_clusters}


DEFAULT_PARITY = ParitySettings()


def train_parity(train: dict[str, list[str]], *, dev: dict[str, list[str]] | None,
                 ratios: dict[str, float] | None, vocab_size: int, units: str, pattern: str,
                 min_frequency: int, settings: ParitySettings, show_progress: bool) -> tokenizers.Tokenizer:
    """Parity-aware BPE: each merge goes to the language the dev set (or the target ratios)
    shows compressed worst. `train`, `dev` and `ratios` are keyed by the same languages."""
    langs = list(train)
    if settings.variant not in PARITY_VARIANTS:
        raise UsageError(f"--parity-variant {settings.variant!r}: choose one of {', '.join(PARITY_VARIANTS)}")
    if not 0 <= settings.global_merges < 1:
        raise UsageError(f"--global-merges {settings.global_merges}: give a share of the merges in [0, 1)")
    if not settings.alpha > 0:
        raise UsageError(f"--parity-alpha {settings.alpha}: give a positive number")
    if settings.min_atom_count < 0:
        raise UsageError(f"--min-atom-count {settings.min_atom_count}: give 0 or 1 (every cluster) or more")
    if settings.max_token_clusters is not None and settings.max_token_clusters < 1:
        raise UsageError(f"--max-token-clusters {settings.max_token_clusters}: give 1 or more (0 on the "
                         "command line: no cap)")

    def trainer(num_merges: int, **alphabet) -> trainers.ParityBpeTrainer:
        return trainers.ParityBpeTrainer(
            num_merges=num_merges, variant=settings.variant, min_frequency=min_frequency,
            global_merges=int(num_merges * settings.global_merges), window_size=settings.window_size,
            alpha=settings.alpha, show_progress=show_progress,
            max_token_length=settings.max_token_clusters if units == "graphemes" else None, **alphabet)

    ratio_list = [ratios[lang] for lang in langs] if ratios and dev is None else None
    if units == "graphemes":
        grapheme_text = _GraphemeText(pattern, min_count=settings.min_atom_count)
        # distinct lines: balance sampling repeats a language's lines, which must not make its atoms common
        grapheme_text.count(text for lang in langs for text in dict.fromkeys(train[lang]))
        mapped = {lang: grapheme_text.map(train[lang]) for lang in langs}
        mapped_dev = {lang: grapheme_text.map(dev[lang], dev=True) for lang in langs} if dev is not None else None
        assembly, room = grapheme_text.room(vocab_size)
        trainer_tokenizer = _separator_tokenizer()
        # the alphabet counts against the trainer's vocabulary: merges are what is left of room
        n_merges = max(1, room - len({c for texts in mapped.values() for t in texts for c in t} - {_SEPARATOR}))
        trainer(n_merges).train_from_iterator(
            trainer_tokenizer, [iter(mapped[lang]) for lang in langs],
            dev_iterators=[iter(mapped_dev[lang]) for lang in langs] if mapped_dev is not None else None,
            ratio=ratio_list)
        return _assemble(trainer_tokenizer, grapheme_text.clusters, assembly, pattern, grapheme_text.common)
    tokenizer = _byte_level_tokenizer(pattern)
    trainer(vocab_size - 256, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()).train_from_iterator(
        tokenizer, [iter(train[lang]) for lang in langs],
        dev_iterators=[iter(dev[lang]) for lang in langs] if dev is not None else None, ratio=ratio_list)
    return tokenizer


def bpe_pieces(word: str, ranks: dict[tuple[str, str], int]) -> list[str]:
    """What BPE makes of `word` with these merge ranks (lowest-ranked pair first)."""
    pieces = list(word)
    while len(pieces) > 1:
        pairs = [(ranks.get((a, b)), i) for i, (a, b) in enumerate(itertools.pairwise(pieces))]
        known = [(rank, i) for rank, i in pairs if rank is not None]
        if not known:
            break
        _, i = min(known)
        pieces[i:i + 2] = [pieces[i] + pieces[i + 1]]
    return pieces


def _assembly_merges(clusters: dict[str, str]) -> list[tuple[str, str]]:
    """Merges that build every cluster from its code points before anything else merges.

    Left-to-right chains, longest clusters first (a short cluster's য+া must not outrank
    দ্য+া inside দ্যা); then, since one cluster's chain can still fire inside another
    (ট+্ inside ষ্ট্র), we replay BPE on every cluster and add repair merges until each
    comes out whole.
    """
    merges: dict[tuple[str, str], None] = {}
    for cluster in sorted(clusters, key=lambda c: (-len(c), c)):
        for end in range(2, len(cluster) + 1):
            merges[(cluster[:end - 1], cluster[end - 1])] = None
    for _ in range(8):
        ranks = {merge: rank for rank, merge in enumerate(merges)}
        repairs = 0
        for cluster in clusters:
            pieces = bpe_pieces(cluster, ranks)
            for end in range(2, len(pieces) + 1):
                merge = ("".join(pieces[:end - 1]), pieces[end - 1])
                if merge not in merges:
                    merges[merge] = None
                    repairs += 1
        if not repairs:
            break
    return list(merges)


def _assemble(trained: tokenizers.Tokenizer, clusters: _ClusterMap, assembly: list[tuple[str, str]],
              pattern: str, atoms: set[str] | None = None) -> tokenizers.Tokenizer:
    """Write the trained vocabulary and merges back in real text, byte fallback included; with
    `atoms`, single characters the trainer met only in dev text are left out (bytes spell them)."""
    model = json.loads(trained.to_str())["model"]
    vocab: dict[str, int] = {}

    def add(token: str) -> None:
        vocab.setdefault(token, len(vocab))

    for byte in range(256):
        add(f"<0x{byte:02X}>")
    for left, right in assembly:
        add(left)
        add(right)
        add(left + right)
    learned = sorted(model["vocab"].items(), key=lambda kv: kv[1])
    for token, _ in learned:
        if atoms is None or len(token) > 1 or token in atoms:
            add(clusters.decode(token))
    merges = [list(m) for m in assembly]
    for merge in model["merges"]:
        left, right = merge if isinstance(merge, list) else merge.split(" ", 1)
        merges.append([clusters.decode(left), clusters.decode(right)])
    tokenizer = tokenizers.Tokenizer(models.BPE(vocab=vocab, merges=[(m[0], m[1]) for m in merges],
                                                byte_fallback=True, fuse_unk=False))
    tokenizer.pre_tokenizer = pre_tokenizers.Split(Regex(pattern), behavior="isolated")
    tokenizer.decoder = decoders.Sequence([decoders.ByteFallback(), decoders.Fuse()])
    return tokenizer


def check_trainer_pattern(name: str, split: str) -> None:
    """The saved tokenizer splits with `tokenizers`' own engine (Oniguruma), which refuses some
    patterns Python's `regex` accepts (`\\p{Script=Bengali}`, `(?V1)` sets): check before training."""
    try:
        pre_tokenizers.Split(Regex(split), behavior="isolated")
    except Exception as err:  # noqa: BLE001 - tokenizers raises bare Exception ("Oniguruma error: ...")
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise UsageError(f"--pattern '{name}': Python's regex accepts it but the tokenizers library "
                         f"(Oniguruma) does not ({reason}); "
                         "write it without that construct, e.g. \\p{Bengali} for \\p{Script=Bengali}") from None


def check_training_options(*, units: str, vocab_size: int, pattern: str) -> str:
    """Refuse what training would refuse, before any corpus is read; return the split regex."""
    if units not in UNITS:
        raise UsageError(f"--units {units!r}: choose one of {', '.join(UNITS)}")
    if vocab_size < 300:
        raise UsageError(f"--vocab-size {vocab_size} is too small (at least 300: 256 bytes come first)")
    split = TRAIN_PATTERNS.get(pattern, pattern)
    try:
        regex.compile(split)
    except regex.error as err:
        raise UsageError(f"pattern {pattern!r} is neither {' nor '.join(TRAIN_PATTERNS)} nor a regex ({err})")
    check_trainer_pattern(pattern, split)
    return split


def train_tokenizer(documents: Sequence[Document], *, vocab_size: int, units: str = "bytes",
                    pattern: str = "marks", weights: dict[str, float] | None = None,
                    seed: int = 0, min_frequency: int = 2, show_progress: bool = False) -> tokenizers.Tokenizer:
    """Train on `documents` (sampled by language `weights`) and return the tokenizer."""
    split = check_training_options(units=units, vocab_size=vocab_size, pattern=pattern)
    chosen = sample_documents(documents, weights, seed=seed)

    def texts() -> Iterator[str]:
        return (doc.text for doc in chosen)

    train = train_graphemes if units == "graphemes" else train_bytes
    return train(texts, vocab_size=vocab_size, pattern=split, min_frequency=min_frequency,
                 show_progress=show_progress)
