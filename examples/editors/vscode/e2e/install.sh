#!/usr/bin/env bash
# Install code-server (a full VS Code build from npm) and puppeteer-core for
# run.mjs, on a machine that reaches the npm registry and nothing else.
#
# code-server's postinstall installs VS Code's own modules, and one of them
# (@vscode/ripgrep) downloads ripgrep from GitHub; here every install script
# is skipped, ripgrep comes from the system (Debian: ripgrep), and the native
# modules are built against the local Node headers (Debian: nodejs ships
# them; build-essential, python3 and libkrb5-dev build them). It does what the
# skipped postinstall does, and marks the result so a second run is free.
#
# Needs Node.js 20 (code-server 4.100 refuses other majors).
set -euo pipefail
cd "$(dirname "$0")"
ready=node_modules/.palace-e2e-ready
if [ -f "$ready" ]; then
  exit 0
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" != 20 ]; then
  echo "install.sh: code-server 4.100 needs Node.js 20, this is $(node --version)" >&2
  exit 1
fi
rg=$(command -v rg || true)
if [ -z "$rg" ]; then
  echo "install.sh: ripgrep is missing (Debian: apt-get install -y ripgrep)" >&2
  exit 1
fi
# The Node headers node-gyp needs, from the local installation instead of a
# download.
export npm_config_nodedir
npm_config_nodedir=$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")
if [ ! -f "$npm_config_nodedir/include/node/node.h" ]; then
  echo "install.sh: no Node headers under $npm_config_nodedir/include/node (Debian's nodejs has them)" >&2
  exit 1
fi
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

npm ci --ignore-scripts
# argon2 (code-server's password hashing) builds from source.
npm rebuild argon2

vscode=node_modules/code-server/lib/vscode
(cd "$vscode" && npm install --omit=dev --ignore-scripts)
(cd "$vscode" && npm rebuild kerberos @vscode/deviceid @vscode/spdlog native-watchdog)
# node-pty's install script also writes compile_commands.json with a node-gyp
# it fetches through npx; only the module matters: build it with npm's own.
node_gyp="$(npm root -g)/npm/node_modules/node-gyp/bin/node-gyp.js"
(cd "$vscode/node_modules/node-pty" && node "$node_gyp" rebuild --nodedir="$npm_config_nodedir" >/dev/null)
mkdir -p "$vscode/node_modules/@vscode/ripgrep/bin"
cp "$rg" "$vscode/node_modules/@vscode/ripgrep/bin/rg"
# The links code-server's postinstall makes.
ln -sfn node_modules "$vscode/node_modules.asar"
ln -sfn code-linux.sh "$vscode/bin/remote-cli/code-server"
ln -sfn browser-linux.sh "$vscode/bin/helpers/browser.sh"
(cd "$vscode/extensions" && npm install --omit=dev --ignore-scripts)
touch "$ready"
echo "install.sh: code-server $(node -p 'require("./node_modules/code-server/package.json").version') and puppeteer-core are ready"
