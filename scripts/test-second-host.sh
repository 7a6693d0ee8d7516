#!/usr/bin/env bash
# `npm run test:host2`: the protocol, client and probe end-to-end tests again on a second host, omp 18.1.16
# (the version the design was first written for), and that its approval gate, which reads the settings only
# from a call's context, asks as the host's mode says for the bridge's calls (test/e2e/host/old-host.test.ts). It installs that omp with npm beside the checkout in
# .ci/omp-18.1.16/ (git-ignored; npm's cache makes a rerun quick) and points the tests at it (A2A_TEST_OMP).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
old_omp=18.1.16
old_dir=.ci/omp-$old_omp
old_pkg=$old_dir/node_modules/@oh-my-pi/pi-coding-agent
old_cli=$old_pkg/dist/cli.js
if [[ ! -f $old_cli ]] || ! grep -q "\"version\": \"$old_omp\"" "$old_pkg/package.json"; then
	mkdir -p "$old_dir"
	npm install --prefix "$old_dir" --no-save --no-package-lock --no-audit --no-fund \
		"@oh-my-pi/pi-coding-agent@$old_omp" 2>&1 | grep -v EBADENGINE || true
fi
old_version=$(bun "$old_cli" --version 2>&1 || true)
echo "second host: $old_version ($old_cli)"
if [[ $old_version != "omp/$old_omp" ]]; then
	echo "second host: expected omp/$old_omp"
	exit 1
fi
A2A_TEST_OMP="$PWD/$old_cli" exec timeout --kill-after=30s 10m bun test --timeout 120000 \
	test/e2e/core/pipeline.test.ts test/e2e/core/clients.test.ts test/e2e/headless/probe.test.ts \
	test/e2e/host/old-host.test.ts
