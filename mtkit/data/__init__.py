"""Parallel data in, batches out: loading (plain files, tables, hub datasets, MT-GenEval), the held-out split,
prompts, the tokenizer, tokenized caches and token-budget batches."""
