"""Convert a trained model to CTranslate2: ``python scripts/export_ct2.py runs/x/final runs/x/final_ct2
--quantization int8``, then ``python scripts/translate.py --engine ct2 --model runs/x/final_ct2 ...``."""

from mtkit.cli.export_ct2 import main
from mtkit.errors import cli_entry

if __name__ == "__main__":
    cli_entry(main)()
