import pytest
import sacrebleu
from datasets import Dataset

from mtkit.evaluation.scores import balanced_subset, split_scores

#: Two languages, each with two counterfactual pairs (feminine/masculine versions of one sentence).
ROWS = {
    "source": ["The nurse is tired.", "The nurse is tired.", "My friend is a doctor.", "My friend is a doctor."] * 2,
    "target": [
        "Die Krankenschwester ist müde.", "Der Krankenpfleger ist müde.",
        "Meine Freundin ist Ärztin.", "Mein Freund ist Arzt.",
        "La enfermera está cansada.", "El enfermero está cansado.",
        "Mi amiga es médica.", "Mi amigo es médico.",
    ],
    "lang": ["de"] * 4 + ["es"] * 4,
    "gender": ["feminine", "masculine"] * 4,
    "pair_id": ["de:1", "de:1", "de:2", "de:2", "es:1", "es:1", "es:2", "es:2"],
}  # fmt: skip
ROWS["counterfactual"] = [ROWS["target"][i ^ 1] for i in range(8)]  # the other gender's reference
HYPS = [
    "Der Krankenpfleger ist müde.", "Der Krankenpfleger ist müde.",  # feminine translated as masculine
    "Meine Freundin ist Ärztin.", "Mein Freund ist Arzt.",
    "La enfermera está cansada.", "El enfermero está cansado.",
    "Mi amigo es médico.", "Mi amigo es médico.",
]  # fmt: skip


def bleu(idx):
    return sacrebleu.corpus_bleu([HYPS[i] for i in idx], [[ROWS["target"][i] for i in idx]]).score


def test_language_and_gender_figures_match_sacrebleu_and_hand_counts():
    scores = split_scores(Dataset.from_dict(ROWS), HYPS)
    assert scores["bleu"] == pytest.approx(bleu(range(8)))
    assert scores["de_bleu"] == pytest.approx(bleu(range(4))) and scores["es_bleu"] == pytest.approx(bleu(range(4, 8)))
    assert scores["de_bleu_feminine"] == pytest.approx(bleu([0, 2]))
    assert scores["de_bleu_gap"] == pytest.approx(bleu([1, 3]) - bleu([0, 2]))
    # By hand: de feminine 1 of 2 right, masculine 2 of 2; es feminine 1 of 2 (sentence 2 wrong), masculine 2 of 2.
    assert scores["de_accuracy_feminine"] == 0.5 and scores["de_accuracy_masculine"] == 1.0
    assert scores["de_accuracy_pair"] == 0.5 and scores["es_accuracy_pair"] == 0.5
    assert scores["bleu_gap"] == pytest.approx((scores["de_bleu_gap"] + scores["es_bleu_gap"]) / 2)
    assert scores["accuracy_feminine"] == 0.5


def test_plain_data_gets_bleu_and_chrf_only():
    plain = Dataset.from_dict({"source": ROWS["source"][:4], "target": ROWS["target"][:4], "lang": ["de"] * 4})
    assert set(split_scores(plain, HYPS[:4])) == {"bleu", "chrf"}


def test_balanced_subset_takes_whole_pairs_from_every_language():
    data = Dataset.from_dict(ROWS)
    sub = balanced_subset(data, 4)
    assert sub["pair_id"] == ["de:1", "de:1", "es:1", "es:1"]
    assert balanced_subset(data, None) is data and len(balanced_subset(data, 100)) == 8


def test_a_japanese_split_is_scored_with_sacrebleus_japanese_tokenizer():
    refs, hyps = (
        ["猫が庭で寝ている。", "私は毎朝コーヒーを飲みます。"],
        ["猫が庭で寝ています。", "私は毎朝お茶を飲みます。"],
    )
    rows = Dataset.from_dict({"source": ["a", "b"], "target": refs, "lang": ["ja", "ja"]})
    assert split_scores(rows, hyps)["bleu"] == pytest.approx(
        sacrebleu.corpus_bleu(hyps, [refs], tokenize="ja-mecab").score
    )
