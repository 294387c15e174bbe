"""``scripts/push_to_hub.py DIR REPO_ID [--hub_private_repo] [--dry_run]``: upload a model folder to the hub."""

from __future__ import annotations

from collections.abc import Sequence

from mtkit.cli.args import Parser
from mtkit.errors import cli_entry
from mtkit.export.hub import push, repo_id_for, upload_plan


def build_parser() -> Parser:
    """The argument parser of ``scripts/push_to_hub.py``."""
    p = Parser(
        prog="push_to_hub.py",
        description="Upload a model folder (a run's final/, export_model.py's or average_checkpoints.py's output) to "
        "the Hugging Face hub: model, tokenizer, generation config, prompt and model card, and the CTranslate2 "
        "conversion beside it (from scripts/export_ct2.py or --export_ct2) as ctranslate2/. The token comes from "
        "HF_TOKEN or `hf auth login`.",
    )
    p.add_argument("model_dir", metavar="DIR", help="the model folder (with its README.md model card)")
    p.add_argument("repo_id", metavar="REPO_ID", help="the hub repository, user/name or org/name (created if needed)")
    p.add_argument("--hub_private_repo", action="store_true", help="create the repository private")
    p.add_argument("--commit_message", help="default: Upload DIR's name (mtkit)")
    p.add_argument("--dry_run", action="store_true", help="list what would be uploaded, and where, then stop")
    return p


@cli_entry
def main(argv: Sequence[str] | None = None) -> int:
    """Check the folder and the id, then upload (or list, with ``--dry_run``)."""
    args = build_parser().parse_args(argv)
    repo_id = repo_id_for(args.repo_id, args.model_dir, flag="REPO_ID")
    if args.dry_run:
        for name, source in upload_plan(args.model_dir).items():
            print(f"{name}\t{source}")
        return 0
    print(push(args.model_dir, repo_id, private=args.hub_private_repo, message=args.commit_message))
    return 0
