"""Batched beam-search translation with any Hugging Face seq2seq model (a trained dir or a hub id)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import torch
from tqdm.auto import tqdm

from mtkit.data.languages import ModelLanguages
from mtkit.decode.bounds import length_sorted_batches, output_bound, position_limit, target_languages
from mtkit.decode.mbr import MBR, translations
from mtkit.decode.settings import DEFAULTS, DTYPES, DecodingSettings
from mtkit.decode.sharding import Shard, dealt
from mtkit.errors import UserError
from mtkit.model.folders import check_pretrained_source


def generate_translations(
    model, tokenizer, sentences: Sequence[str], settings: DecodingSettings = DEFAULTS, **options
) -> list[str]:
    """Translate ``sentences`` in length-sorted batches and return them in input order: the beam's best, or with
    ``settings.decoding`` mbr the minimum-Bayes-risk choice among :func:`translation_candidates` (whose arguments
    ``options`` are)."""
    return translations(translation_candidates(model, tokenizer, sentences, settings, **options), settings.mbr)


@torch.no_grad()
def translation_candidates(
    model,
    tokenizer,
    sentences: Sequence[str],
    settings: DecodingSettings = DEFAULTS,
    *,
    progress: bool = False,
    target_langs: Sequence[str | None] | str | None = None,
    languages: ModelLanguages | None = None,
    shard: Shard | None = None,
    **generate_kwargs,
) -> list[list[str]]:
    """For each sentence, its beam-search translation or ``settings.mbr.samples`` MBR candidates: epsilon samples
    (drawn under ``settings.seed`` without touching the caller's random state) or the beam's n-best list.

    ``sentences`` are the model's inputs (a prompt already rendered: :meth:`DecodingSettings.render`). Each batch of
    ``settings.batch_size`` generates at most :func:`output_bound` tokens (``max_len_a`` times its longest source,
    prompt included, plus ``max_len_b``, and never more than ``max_new_tokens``), and at least one token before
    ``</s>`` (as CTranslate2 does: a sentence never gets an empty translation). ``target_langs`` (one language, or
    one per sentence) is told to the model its family's way (:class:`mtkit.data.languages.ModelLanguages`: a forced
    first token, or a source prefix), a batch holding one language. With ``shard``, this process decodes its part of
    the batches (:func:`mtkit.decode.sharding.dealt`) and the other sentences get no candidates (an empty list).
    Extra keyword arguments go to ``generate`` (``synced_gpus=True`` under ZeRO-3, for instance: processes whose
    batches stop at different lengths keep stepping together).
    """
    mbr = settings.mbr
    languages = languages or ModelLanguages.of(tokenizer)
    langs = target_languages(target_langs, len(sentences))
    texts = [languages.source_text(text, lang) for text, lang in zip(sentences, langs)]
    limit = position_limit(model.config)
    max_new_tokens = settings.max_new_tokens
    if limit is not None:  # longer inputs or outputs would index past the position table
        max_new_tokens = min(max_new_tokens, limit)
    device = next(model.parameters()).device
    decode, n = _decoding(mbr, settings.num_beams, settings.length_penalty)
    was_training = model.training
    model.eval()
    out: list[list[str]] = [[] for _ in texts]
    gpus = [device.index if device.index is not None else torch.cuda.current_device()] if device.type == "cuda" else []
    # sampling leaves the caller's random state (training's) as it was; the lengths are ours alone
    with torch.random.fork_rng(devices=gpus), lengths_from_new_tokens(model.generation_config):
        if mbr is not None:
            torch.manual_seed(mbr.seed)
        calls = dealt(list(length_sorted_batches(texts, settings.batch_size, langs=langs)), shard)
        for call in tqdm(calls, desc="translating", unit="batch", disable=not progress):
            idx = call.indices
            enc = tokenizer([texts[i] for i in idx], return_tensors="pt", padding=True, truncation=True,
                            max_length=limit)  # fmt: skip
            longest = int(enc["attention_mask"].sum(1).max())  # on the host, before the copy: no device sync
            bound = output_bound(longest, max_new_tokens, settings.max_len_a, settings.max_len_b)
            enc = {k: v.to(device, non_blocking=True) for k, v in enc.items() if k in ("input_ids", "attention_mask")}
            forced = languages.forced_token_id(tokenizer, langs[idx[0]])
            language = {} if forced is None else {"forced_bos_token_id": forced}
            ids = model.generate(**enc, **decode, **language, min_new_tokens=1, max_new_tokens=bound, **generate_kwargs)
            if forced is not None:  # the language token is no text (M2M100's tokenizer would decode it)
                ids = ids.masked_fill(ids == forced, tokenizer.pad_token_id)
            if not call.kept:  # a filler call: it only keeps this process in step with the others
                continue
            decoded = [text.strip() for text in tokenizer.batch_decode(ids, skip_special_tokens=True)]
            for j, i in enumerate(idx):
                out[i] = decoded[j * n : (j + 1) * n]
    model.train(was_training)
    return out


@contextmanager
def lengths_from_new_tokens(generation_config) -> Iterator[None]:
    """``generation_config`` without ``max_length``/``min_length`` while it lasts: every ``generate`` call here sets
    ``max_new_tokens`` and ``min_new_tokens``, which take precedence over them anyway, and transformers warns ("Both
    `max_new_tokens` and `max_length` seem to have been set") whenever the model's config also has one."""
    saved = generation_config.max_length, generation_config.min_length
    generation_config.max_length = generation_config.min_length = None
    try:
        yield
    finally:
        generation_config.max_length, generation_config.min_length = saved


def _decoding(mbr: MBR | None, beam_size: int, length_penalty: float) -> tuple[dict, int]:
    """``generate``'s search arguments, and how many outputs each source gets."""
    penalty = {"length_penalty": length_penalty}
    if mbr is None:
        return ({"num_beams": beam_size, **penalty} if beam_size > 1 else {"num_beams": 1}), 1
    if mbr.candidates == "beam":
        beams = max(beam_size, mbr.samples)
        return {"num_beams": beams, **penalty, "num_return_sequences": mbr.samples}, mbr.samples
    cut = mbr.sampling("hf")
    sample = {"do_sample": True, "num_beams": 1, "num_return_sequences": mbr.samples, "top_k": 0, "temperature": 1.0}
    sample["top_p"] = cut["top_p"]
    if cut["epsilon"] > 0:
        sample["epsilon_cutoff"] = cut["epsilon"]
    return sample, mbr.samples


class Translator:
    """A model and its tokenizer, loaded once, translating lists of sentences.

    >>> Translator("runs/demo/final").translate(["The cat is blue."])  # doctest: +SKIP
    """

    def __init__(self, model: str | Path, device: str | None = None, dtype: str = "auto") -> None:
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        check_pretrained_source(str(model), "--model", weights=True)  # no such folder, not seq2seq, corrupt weights
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        torch_dtype = dict(zip(DTYPES, ("auto", torch.float32, torch.bfloat16, torch.float16), strict=True))
        if dtype not in torch_dtype:
            raise UserError(f"--dtype: {dtype!r} is not one of {', '.join(torch_dtype)}")
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(str(model))
            self.model = AutoModelForSeq2SeqLM.from_pretrained(str(model), dtype=torch_dtype[dtype])
        except OSError as err:
            raise UserError(f"--model: cannot load {model}: {str(err).splitlines()[0]}") from None
        self.model.to(self.device).eval()
        self.languages = ModelLanguages.of(self.tokenizer, model)

    @property
    def generation_config(self):
        """The model's saved decoding settings."""
        return self.model.generation_config

    def translate(self, sentences: Sequence[str], settings: DecodingSettings | None = None, **kwargs) -> list[str]:
        """Translate a list of sentences: :func:`generate_translations`."""
        return generate_translations(
            self.model, self.tokenizer, sentences, settings or DEFAULTS, languages=self.languages, **kwargs
        )

    def candidates(
        self, sentences: Sequence[str], settings: DecodingSettings | None = None, **kwargs
    ) -> list[list[str]]:
        """Each sentence's MBR candidates (beam search: its one translation): :func:`translation_candidates`."""
        return translation_candidates(
            self.model, self.tokenizer, sentences, settings or DEFAULTS, languages=self.languages, **kwargs
        )
