"""The gendered-BLEU ``evaluate`` metric; load it with ``evaluate.load("bias_eval/metric")``."""
