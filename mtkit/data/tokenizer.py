"""Train a shared source/target subword vocabulary (BPE or unigram) with Hugging Face ``tokenizers``."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import AutoTokenizer, PreTrainedTokenizerFast

from mtkit.errors import UserError

SPECIAL_TOKENS = ["<s>", "<pad>", "</s>", "<unk>"]


def train_tokenizer(
    texts: Iterable[str], *, vocab_size: int, kind: str = "bpe", batch_size: int = 1000
) -> PreTrainedTokenizerFast:
    """Train a SentencePiece-style subword tokenizer on ``texts``.

    NFKC-normalized, ``▁`` marks word starts, punctuation and math/currency symbols never merge with letters.

    Encoded sequences end with ``</s>``; ids 0-3 are ``<s> <pad> </s> <unk>``.
    """
    if kind == "bpe":
        model = models.BPE(unk_token="<unk>")
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS, min_frequency=2, show_progress=False
        )
    elif kind == "unigram":
        model = models.Unigram()
        trainer = trainers.UnigramTrainer(
            vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS, unk_token="<unk>", show_progress=False
        )
    else:
        raise UserError(f"--tokenizer_type: unknown kind '{kind}'; choose bpe or unigram")
    tok = Tokenizer(model)
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Metaspace(), pre_tokenizers.Split(Regex(r"[\p{P}\p{Sm}\p{Sc}\p{Sk}]"), behavior="isolated")]
    )
    tok.decoder = decoders.Metaspace()

    def batches() -> Iterator[list[str]]:
        batch: list[str] = []
        for text in texts:
            batch.append(text)
            if len(batch) == batch_size:
                yield batch
                batch = []
        if batch:
            yield batch

    tok.train_from_iterator(batches(), trainer=trainer)
    eos = tok.token_to_id("</s>")
    tok.post_processor = processors.TemplateProcessing(
        single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", eos)]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        unk_token="<unk>",
        model_max_length=1024,
    )


def load_tokenizer(name_or_path: str | Path, flag: str = "--tokenizer_name") -> PreTrainedTokenizerFast:
    """Load a saved or hub tokenizer, with a one-line error naming ``flag`` (the option that gave it) when that
    fails."""
    try:
        return AutoTokenizer.from_pretrained(str(name_or_path))
    except (OSError, ValueError) as err:
        raise UserError(f"{flag}: cannot load {name_or_path}: {str(err).splitlines()[0]}") from None
