"""The one training loop (:class:`~mtkit.train.trainer.Trainer`) and its parts: build, checks, checkpoints, faults,
throughput, tracking, ``final/``."""
