#!/usr/bin/env bash
# Creates .venv-mcp/ (git-ignored) with the official MCP Python SDK, the client nobody here wrote that
# test/e2e/core/python-sdk.test.ts drives the host with. Idempotent; needs python3 with venv and pip.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
VERSION=2.3.0
venv=.venv-mcp
if [[ -x $venv/bin/python ]] && "$venv/bin/python" -c "import mcp, importlib.metadata as m; assert m.version('mcp') == '$VERSION'" 2>/dev/null; then
	echo "== $venv: mcp==$VERSION present"
	exit 0
fi
python3 -m venv "$venv"
# One retry: an index this machine cannot resolve otherwise costs minutes of back-off per package.
"$venv/bin/pip" install --quiet --disable-pip-version-check --retries 1 "mcp==$VERSION"
echo "== $venv: mcp==$VERSION installed"
