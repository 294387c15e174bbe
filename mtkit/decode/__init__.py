"""Translation engines behind one interface: transformers' ``generate`` and CTranslate2, with the same prompts,
batches and output bounds."""
