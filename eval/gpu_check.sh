#!/usr/bin/env bash
# The transformers backend on a CUDA GPU, for a machine that has one (CI has none): the backend's
# tests, which run on the CPU and on the GPU there, then RepoEval on line tasks cut from
# repomem's own code, completed by a random Llama built on the spot (no download), on the GPU
# twice and on the CPU (CUDA hidden), the s/task columns side by side in OUT/*-results.md.
# EM is 0 with random weights: this measures the path and its speed, not quality.
#
# Usage: bash eval/gpu_check.sh   (repomem installed with its `transformers` and `test` extras;
#        OUT=DIR, TASKS=40, CPU_TASKS=8, HIDDEN=1024, LAYERS=12 override the defaults)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu-check}
work=$(mktemp -d)
mkdir -p "$OUT"
export HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers',
transformers.__version__, 'cuda', torch.cuda.is_available())"
python3 -m pytest -p no:cacheprovider -rs tests/completion/backends/test_backends.py \
    -k transformers 2>&1 | tee "$OUT/tests.log" | tail -3
mkdir -p "$work/repos/repomem" && cp -r repomem eval "$work/repos/repomem/"
repomem eval make-benchmark --repo "$work/repos/repomem" --kind line --n "${TASKS:-40}" \
    --out "$work/tasks.jsonl" --repo-name repomem
python3 -c "import sys; sys.path.insert(0, 'tests'); import tinymodel
tinymodel.build_tiny_model('$work/model', fim='codellama', hidden_size=${HIDDEN:-1024},
                           layers=${LAYERS:-12})" >/dev/null
evaluate() {  # NAME LIMIT [VAR=VALUE ...]: one RepoEval run, vanilla and repocoder-graph
    local name=$1 limit=$2 started
    shift 2
    started=$(date +%s)
    env "$@" repomem eval repoeval --tasks "$work/tasks.jsonl" --repos "$work/repos" \
        --out "$work/$name" --index-cache "$work/index" --method vanilla \
        --method repocoder-graph --backend transformers --model "$work/model" \
        --limit "$limit" >/dev/null 2>&1
    cp "$work/$name/results.md" "$OUT/$name-results.md"
    grep -E '^\| [a-z-]+ \| (vanilla|repocoder-graph) \| [0-9]' "$OUT/$name-results.md"
    echo "$name: $(($(date +%s) - started)) s"
}
evaluate gpu "${TASKS:-40}"
evaluate gpu-again "${TASKS:-40}"
evaluate cpu "${CPU_TASKS:-8}" CUDA_VISIBLE_DEVICES=
rm -rf "$work"
