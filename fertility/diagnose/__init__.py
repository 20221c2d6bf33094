"""Judging counts and evidence into findings: rules, pre-tokens, normalization, integrity."""
