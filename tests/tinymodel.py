"""Builds a tiny random Llama model and its own BPE tokenizer in a directory.

The model backends are tested on a real model directory without downloading anything: the
tokenizer is trained here on Python source from the standard library, and the weights are
random but seeded, so greedy generation is deterministic. ``head_dim`` is 64 because vLLM's
CPU attention kernels support no smaller head size. ``write_gguf`` writes the same model as a
GGUF file for llama.cpp.

Run as a script (``python tests/tinymodel.py DIR [--fim STYLE] [--gguf]``) to build one by hand.
"""

from __future__ import annotations

import argparse
import inspect
import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
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
    with torch.no_grad():
        # EOS's logit is then exactly 0, below the best of the others: greedy text runs to its
        # token budget on every engine and device (as first seeded, the model wrote EOS after
        # 146 tokens, which a GPU reached before the cancel test could cancel the generation)
        model.lm_head.weight[tokenizer.eos_token_id] = 0.0
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def _unpermute_rope(weights: np.ndarray, heads: int) -> np.ndarray:
    """Reorder a query or key projection from Hugging Face's rotary layout (first half, second
    half) to llama.cpp's (interleaved pairs), as llama.cpp's own converter does."""
    pairs = weights.reshape(heads, 2, weights.shape[0] // heads // 2, *weights.shape[1:])
    return pairs.swapaxes(1, 2).reshape(weights.shape)


def write_gguf(model_dir: str | Path, path: str | Path | None = None) -> Path:
    """Write the tiny model in ``model_dir`` as a float32 GGUF file (``model.gguf`` beside it
    unless ``path`` is given), with its byte-level BPE tokenizer; returns the file's path.

    The tokenizer adds no BOS token, as the Hugging Face one here adds none, so both engines
    see the same token ids for the same prompt.
    """
    import gguf
    from safetensors.numpy import load_file

    model_dir = Path(model_dir)
    path = Path(path) if path is not None else model_dir / "model.gguf"
    config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    tokenizer = json.loads((model_dir / "tokenizer.json").read_text(encoding="utf-8"))
    blocks = config["num_hidden_layers"]
    heads, kv_heads = config["num_attention_heads"], config["num_key_value_heads"]

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_context_length(config["max_position_embeddings"])
    writer.add_embedding_length(config["hidden_size"])
    writer.add_block_count(blocks)
    writer.add_feed_forward_length(config["intermediate_size"])
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    writer.add_rope_dimension_count(config["head_dim"])
    writer.add_rope_freq_base(config["rope_parameters"]["rope_theta"])
    writer.add_layer_norm_rms_eps(config["rms_norm_eps"])
    writer.add_vocab_size(config["vocab_size"])
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)

    vocab = tokenizer["model"]["vocab"]
    tokens = sorted(vocab, key=vocab.__getitem__)
    special = {t["content"] for t in tokenizer["added_tokens"] if t["special"]}
    writer.add_tokenizer_model("gpt2")
    # the pre-tokenizer is Hugging Face's ByteLevel with its GPT-2 split pattern
    writer.add_tokenizer_pre("gpt-2")
    writer.add_token_list(tokens)
    writer.add_token_types(
        [gguf.TokenType.CONTROL if t in special else gguf.TokenType.NORMAL for t in tokens]
    )
    writer.add_token_merges([" ".join(pair) for pair in tokenizer["model"]["merges"]])
    writer.add_bos_token_id(config["bos_token_id"])
    writer.add_eos_token_id(config["eos_token_id"])
    writer.add_pad_token_id(config["pad_token_id"])
    writer.add_add_bos_token(False)

    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, blocks)
    for name, tensor in load_file(str(model_dir / "model.safetensors")).items():
        if name.endswith("q_proj.weight"):
            tensor = _unpermute_rope(tensor, heads)
        elif name.endswith("k_proj.weight"):
            tensor = _unpermute_rope(tensor, kv_heads)
        writer.add_tensor(names.get_name(name, try_suffixes=(".weight",)), tensor)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description="Build a tiny random Llama model directory.")
    parser.add_argument("directory")
    parser.add_argument("--fim", choices=sorted(FIM_TOKENS))
    parser.add_argument("--gguf", action="store_true", help="also write DIR/model.gguf")
    args = parser.parse_args()
    path = build_tiny_model(args.directory, fim=args.fim)
    result = {"model": str(path)}
    if args.gguf:
        result["gguf"] = str(write_gguf(path))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
