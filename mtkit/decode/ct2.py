"""Translation with a CTranslate2 folder written by :func:`mtkit.export.ct2.export_ct2` (the same prompts,
length-sorted batches and output bounds as :mod:`mtkit.decode.generate`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from mtkit.data.languages import ModelLanguages
from mtkit.decode.bounds import length_sorted_batches, output_bound, target_languages
from mtkit.decode.mbr import translations
from mtkit.decode.settings import DEFAULTS, DecodingSettings
from mtkit.errors import UserError

#: CTranslate2's weight types (``--quantization``); int8 is the fast choice on CPU, int8_float16 or bfloat16 on GPU.
QUANTIZATIONS = ("int8", "int8_float16", "int8_bfloat16", "int16", "float16", "bfloat16", "float32")
INFO = "mtkit_ct2.json"
CARRIED = ("generation_config.json", "prompt.json")


def is_ct2_model(path: str | Path) -> bool:
    """Whether ``path`` is a folder written by :func:`mtkit.export.ct2.export_ct2`."""
    return (Path(path) / "model.bin").is_file() and (Path(path) / INFO).is_file()


class CT2Translator:
    """A CTranslate2 folder and its tokenizer, translating lists of sentences like
    :class:`mtkit.decode.generate.Translator` (same prompts, length-sorted batches and output bounds)."""

    def __init__(self, path: str | Path, device: str | None = None, threads: int = 0) -> None:
        import ctranslate2
        from transformers import AutoTokenizer, GenerationConfig

        path = Path(path)
        if not is_ct2_model(path):
            raise UserError(f"--model: {path} is not a CTranslate2 model (convert one with scripts/export_ct2.py)")
        self.info = json.loads((path / INFO).read_text(encoding="utf-8"))
        self.tokenizer = AutoTokenizer.from_pretrained(str(path))
        self.generation_config = (
            GenerationConfig.from_pretrained(str(path)) if (path / "generation_config.json").is_file() else None
        )
        device = device or ("cuda" if ctranslate2.get_cuda_device_count() else "cpu")
        kind, _, index = device.partition(":")  # cuda:1 -> cuda, device 1
        self._load = {
            "model_path": str(path),
            "device": kind,
            "device_index": int(index or 0),
            "intra_threads": threads,
        }
        self.translator = ctranslate2.Translator(**self._load)
        self.languages = ModelLanguages.of(self.tokenizer, path)
        # what transformers forces through the generation config, CTranslate2 gets as a target prefix
        forced = getattr(self.generation_config, "forced_bos_token_id", None)
        self.default_lang = self.languages.language_of(self.tokenizer, forced)

    def translate(self, sentences: Sequence[str], settings: DecodingSettings | None = None, **kwargs) -> list[str]:
        """Translate ``sentences``; the arguments mean what they mean in
        :func:`mtkit.decode.generate.translation_candidates`."""
        settings = settings or DEFAULTS
        return translations(self.candidates(sentences, settings, **kwargs), settings.mbr)

    def candidates(
        self,
        sentences: Sequence[str],
        settings: DecodingSettings | None = None,
        *,
        progress: bool = False,
        target_langs: Sequence[str | None] | str | None = None,
        **kwargs,
    ) -> list[list[str]]:
        """As :func:`mtkit.decode.generate.translation_candidates`: the beam's best, or ``settings.mbr.samples``
        candidates (CTranslate2's nucleus sampling under ``settings.seed``, or the beam's n-best list); a family that
        forces the target language's token gets it as ``target_prefix``."""
        import ctranslate2

        settings = settings or DEFAULTS
        if kwargs:
            raise TypeError(f"unexpected keyword arguments: {', '.join(kwargs)}")
        mbr, batch_size, max_new_tokens = settings.mbr, settings.batch_size, settings.max_new_tokens
        langs = [lang or self.default_lang for lang in target_languages(target_langs, len(sentences))]
        texts = [self.languages.source_text(t, lang) for t, lang in zip(sentences, langs)]
        limit = self.info.get("position_limit")
        if limit is not None:
            max_new_tokens = min(max_new_tokens, limit)
        # transformers forces </s> as the last of max_new_tokens when the model says so (BART); CTranslate2 stops
        # without it, so one fewer token gives the same output.
        forced_eos = self.generation_config is not None and self.generation_config.forced_eos_token_id is not None
        search = {"beam_size": settings.num_beams, "length_penalty": settings.length_penalty}
        if mbr is not None and mbr.candidates == "beam":
            search["beam_size"] = max(settings.num_beams, mbr.samples)
        if mbr is not None and mbr.candidates == "sample":  # sampling_topk 0: the whole (nucleus-cut) distribution
            search = {"beam_size": 1, "sampling_topk": 0, "sampling_topp": mbr.sampling("ct2")["top_p"]}
            # CTranslate2 seeds a thread's generator once, when that thread first samples: a translator reloaded
            # after set_random_seed has fresh threads, so each call draws the same samples for the same seed
            ctranslate2.set_random_seed(mbr.seed)
            del self.translator  # one copy of the weights at a time
            self.translator = ctranslate2.Translator(**self._load)
        n = 1 if mbr is None else mbr.samples
        out: list[list[str]] = [[] for _ in texts]
        for idx in length_sorted_batches(texts, batch_size, progress, langs):
            ids = self.tokenizer([texts[i] for i in idx], truncation=limit is not None, max_length=limit).input_ids
            longest = max(map(len, ids))
            bound = output_bound(longest, max_new_tokens, settings.max_len_a, settings.max_len_b) - forced_eos
            prefix = self.languages.target_prefix(langs[idx[0]])
            results = self.translator.translate_batch(
                [self.tokenizer.convert_ids_to_tokens(x) for x in ids],
                target_prefix=None if prefix is None else [prefix] * len(idx),
                **search,
                num_hypotheses=n,
                max_decoding_length=max(1, bound),
                max_batch_size=batch_size,
            )
            for i, result in zip(idx, results):
                out[i] = [
                    self.tokenizer.decode(self.tokenizer.convert_tokens_to_ids(hyp[len(prefix or ()) :]),
                                          skip_special_tokens=True).strip()
                    for hyp in result.hypotheses
                ]  # fmt: skip
        return out
