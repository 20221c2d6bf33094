"""Grapheme units for BPE: merges that never cut an extended grapheme cluster.

`tokenizers` cannot do this natively (its initial alphabet is code points and Python
pre-tokenizers cannot be saved), so training runs on text where every multi-code-point cluster
stands as one private use character; afterwards the vocabulary and merges are written back in
real text, and merges that assemble each cluster from its code points are put first, so encoding
builds clusters before anything else. Unseen characters fall back to bytes (`<0xE0>`), losslessly.
Both the plain BPE trainer (bpe.py) and the parity trainer (parity_trainer.py) train this way.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable

import regex
import tokenizers
from tokenizers import Regex, decoders, models, pre_tokenizers

from fertility.errors import UsageError
from fertility.text.units import graphemes

SEPARATOR = "\x1f"  # between pre-tokens fed to the trainer in grapheme mode (removed from input)
_PUA_START = 0xF0000  # supplementary private use area A: 65,534 cluster stand-ins


class ClusterMap:
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


class GraphemeText:
    """Texts mapped to cluster stand-ins, pre-tokens joined by the separator; the mapping also
    learns which clusters exist: the strings their assembly merges build take vocabulary room,
    except those already in the alphabet.

    With `min_count`, a cluster or character seen fewer times in the training text (`count`)
    is not an atom: it becomes a separator in the training text (no merge spans it), gets no
    assembly merges and falls back to bytes when encoded. On 22 languages most such atoms are
    rare Myanmar, Indic and Han clusters that devtest barely uses; their room goes to merges."""

    def __init__(self, pattern: str, *, min_count: int = 0):
        self.split = regex.compile(pattern)
        self.clusters = ClusterMap()
        self.alphabet: set[str] = set()
        self.min_count = min_count
        self.common: set[str] | None = None  # the atoms, once `count` has seen the training text

    def _map(self, texts: Iterable[str]) -> list[str]:
        return [SEPARATOR.join(self.clusters.encode(piece)
                               for piece in self.split.findall(text.replace(SEPARATOR, " ")))
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
        self.common = {char for char, n in seen.items() if n >= self.min_count} | {SEPARATOR}

    def map(self, texts: Iterable[str], *, dev: bool = False) -> list[str]:
        """Dev text keeps every cluster (what it costs is what is measured) but adds no atoms."""
        mapped = self._map(texts)
        if dev and self.common is not None:
            return mapped
        if self.common is not None:
            common = self.common
            mapped = ["".join(c if c in common else SEPARATOR for c in text) for text in mapped]
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


def separator_tokenizer() -> tokenizers.Tokenizer:
    """The tokenizer the trainer fills: mapped text is split at the separator and nowhere else."""
    trainer_tokenizer = tokenizers.Tokenizer(models.BPE())
    trainer_tokenizer.pre_tokenizer = pre_tokenizers.Split(SEPARATOR, behavior="removed")
    return trainer_tokenizer


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


def assemble(trained: tokenizers.Tokenizer, clusters: ClusterMap, assembly: list[tuple[str, str]],
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
