"""The Hugging Face hub, below the readers and the backends that both download from it:
`download` (fetch a repository's matching files, offline rules, settings), `cache` (records of
finished downloads), `errors` (one line per failure)."""
