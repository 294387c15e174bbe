"""Train a translation model: ``accelerate launch [--config_file accelerate_configs/X.yaml] scripts/train.py
--config recipes/R.yaml [--key value ...]`` (or plain ``python scripts/train.py ...`` for one process).

On a CPU machine with tcmalloc installed, each process first starts itself again on it (up to 1.8x the speed;
``MTKIT_TCMALLOC=0`` turns that off, docs/training.md#cpu-speed)."""

from mtkit.allocator import start_on_tcmalloc

if __name__ == "__main__":
    start_on_tcmalloc()
    from mtkit.cli.train import main

    main()
