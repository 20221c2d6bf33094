"""Text units (bytes, characters, grapheme clusters, words) and Unicode scripts."""
