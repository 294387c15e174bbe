"""Train a translation model: ``accelerate launch [--config_file accelerate_configs/X.yaml] scripts/train.py
--config recipes/R.yaml [--key value ...]`` (or plain ``python scripts/train.py ...`` for one process)."""

from mtkit.config import parse_config
from mtkit.errors import cli_entry
from mtkit.trainer import train


@cli_entry
def main() -> None:
    train(parse_config())


if __name__ == "__main__":
    main()
