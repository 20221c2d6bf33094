"""Training tokenizers that fix the balance: BPE, retrain, parity, extend."""
