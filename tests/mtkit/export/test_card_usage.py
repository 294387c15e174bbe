"""The card's usage example tells a source-side family (Marian multi-target, MADLAD) its language, as training did."""

import json
import re

import pytest
from transformers import AutoTokenizer

from mtkit.data.languages import ModelLanguages
from mtkit.export.card import usage


@pytest.mark.parametrize(("family", "code"), [("marian_multi", ">>es<<"), ("mt5", "<2es>"), ("flan_t5", None)])
def test_the_usage_example_starts_the_source_with_the_language_code(family, code, family_dir):
    folder = family_dir(family)
    tok = AutoTokenizer.from_pretrained(folder)
    snippet = "\n".join(usage(str(folder), None, "es", ModelLanguages.of(tok, folder)))
    source = json.loads(re.search(r"inputs = tokenizer\((\".*\"), return_tensors", snippet).group(1))
    if code is None:  # a model without language codes reads the sentence as it is
        assert source == "The doctor said that she was tired."
    else:  # the example's input is what training fed the model: the code, then the sentence
        assert source == f"{code} The doctor said that she was tired."
        assert tok.convert_tokens_to_ids(code) in tok(source)["input_ids"][:2]
