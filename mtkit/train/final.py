"""What a run leaves for use: ``final/`` (weights, tokenizer, generation settings, prompt; a LoRA run's adapter
and merged model)."""

from __future__ import annotations

import copy
from pathlib import Path

from accelerate import Accelerator

from bias_eval.core.textio import follow_umask_tree, tree_modes
from mtkit.config import RunConfig
from mtkit.data.languages import ModelLanguages
from mtkit.data.prompts import Prompt
from mtkit.data.trained_languages import KEY as TRAINED
from mtkit.decode.settings import DecodingSettings
from mtkit.distributed.deepspeed import full_state_dict, no_deepspeed_lookup, unwrapped
from mtkit.distributed.fsdp import drop_tied_copies, uses_fsdp
from mtkit.model.lora import is_lora, save_lora
from mtkit.model.vocab import save_unpadded


def export_model(cfg: RunConfig, acc: Accelerator, model, tokenizer, final: Path, prompt: Prompt | None) -> None:
    """Write ``final/`` from every process' share: under ZeRO-3 the weights are gathered into one consolidated
    16-bit copy (``stage3_gather_16bit_weights_on_model_save``), under FSDP into a full fp32 one; elsewhere the fp32
    master weights are saved."""
    state_dict = full_state_dict(acc, model)  # a collective under ZeRO-3 and FSDP: every process takes part
    if uses_fsdp(acc):
        state_dict = drop_tied_copies(model, state_dict)
    if not acc.is_main_process:
        return
    kept = tree_modes(final)  # what was there keeps its mode
    plain = unwrapped(acc, model)
    plain.config.use_cache = True  # off while training with gradient checkpointing; decoding wants it
    with no_deepspeed_lookup(acc):
        if is_lora(plain):
            save_lora(plain, state_dict, final)
        else:  # a vocabulary rounded up for training is written at the tokenizer's size
            save_unpadded(plain, final, state_dict)
    languages, targets = ModelLanguages.of(tokenizer), cfg.data.languages()
    languages.set_languages(tokenizer, cfg.data.source_lang, targets[0])  # plain `tokenizer(text)` reads the source
    tokenizer.save_pretrained(str(final))
    # the model's own, loaded with it (a pretrained model's: its forced tokens, Marian's bad_words_ids; else made
    # from its config), not asked of the hub again at the end of the run; the run then sets what it decided
    generation = copy.deepcopy(plain.generation_config)
    if len(targets) == 1 and languages.forces_target:  # plain `generate` writes the run's one target language
        generation.forced_bos_token_id = languages.forced_token_id(tokenizer, targets[0])
    DecodingSettings.from_eval(cfg.eval).save_into(generation)  # read back by translate.py and the bias report
    setattr(generation, TRAINED, list(targets))  # what translate.py and the bias report warn outside of
    generation.save_pretrained(str(final))
    if prompt is not None:
        prompt.save(final)
    follow_umask_tree(final, kept)  # safetensors writes the weights private (0o600): readable by the team like the rest
