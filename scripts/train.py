"""Train a translation model: ``accelerate launch [--config_file accelerate_configs/X.yaml] scripts/train.py
--config recipes/R.yaml [--key value ...]`` (or plain ``python scripts/train.py ...`` for one process)."""

from mtkit.cli.train import main

if __name__ == "__main__":
    main()
