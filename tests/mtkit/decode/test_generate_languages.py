"""Decoding tells each family its target language its own way, per sentence: a forced first target token (NLLB,
M2M100, mBART-50; CTranslate2's target_prefix), or a code at the start of the source (multi-target Marian, MADLAD),
batches holding one language; beam search and MBR candidates alike. Checked on the ids the engines receive and emit."""

import pytest
from families import FAMILY_LANG_CODES

from mtkit.decode.generate import Translator
from mtkit.decode.settings import DecodingSettings

SENTENCES = ["A man is walking his dog.", "Two children play.", "The doctor said she was tired.", "A red car."]
LANGS = ["de", "es", "es", "de"]
FORCED = ("m2m100", "nllb", "mbart50")


def spied(translator: Translator) -> list[dict]:
    """Each ``generate`` call's forced token, input ids and output ids (the real ``generate`` runs)."""
    calls: list[dict] = []
    real = translator.model.generate

    def generate(**kwargs):
        ids = real(**kwargs)
        calls.append({"forced": kwargs.get("forced_bos_token_id"), "inputs": kwargs["input_ids"], "ids": ids})
        return ids

    translator.model.generate = generate
    return calls


@pytest.mark.parametrize("family", FORCED)
@pytest.mark.parametrize("mbr", [{}, {"decoding": "mbr", "mbr_samples": 2, "seed": 1}], ids=["beam", "mbr"])
def test_forced_families_get_and_write_their_target_token(family, mbr, family_dir):
    translator = Translator(family_dir(family), device="cpu")
    tok, calls = translator.tokenizer, spied(translator)
    ids = {lang: tok.convert_tokens_to_ids(FAMILY_LANG_CODES[family][lang]) for lang in ("de", "es")}
    settings = DecodingSettings(num_beams=2, max_new_tokens=4, batch_size=8, **mbr)
    out = translator.translate(SENTENCES, settings, target_langs=LANGS)
    assert len(out) == len(SENTENCES) and not any(FAMILY_LANG_CODES[family]["de"] in hyp for hyp in out)
    assert sorted(call["forced"] for call in calls) == sorted(ids.values())  # one batch per language
    for call in calls:
        start = translator.model.config.decoder_start_token_id
        assert (call["ids"][:, 0] == start).all() and (call["ids"][:, 1] == call["forced"]).all()


@pytest.mark.parametrize("family", ["marian_multi", "mt5"])
def test_source_prefix_families_read_their_code(family, family_dir):
    translator = Translator(family_dir(family), device="cpu")
    tok, calls = translator.tokenizer, spied(translator)
    translator.translate(SENTENCES, DecodingSettings(num_beams=1, max_new_tokens=3), target_langs=LANGS)
    assert len(calls) == 2 and all(call["forced"] is None for call in calls)
    for call in calls:
        firsts = {[p for p in tok.convert_ids_to_tokens(row) if p != "▁"][0] for row in call["inputs"].tolist()}
        assert firsts in ({FAMILY_LANG_CODES[family]["de"]}, {FAMILY_LANG_CODES[family]["es"]})


@pytest.mark.parametrize("family", ["marian", "marian_multi", "m2m100", "nllb", "mbart50", "mt5", "flan_t5"])
def test_ctranslate2_gets_the_same_as_target_prefix(family, family_dir, tmp_path):
    """Every family converts and passes the self-check; CTranslate2 emits the forced token first and translates as
    transformers does (float32, greedy)."""
    from mtkit.decode.ct2 import CT2Translator
    from mtkit.export.ct2 import export_ct2

    folder = family_dir(family)
    out = export_ct2(folder, tmp_path / "ct2", "float32", check_samples=4)
    engine = CT2Translator(out, device="cpu")
    seen: list = []

    class Recorder:
        def __init__(self, translator) -> None:
            self.translator = translator

        def translate_batch(self, tokens, **kwargs):
            results = self.translator.translate_batch(tokens, **kwargs)
            seen.append((kwargs.get("target_prefix"), [r.hypotheses[0] for r in results]))
            return results

    engine.translator = Recorder(engine.translator)
    greedy, hf = DecodingSettings(num_beams=1, max_new_tokens=5), Translator(folder, device="cpu")
    assert engine.translate(SENTENCES, greedy, target_langs=LANGS) == hf.translate(
        SENTENCES, greedy, target_langs=LANGS
    )
    codes = FAMILY_LANG_CODES[family]
    for prefix, hypotheses in seen:
        if family in FORCED:
            assert prefix in ([[codes["de"]]] * 2, [[codes["es"]]] * 2)
            assert all(hyp[0] == prefix[0][0] for hyp in hypotheses)
        else:
            assert prefix is None
