#!/usr/bin/env bash
# vLLM on a CUDA GPU, for a machine that has one (CI runs the same tests on vLLM's CPU build):
# the vLLM tests of `.ci/slow_tests.sh` (in-process `VLLMBackend` and `vllm serve` behind
# `OpenAIBackend`, both checked against transformers' greedy text) with the two engines sharing
# the card, then the in-process engine's batched greedy decoding timed on a random 12-layer,
# 1024-wide Llama (built on the spot, no download) in float32 and bfloat16, eager (no CUDA graphs).
#
# Usage: bash eval/gpu_vllm.sh   (repomem's dependencies, its `test` extras, transformers and a
#        CUDA build of vllm importable; OUT=DIR, BATCH=64, TOKENS=128, HIDDEN=1024, LAYERS=12)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu-vllm}
work=$(mktemp -d)
mkdir -p "$OUT"
export HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
python3 -c "import torch, transformers, vllm; print('torch', torch.__version__, 'transformers',
transformers.__version__, 'vllm', vllm.__version__, 'cuda', torch.cuda.is_available())"
REPOMEM_TEST_VLLM_GPU_MEMORY=0.3 python3 -m pytest -p no:cacheprovider -s -rs \
    tests/completion/backends/test_backends_slow.py 2>&1 | tee "$OUT/tests.log" \
    | grep -E "vLLM offline|vllm serve|passed|failed|Error" | tail -20
# a file of its own, not stdin: vLLM's engine processes may import the main module again
cat >"$work/time_vllm.py" <<'PY'
import asyncio
import statistics
import sys
import time

import tinymodel

from repomem.completion.backends.base import GenerationRequest
from repomem.completion.backends.vllm import VLLMBackend

if __name__ == "__main__":
    work, batch, tokens, hidden, layers = sys.argv[1], *map(int, sys.argv[2:])
    model = tinymodel.build_tiny_model(
        f"{work}/model", fim="codellama", hidden_size=hidden, layers=layers
    )
    prompts = [f"def f{i}(x):\n    return x + {i}\n\n" for i in range(batch)]
    requests = [GenerationRequest(p, max_tokens=tokens) for p in prompts]
    for dtype in ("float32", "bfloat16"):
        started = time.monotonic()
        backend = VLLMBackend(
            str(model),
            context_window=1024,
            engine_args={"dtype": dtype, "gpu_memory_utilization": 0.3, "enforce_eager": True},
        )
        ready = time.monotonic() - started
        runs = []
        for _ in range(3):
            started = time.monotonic()
            texts = asyncio.run(backend.complete_batch(requests))
            runs.append(time.monotonic() - started)
        made = sum(backend.count_tokens(t) for t in texts)
        middle = statistics.median(runs)
        print(
            f"{dtype}: engine ready in {ready:.1f} s; {batch} prompts x {tokens} tokens, median"
            f" of 3: {middle:.3f} s ({made / middle:,.0f} tokens/s; runs"
            f" {', '.join(f'{r:.3f}' for r in runs)})",
            flush=True,
        )
        del backend
PY
PYTHONPATH=$PWD:$PWD/tests${PYTHONPATH:+:$PYTHONPATH} python3 "$work/time_vllm.py" "$work" \
    "${BATCH:-64}" "${TOKENS:-128}" "${HIDDEN:-1024}" "${LAYERS:-12}" \
    2>"$OUT/timing.log" | tee "$OUT/timing.txt"
tail -5 "$OUT/timing.log"
rm -rf "$work"
