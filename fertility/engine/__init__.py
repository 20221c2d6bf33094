"""The counting engine: chunks, one pass per tokenizer, exact merges, local and Dask executors."""
