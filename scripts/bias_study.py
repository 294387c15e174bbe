"""A bias study in one process: ``python scripts/bias_study.py --systems a=DIR,b=DIR --langs de,es --out study/``."""

from mtkit.cli.bias_study import main

if __name__ == "__main__":
    main()
