"""The audit result: its model, JSON read/write/validation, signature, findings, shards."""
