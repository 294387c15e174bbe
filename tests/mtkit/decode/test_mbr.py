"""Minimum-Bayes-risk decoding (mtkit/decode/mbr.py) through both engines: the choice is the candidate of highest
mean chrF against all candidates, computed here with sacreBLEU directly; seeds make the samples reproducible and
leave the caller's random state alone; the output bounds of beam search hold for every candidate."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
import sacrebleu
import torch

from mtkit.decode.ct2 import CT2Translator
from mtkit.decode.generate import Translator
from mtkit.decode.mbr import MBR, choose
from mtkit.decode.settings import DecodingSettings
from mtkit.errors import UserError


@pytest.fixture(scope="module")
def sources(multi30k_small) -> list[str]:
    return (multi30k_small / "test_2016_flickr.en").read_text(encoding="utf-8").splitlines()[:12]


@pytest.fixture(scope="module")
def hf(tiny_run) -> Translator:
    return Translator(tiny_run / "final", device="cpu")


@pytest.fixture(scope="module")
def ct2(tiny_run) -> CT2Translator:
    return CT2Translator(tiny_run / "final_ct2", device="cpu", threads=1)


def direct_choice(candidates: list[str]) -> str:
    """The candidate with the highest mean sentence chrF against all candidates (the first of equals)."""
    means = [np.mean([sacrebleu.sentence_chrf(h, [r]).score for r in candidates]) for h in candidates]
    return candidates[int(np.argmax(means))]


@pytest.mark.parametrize(
    "engine, mbr",
    [
        ("hf", {"mbr_samples": 6, "epsilon": 0.0, "seed": 3}),
        ("hf", {"mbr_samples": 6, "seed": 3}),
        ("hf", {"mbr_samples": 4, "mbr_candidates": "beam"}),
        ("ct2", {"mbr_samples": 6, "top_p": 1.0, "seed": 3, "engine": "ct2"}),
        ("ct2", {"mbr_samples": 4, "mbr_candidates": "beam", "engine": "ct2"}),
    ],
)
def test_choice_is_the_candidate_of_highest_expected_chrf(request, engine, mbr, sources):
    translator = request.getfixturevalue(engine)
    settings = DecodingSettings(decoding="mbr", batch_size=5, max_new_tokens=24, **mbr)
    groups = translator.candidates(sources, settings)
    chosen = translator.translate(sources, settings)
    assert all(len(group) == settings.mbr.samples for group in groups)
    assert chosen == [direct_choice(group) for group in groups]
    # the candidates differ, so the utility decides; for the (seeded) samples, not always for the first one
    assert sum(len(set(group)) > 1 for group in groups) >= len(sources) // 2
    if settings.mbr.candidates == "sample":
        assert any(choice != group[0] for choice, group in zip(chosen, groups))


def test_beam_candidates_start_with_the_beam_translation(hf, sources):
    """The n-best list of a beam raised to N is led by what that beam search returns."""
    settings = DecodingSettings(num_beams=4, max_new_tokens=24)
    beam = hf.translate(sources, settings)
    groups = hf.candidates(sources, replace(settings, decoding="mbr", mbr_samples=4, mbr_candidates="beam"))
    assert [group[0] for group in groups] == beam


@pytest.mark.parametrize("engine", ["hf", "ct2"])
def test_the_same_seed_draws_the_same_samples(request, engine, sources):
    translator = request.getfixturevalue(engine)
    extra = {"top_p": 1.0, "engine": "ct2"} if engine == "ct2" else {"epsilon": 0.0}

    def drawn(seed: int) -> list[list[str]]:
        settings = DecodingSettings(decoding="mbr", mbr_samples=5, seed=seed, max_new_tokens=24, **extra)
        return translator.candidates(sources, settings)

    first, again, other = drawn(11), drawn(11), drawn(12)
    assert first == again
    assert first != other


def test_sampling_leaves_the_callers_random_state_alone(hf, sources):
    """Training evaluates with MBR between updates: its dropout and data order must not see the samples."""
    torch.manual_seed(5)
    state = torch.get_rng_state()
    hf.translate(sources[:3], DecodingSettings(decoding="mbr", mbr_samples=3, epsilon=0.0, max_new_tokens=8))
    assert torch.equal(torch.get_rng_state(), state)


def fewest_pieces(text: str, pieces: set[str], longest: int) -> float:
    """The fewest vocabulary pieces (``▁`` read as a space) whose concatenation is ``text`` (decoding drops the
    first piece's space): a sampled sequence need not be how the tokenizer would split its text again, so its
    length is measured this way, a lower bound on the tokens generated."""

    def cover(s: str) -> float:
        best = [0.0] + [math.inf] * len(s)
        for end in range(1, len(s) + 1):
            for start in range(max(0, end - longest), end):
                if best[start] + 1 < best[end] and s[start:end] in pieces:
                    best[end] = best[start] + 1
        return best[-1]

    return min(cover(text), cover(" " + text))


@pytest.mark.parametrize("engine", ["hf", "ct2"])
def test_every_candidate_keeps_the_output_bound(request, engine, sources):
    """max_len_a x the batch's longest source + max_len_b caps every sample, as it caps the beam."""
    translator = request.getfixturevalue(engine)
    mbr = {"decoding": "mbr", "mbr_samples": 6, "batch_size": len(sources)}
    mbr |= {"top_p": 1.0, "engine": "ct2"} if engine == "ct2" else {"epsilon": 0.0}
    tok = translator.tokenizer
    pieces = {token.replace("\u2581", " ") for token in tok.get_vocab()}
    longest_piece = max(map(len, pieces))
    longest = max(len(tok(s).input_ids) for s in sources)
    a, b = 0.1, 1
    bound = math.ceil(a * longest + b)
    bounded = translator.candidates(sources, DecodingSettings(**mbr, max_len_a=a, max_len_b=b))
    free = translator.candidates(sources, DecodingSettings(**mbr, max_new_tokens=64))

    def lengths(groups):
        return [fewest_pieces(c, pieces, longest_piece) for group in groups for c in group]

    assert max(lengths(bounded)) <= bound
    assert max(lengths(free)) > bound  # the bound binds: without it the samples run longer


def test_the_utility_is_pluggable():
    """Any function scoring aligned hypotheses and references; here: minus the length difference."""
    groups = [["a", "abcd", "abc", "abcdefgh"], ["xx", "xx", "y"]]

    def closeness(hyps, refs):
        return [-abs(len(h) - len(r)) for h, r in zip(hyps, refs)]

    means = [[np.mean([-abs(len(h) - len(r)) for r in g]) for h in g] for g in groups]
    assert choose(groups, closeness) == [g[int(np.argmax(m))] for g, m in zip(groups, means)]
    assert choose(groups, closeness) == ["abcd", "xx"]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"samples": 0}, r"^--mbr_samples: must be > 0, got 0$"),
        ({"candidates": "topk"}, r"^--mbr_candidates: 'topk' is not one of sample, beam$"),
        ({"epsilon": 1.0}, r"^--epsilon: must be in \[0, 1\), got 1.0$"),
        ({"top_p": 0.0}, r"^--top_p: must be in \(0, 1\], got 0.0$"),
        ({"utility": "comet"}, r"^--mbr_utility: 'comet' is not one of chrf$"),
    ],
)
def test_bad_settings_are_refused(kwargs, message):
    with pytest.raises(UserError, match=message):
        MBR(**kwargs)


def test_ct2_has_no_epsilon_sampling():
    with pytest.raises(UserError, match=r"^--epsilon: CTranslate2 has no epsilon sampling; with --engine ct2 use"):
        MBR(epsilon=0.02).sampling("ct2")
