"""Prepare a run's data ahead of training, in one process: ``python scripts/preprocess.py --config recipes/R.yaml
[--key value ...]`` trains (or loads) the tokenizer and tokenizes every split into ``--output_dir``; the same
command line given to ``scripts/train.py`` then reuses both instead of preprocessing behind a barrier."""

from mtkit.cli.preprocess import main

if __name__ == "__main__":
    main()
