"""bias_eval: gender-bias evaluation of translation models on MT-GenEval and gendered parallel data."""
