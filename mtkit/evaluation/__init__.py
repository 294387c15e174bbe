"""Scores during training: validation loss and translations across processes, BLEU/chrF and gender figures, and which
checkpoint is best."""
