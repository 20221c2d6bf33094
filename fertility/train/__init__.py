"""Training tokenizers that fix the balance: BPE, retrain, parity, superwords, extend."""
