"""Builds a tiny random Llama model and its own BPE tokenizer in a directory.

The model backends are tested on a real model directory without downloading anything: the
tokenizer is trained here on Python source from the standard library, and the weights are
random but seeded, so greedy generation is deterministic. ``head_dim`` is 64 because vLLM's
CPU attention kernels support no smaller head size.

Run as a script (``python tests/tinymodel.py DIR [--fim STYLE]``) to build one by hand.
"""

from __future__ import annotations

import argparse
import inspect
import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerFast

#: special tokens each fill-in-the-middle style adds to the vocabulary
FIM_TOKENS: dict[str, tuple[str, ...]] = {
    "codellama": ("▁<PRE>", "▁<SUF>", "▁<MID>", "▁<EOT>"),
    "starcoder": ("<fim_prefix>", "<fim_middle>", "<fim_suffix>", "<fim_pad>"),
    "deepseek": ("<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>"),
    "qwen": ("<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>"),
}

BOS, EOS, PAD = "<s>", "</s>", "<pad>"


def training_text() -> str:
    """A little real Python code to train the tokenizer on."""
    import json.encoder
    import textwrap

    return inspect.getsource(textwrap) + inspect.getsource(json.encoder)


def build_tokenizer(vocab_size: int = 512, fim: str | None = None) -> PreTrainedTokenizerFast:
    """A byte-level BPE tokenizer wrapped as a ``PreTrainedTokenizerFast``.

    Its alphabet is only the characters of the training text (ASCII), so every token decodes
    to whole characters and random generations compare as clean strings across engines.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    extra = list(FIM_TOKENS[fim]) if fim else []
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[PAD, BOS, EOS, *extra],
        show_progress=False,
    )
    tok.train_from_iterator(training_text().splitlines(keepends=True), trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=BOS,
        eos_token=EOS,
        pad_token=PAD,
        additional_special_tokens=extra,
        # as Llama tokenizers: a decoder-only model takes no token_type_ids
        model_input_names=["input_ids", "attention_mask"],
    )


def build_tiny_model(
    directory: str | Path,
    *,
    fim: str | None = None,
    hidden_size: int = 128,
    layers: int = 2,
    max_positions: int = 4096,
    seed: int = 0,
) -> Path:
    """Save a tiny random Llama and its tokenizer to ``directory``; returns the directory."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    directory = Path(directory)
    tokenizer = build_tokenizer(fim=fim)
    head_dim = 64
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=layers,
        num_attention_heads=hidden_size // head_dim,
        num_key_value_heads=hidden_size // head_dim,
        head_dim=head_dim,
        max_position_embeddings=max_positions,
        # wide initial weights spread the logits, so greedy decoding has no near-ties
        initializer_range=0.2,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        dtype="float32",
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def main() -> None:
    parser = argparse.ArgumentParser(description="Build a tiny random Llama model directory.")
    parser.add_argument("directory")
    parser.add_argument("--fim", choices=sorted(FIM_TOKENS))
    args = parser.parse_args()
    path = build_tiny_model(args.directory, fim=args.fim)
    print(json.dumps({"model": str(path)}))


if __name__ == "__main__":
    main()
