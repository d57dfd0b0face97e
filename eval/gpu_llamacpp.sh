#!/usr/bin/env bash
# llama.cpp on a CUDA GPU, for a machine that has one (CI has none): builds llama-cpp-python with
# CUDA, checks that the GPU offload happens and how fast greedy decoding runs on the GPU and on
# the CPU (a random 12-layer, 1024-wide Llama written as float32 GGUF), then runs the llama.cpp
# tests (library, OpenAI-compatible server, `repomem complete`, the language server) with every
# layer on the GPU.
#
# Usage: bash eval/gpu_llamacpp.sh   (repomem installed with its `test` extras, the server's
#        packages (fastapi, uvicorn, sse-starlette, starlette-context, pydantic-settings), gguf,
#        scikit-build-core, cmake and nvcc; SDIST=llama_cpp_python-0.3.36.tar.gz builds from that
#        file instead of PyPI's, WHEELS=DIR keeps the built wheel for a second run, OUT=DIR,
#        HIDDEN=1024 and LAYERS=12 size the timed model)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu-llamacpp}
WHEELS=${WHEELS:-$OUT/wheels}
mkdir -p "$OUT" "$WHEELS"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
nvcc --version | tail -1
if ! ls "$WHEELS"/llama_cpp_python-*.whl >/dev/null 2>&1; then
    started=$(date +%s)
    # one architecture (the GPU's own) and no FlashAttention kernels: the test model needs
    # neither, and together they are most of the CUDA build's time
    arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
    CMAKE_ARGS="-DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=$arch -DGGML_CUDA_FA=OFF \
-DGGML_CUDA_NCCL=OFF -DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF" CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) \
        python3 -m pip wheel -q --no-deps --no-build-isolation -w "$WHEELS" \
        "${SDIST:-llama-cpp-python==0.3.36}" >"$OUT/build.log" 2>&1 \
        || { tail -40 "$OUT/build.log"; exit 1; }
    echo "llama-cpp-python built with CUDA (sm_$arch) in $(($(date +%s) - started)) s"
fi
python3 -m pip install -q --no-deps --no-index --force-reinstall "$WHEELS"/llama_cpp_python-*.whl
# the GGUF is written by a process of its own: a CUDA build of llama.cpp crashed loading a model
# in a process where torch had loaded its CUDA libraries
gguf=$(cd tests && python3 -c "import tempfile, tinymodel
print(tinymodel.write_gguf(tinymodel.build_tiny_model(tempfile.mkdtemp(), fim='codellama',
      hidden_size=${HIDDEN:-1024}, layers=${LAYERS:-12})))" \
    2>/dev/null | tail -1)
python3 - "$gguf" <<'EOF' 2>&1 | tee "$OUT/speed.log"
import sys
import time

from llama_cpp import Llama, llama_supports_gpu_offload

print("GPU offload supported:", llama_supports_gpu_offload())
gguf = sys.argv[1]
prompt = "def parse(self, text):\n    "
texts = {}
for layers in (-1, 0):
    llama = Llama(model_path=str(gguf), n_ctx=1024, seed=0, n_gpu_layers=layers, verbose=False)
    llama.create_completion(prompt, max_tokens=8, temperature=0.0)  # warm-up
    times = []
    for _ in range(5):
        started = time.perf_counter()
        out = llama.create_completion(prompt, max_tokens=256, temperature=0.0, repeat_penalty=1.0)
        times.append(time.perf_counter() - started)
    texts[layers] = out["choices"][0]["text"]
    tokens = out["usage"]["completion_tokens"]
    median = sorted(times)[2]
    where = "GPU (all layers)" if layers else "CPU"
    print(f"{where}: {tokens} tokens, median {median:.3f} s, {tokens / median:.0f} tokens/s")
    del llama
print("same greedy text on GPU and CPU:", texts[-1] == texts[0])
EOF
REPOMEM_TEST_GPU_LAYERS=-1 python3 -m pytest -p no:cacheprovider -m slow -rA --durations=0 \
    tests/completion/backends/test_llamacpp_slow.py 2>&1 | tee "$OUT/tests.log" | tail -25
