"""German's rules (bias_eval.winomt.gender): each rule on a sentence worked by hand."""

from __future__ import annotations

from bias_eval.winomt.gender import german


def test_german_rules() -> None:
    sentence = "Der Arzt rief die Krankenschwester an, weil sie müde war."
    assert german(["Die", "Entwicklerin"], "Die Entwicklerin lachte.", 0, "developer") == "female"  # -in
    assert german(["Der", "Arzt"], sentence, 0, "physician") == "male"  # der, nearest to word 0
    assert german(["Krankenschwester"], sentence, 4, "nurse") == "female"  # always, whatever the words
    assert german([], sentence, None, "physician") == "male"  # nothing aligned
    assert german(["Arzt"], "Arzt kam.", 0, "physician") == "male"  # no article in the sentence
    # "Kind" is word 4: "dem" (token 3) is nearer than "das" (token 6: the comma after "Kind" is a token of its own)
    assert german(["Kind"], "Die Frau mit dem Kind, das schlief.", 4, "child") == "male"
    # two words as near: the earlier one (der at 0, die at 2, first aligned word at 1)
    assert german(["Koch"], "der Koch die", 1, "cook") == "male"
