"""Prepare a run's data ahead of training, in one process: ``python scripts/preprocess.py --config recipes/R.yaml
[--key value ...]`` trains (or loads) the tokenizer and tokenizes every split into ``--output_dir``; the same
command line given to ``scripts/train.py`` then reuses both instead of preprocessing behind a barrier."""

from mtkit.config import parse_config
from mtkit.errors import cli_entry
from mtkit.preprocess import preprocess


@cli_entry
def main() -> None:
    cfg = parse_config()
    data = preprocess(cfg)
    sizes = ", ".join(f"{name} {len(split)}" for name, split in data.items())
    print(f"preprocessed {sizes} pairs into {cfg.train.output_dir}")


if __name__ == "__main__":
    main()
