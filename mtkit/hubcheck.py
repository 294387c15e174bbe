"""Whether a model named by its hub id can be fetched, asked once and fast before anything loads it: one ``HEAD``
of its ``config.json`` with a short timeout and no retries. Without it, transformers retries every file of the
model for close to a minute when the hub cannot be reached, then blames whichever flag it was loading."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from mtkit.errors import UserError

#: seconds the one probe waits for the hub before the hub counts as unreachable
PROBE_TIMEOUT_S = 5.0
OFFLINE_HINT = "pass a local model folder (one written by save_pretrained) instead, or set HF_HUB_OFFLINE=1 to use "
OFFLINE_HINT += "the copy in the local Hugging Face cache"


def is_hub_id(value: str) -> bool:
    """Whether ``value`` reads as a hub id (``name`` or ``namespace/name``) rather than a path on this machine: not
    one that exists, nor one inside a folder that does (``runs/demo/finale``: a mistyped path, not a hub id)."""
    if value.startswith(("/", ".", "~")) or value.count("/") > 1 or Path(value).exists():
        return False
    return "/" not in value or not Path(value.split("/")[0]).is_dir()


def _go_offline() -> None:
    """From here on in this process, the libraries read the hub's files from the local cache alone."""
    from huggingface_hub import constants

    os.environ["HF_HUB_OFFLINE"] = "1"
    constants.HF_HUB_OFFLINE = True


def check_hub_source(value: str | None, where: str, file: str = "config.json") -> None:
    """Refuse, in one line and within :data:`PROBE_TIMEOUT_S` (one ``HEAD`` of ``file``), a hub id the hub does not
    serve: the hub cannot be reached (no network, a proxy, ``HF_ENDPOINT`` down) and the model is not in the local
    cache, or it has no such model; or, under ``HF_HUB_OFFLINE=1``, one the local cache lacks. ``where`` says how the
    user gave it (``--model_name_or_path google/flan-t5-small``, or the recipe key and its file). A cached model with
    the hub out of reach is used offline, with a note; local paths are left to the loaders."""
    from huggingface_hub import constants, get_hf_file_metadata, hf_hub_url, try_to_load_from_cache
    from huggingface_hub.errors import HfHubHTTPError, HTTPError, RepositoryNotFoundError

    if not value or not is_hub_id(value):
        return
    if constants.HF_HUB_OFFLINE:
        if not isinstance(try_to_load_from_cache(value, file), str):
            raise UserError(
                f"{where}: HF_HUB_OFFLINE=1 and the model is not in the local Hugging Face cache; pass "
                "a local model folder (one written by save_pretrained), or unset HF_HUB_OFFLINE"
            )
        return
    try:
        get_hf_file_metadata(hf_hub_url(value, file), timeout=PROBE_TIMEOUT_S)
    except RepositoryNotFoundError:
        raise UserError(
            f"{where}: no such model on the Hugging Face Hub (a private or gated one needs `hf auth login`); "
            "check the id, or pass a local model folder"
        ) from None
    except HfHubHTTPError:
        return  # the hub answered: whatever else it said, loading the model reports it
    except (HTTPError, OSError) as err:
        if isinstance(try_to_load_from_cache(value, file), str):
            print(f"note: {where}: the Hugging Face Hub cannot be reached; using the cached copy", file=sys.stderr)
            _go_offline()
            return
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise UserError(
            f"{where}: the Hugging Face Hub ({constants.ENDPOINT}) cannot be reached ({reason}) and the model is "
            f"not in the local cache; {OFFLINE_HINT}"
        ) from None
