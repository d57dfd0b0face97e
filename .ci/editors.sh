#!/usr/bin/env bash
# Editor integrations: builds, tests and packages the VS Code extension (editors/vscode) with
# npm. Its end-to-end test starts the real `repomem serve`, so run this after the project is
# installed, with `repomem` on PATH (as .ci/run leaves it). The Neovim plugin is tested by
# tests/editors/test_nvim.py in the main pytest run.
#
# Usage: bash .ci/editors.sh
set -euo pipefail

cd "$(dirname "$0")/../editors/vscode"
started=$(date +%s)

if ! command -v repomem >/dev/null; then
    echo "editors: no repomem on PATH; install the project first (pip install -e .)" >&2
    exit 1
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
    echo "editors: Node.js 20 or newer is needed, found $(node --version)" >&2
    exit 1
fi

npm ci --no-audit --no-fund
installed=$(date +%s)
echo "editors: npm ci took $((installed - started)) s"

# compiles with tsc, then runs node --test (unit tests and the end-to-end test)
npm test

rm -f ./*.vsix
npm run package
vsix=$(ls ./*.vsix)
# the package carries the compiled extension and its runtime dependency, not the tests (nor
# the real-VS-Code test's driver and tools, .ci/vscode_real.sh)
python3 - "$vsix" <<'PY'
import sys
import zipfile

names = set(zipfile.ZipFile(sys.argv[1]).namelist())
required = {
    "extension/package.json",
    "extension/out/src/extension.js",
    "extension/node_modules/vscode-languageclient/package.json",
}
problems = [f"lacks {name}" for name in sorted(required - names)]
tests = ("extension/out/test/", "extension/test-real/", "extension/.real/")
problems += [f"carries {name}" for name in sorted(names) if name.startswith(tests)]
if problems:
    sys.exit(f"editors: {sys.argv[1]} " + "; ".join(problems))
PY
finished=$(date +%s)
echo "editors: $vsix built and tested in $((finished - started)) s"
