"""Models out of a finished or interrupted run: any checkpoint to a ``save_pretrained`` folder, checkpoint averaging,
CTranslate2 conversion."""
