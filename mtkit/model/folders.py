"""Model folders checked before they load: a path that does not exist, a LoRA adapter alone, a folder without a
``config.json`` or with one that is not JSON, an encoder-only (or decoder-only) model where a translation model is
due, a weights file that is missing, truncated or corrupt: each one line naming the folder, the file and what is
wrong, instead of a transformers or safetensors traceback. Hub ids are left to the hub."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from mtkit.errors import UserError

#: The weight files of a ``save_pretrained`` folder (one of them).
WEIGHTS = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json")


def index_shards(index: Path) -> list[str]:
    """The weight files a sharded folder's index (``*.index.json``) names, each once, sorted."""
    return sorted(set(json.loads(index.read_text(encoding="utf-8"))["weight_map"].values()))


def looks_local(value: str) -> bool:
    """Whether ``value`` names a local path rather than a hub id (``user/name``): it exists, starts like a path
    (``/``, ``.``, ``~``), has more than one ``/``, or its first part is a folder here (``runs/final``)."""
    path = Path(value).expanduser()
    first = Path(value.split("/", 1)[0])
    return (
        value.startswith(("/", ".", "~"))
        or value.count("/") >= 2
        or path.exists()
        or ("/" in value and first.is_dir())
        or "\\" in value
    )


def check_weights_file(path: Path, where: str) -> None:
    """Refuse a ``.safetensors`` file whose header does not describe the file (truncated, cut or not safetensors), or a
    ``.bin`` that is not a torch zip archive; ``where`` starts the message (the flag and folder)."""
    if path.suffix == ".safetensors":
        from safetensors import SafetensorError, safe_open

        try:
            with safe_open(str(path), "pt"):
                pass
        except (SafetensorError, OSError) as err:
            why = str(err).removeprefix("Error while deserializing header: ")
            raise UserError(f"{where}: {path.name} is truncated or corrupt: header {why}") from None
    elif path.suffix == ".bin" and not zipfile.is_zipfile(path):
        raise UserError(f"{where}: {path.name} is truncated or corrupt (not a torch zip archive)")


def _config(path: Path, where: str) -> dict:
    try:
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        why = getattr(err, "strerror", None) or str(err).splitlines()[0]
        raise UserError(f"{where}: config.json cannot be read ({why})") from None
    if not isinstance(config, dict) or not config.get("model_type"):
        raise UserError(f"{where}: config.json names no model_type (not a transformers model config)")
    return config


def _check_weights(path: Path, where: str) -> None:
    present = [name for name in WEIGHTS if (path / name).is_file()]
    if not present:
        raise UserError(f"{where}: no weights ({' or '.join(WEIGHTS[::2])}) beside its config.json")
    name = present[0]
    if not name.endswith(".index.json"):
        check_weights_file(path / name, where)
        return
    try:
        shards = index_shards(path / name)
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError):
        raise UserError(f"{where}: {name} cannot be read (no weight_map of shard files)") from None
    for shard in shards:
        if not (path / shard).is_file():
            raise UserError(f"{where}: shard {shard} (named in {name}) is missing")
        check_weights_file(path / shard, where)


def check_pretrained_source(
    value: str | None, flag: str, needs: tuple[str, ...] = ("config.json",), weights: bool = False
) -> None:
    """A local folder given to ``flag`` must exist and hold one of ``needs``; with ``weights`` it is a model to load:
    a ``config.json`` of a sequence-to-sequence model type and intact weights (:data:`WEIGHTS`). A LoRA adapter alone
    is named as such; hub ids are left to the hub."""
    if not value or not looks_local(value):
        return
    path, where = Path(value).expanduser(), f"{flag} {value}"
    if not path.exists():
        raise UserError(f"{where}: no such folder (and not a hub id like google/flan-t5-base)")
    if not path.is_dir():
        raise UserError(f"{where}: not a folder (a save_pretrained model folder is due)")
    if (path / "adapter_config.json").is_file() and not (path / "config.json").is_file():
        raise UserError(
            f"{where}: a LoRA adapter without its base model; give the merged model (a LoRA run's final/) or "
            "the base model named in its adapter_config.json"
        )
    if (path / "mtkit_ct2.json").is_file() and weights:
        raise UserError(f"{where}: a CTranslate2 model; translate with it through --engine ct2")
    if not any((path / name).is_file() for name in needs):
        raise UserError(f"{where}: no {' or '.join(needs)} (not a folder written by save_pretrained)")
    if weights:
        check_seq2seq(_config(path, where), where)
        _check_weights(path, where)


def check_seq2seq(config: dict, where: str) -> None:
    """Refuse a model type transformers cannot translate with (``AutoModelForSeq2SeqLM`` has no class for it: an
    encoder alone such as bert, or a decoder alone such as gpt2)."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES as SEQ2SEQ

    kind = config["model_type"]
    if kind not in SEQ2SEQ:
        raise UserError(
            f"{where}: config.json: not a sequence-to-sequence model: {kind} (an encoder or a decoder alone "
            "cannot translate; give an encoder-decoder such as bart, marian or t5)"
        )
