"""Upload a model folder to the Hugging Face hub: ``python scripts/push_to_hub.py runs/demo/final user/mtkit-demo``
(model, tokenizer, generation config, prompt, model card, and the CTranslate2 conversion beside it)."""

from mtkit.cli.push_to_hub import main

if __name__ == "__main__":
    main()
