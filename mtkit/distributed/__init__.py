"""Strategy glue beyond ``accelerator.prepare``: DeepSpeed (config checks, ZeRO stage) and FSDP (tied embeddings,
sharded decoding and checkpoints)."""
