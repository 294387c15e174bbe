"""Sharing a model folder on the Hugging Face hub: the model, tokenizer, generation config, prompt and card, and its
CTranslate2 conversion (when there is one) under ``ctranslate2/``, uploaded in one commit through
``huggingface_hub`` (``HfApi.create_repo``, ``HfApi.upload_folder``). The token comes from where
``huggingface_hub`` looks (``HF_TOKEN``, the cached ``hf auth login``) and is never printed or written; without it, or
offline, the upload fails in one line that says how to retry, and the folder is left as it was."""

from __future__ import annotations

import json
import shlex
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mtkit.decode.ct2 import INFO, is_ct2_model
from mtkit.errors import UserError
from mtkit.export.card import CARD, MODEL_LINE

CT2_DIR = "ctranslate2"


def repo_id_for(hub_model_id: str | None, output_dir: str | Path, flag: str = "--hub_model_id") -> str:
    """The repository to push to: ``hub_model_id``, else the output folder's name (then under the token's
    account); a malformed id is a :class:`UserError`."""
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    repo_id = hub_model_id or Path(output_dir).resolve().name
    try:
        validate_repo_id(repo_id)
    except HFValidationError as err:
        raise UserError(f"{flag}: {repo_id!r} is not a hub repository id like user/name ({err})") from None
    return repo_id


def conversion_of(model_dir: Path) -> Path | None:
    """The CTranslate2 folder beside ``model_dir`` converted from it (its ``mtkit_ct2.json`` names it as source)."""
    source = model_dir.resolve()
    for sibling in sorted(model_dir.resolve().parent.iterdir()):
        if sibling.is_dir() and sibling != source and is_ct2_model(sibling):
            if Path(json.loads((sibling / INFO).read_text(encoding="utf-8")).get("source", "")) == source:
                return sibling
    return None


def _files(folder: Path) -> list[Path]:
    """The files of ``folder``, hidden and temporary ones (``.name``, ``*.tmp``) left out."""
    found = [p for p in folder.rglob("*") if p.is_file() and not p.name.endswith(".tmp")]
    return sorted(p for p in found if not any(part.startswith(".") for part in p.relative_to(folder).parts))


def upload_plan(model_dir: str | Path) -> dict[str, Path]:
    """``{path in the repository: local file}``: every file of ``model_dir`` and of its CTranslate2 conversion
    (under ``ctranslate2/``). A folder that is no model, or has no card, is a :class:`UserError`."""
    model_dir = Path(model_dir)
    if not model_dir.is_dir():
        raise UserError(f"DIR {model_dir}: no such folder")
    if not (model_dir / "config.json").is_file() and not is_ct2_model(model_dir):
        raise UserError(f"DIR {model_dir}: not a model folder (no config.json)")
    if not (model_dir / CARD).is_file():
        raise UserError(
            f"DIR {model_dir}: no {CARD} model card (export the model with scripts/export_model.py, or add one)"
        )
    plan = {p.relative_to(model_dir).as_posix(): p for p in _files(model_dir)}
    ct2 = None if is_ct2_model(model_dir) else conversion_of(model_dir)
    if ct2 is not None:
        plan.update({f"{CT2_DIR}/{p.relative_to(ct2).as_posix()}": p for p in _files(ct2)})
    return plan


def missing() -> list[str]:
    """What an upload lacks before it starts: a token, a reachable hub."""
    from huggingface_hub import constants, get_token

    problems = [] if get_token() else ["no Hugging Face token (set HF_TOKEN or run `hf auth login`)"]
    return problems + (["offline mode (HF_HUB_OFFLINE=1)"] if constants.HF_HUB_OFFLINE else [])


@contextmanager
def staged(model_dir: str | Path, repo_id: str) -> Iterator[Path]:
    """A temporary folder laid out as the repository: links to the files of :func:`upload_plan`, and the card with
    the repository id in its usage example."""
    plan = upload_plan(model_dir)
    with tempfile.TemporaryDirectory(prefix="mtkit-hub-") as tmp:
        root = Path(tmp)
        for name, source in plan.items():
            target = root / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if name == CARD:
                text = source.read_text(encoding="utf-8")
                target.write_text(MODEL_LINE.sub(f"model_id = {json.dumps(repo_id)}", text), encoding="utf-8")
            else:
                target.symlink_to(source.resolve())
        yield root


def push(model_dir: str | Path, repo_id: str, private: bool = False, message: str | None = None) -> str:
    """Upload ``model_dir`` (:func:`upload_plan`) to ``repo_id``, creating the repository when needed; return the
    commit's address. Every failure is one :class:`UserError` line; nothing is changed here."""
    from huggingface_hub import HfApi, constants, get_token
    from huggingface_hub.errors import HTTPError, OfflineModeIsEnabled  # HTTPError: its HTTP client's, any failure

    model_dir = Path(model_dir)
    later = f"{model_dir} is kept; upload it later with: " + shlex.join(
        ["python", "scripts/push_to_hub.py", str(model_dir), repo_id, *(["--hub_private_repo"] if private else [])]
    )
    plan = upload_plan(model_dir)  # checked before any network access
    if missing():
        raise UserError(f"push to {repo_id}: {' and '.join(missing())}; {later}")
    token = get_token()
    api = HfApi(token=token)
    try:
        with staged(model_dir, repo_id) as folder:
            repo = api.create_repo(repo_id, private=private, exist_ok=True, repo_type="model")
            commit = api.upload_folder(
                repo_id=repo.repo_id, folder_path=folder, commit_message=message or f"Upload {model_dir.name} (mtkit)"
            )
    except (HTTPError, OfflineModeIsEnabled, OSError) as err:
        reason = " ".join(str(err).split()).replace(token, "***")
        raise UserError(f"push to {repo_id} at {constants.ENDPOINT}: {type(err).__name__}: {reason}; {later}") from None
    print(f"uploaded {len(plan)} files of {model_dir} to {commit.repo_url}")
    return commit.commit_url
