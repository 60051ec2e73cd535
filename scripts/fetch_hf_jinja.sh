#!/usr/bin/env bash
# Install @huggingface/jinja for the `hf-jinja` engine's tests (tests/cli/compare_cli.rs)
# into a cache outside git, target/node, so the
# package is at target/node/node_modules/@huggingface/jinja. chatplate never bundles it:
# users install it themselves where Node finds it (docs/compare.md). Re-running is a no-op
# when the pinned version is present.
#
# Usage: bash scripts/fetch_hf_jinja.sh
set -euo pipefail
cd "$(dirname "$0")/.."

# Pinned: the tests' expectations (versions, differences) were checked against it.
VERSION=0.5.11
PREFIX="target/node"

if ! command -v npm >/dev/null 2>&1; then
  echo "npm is required to install @huggingface/jinja" >&2
  exit 1
fi
installed="$PREFIX/node_modules/@huggingface/jinja/package.json"
if [ -f "$installed" ] && grep -q "\"version\": \"$VERSION\"" "$installed"; then
  echo "have @huggingface/jinja $VERSION in $PREFIX/node_modules"
  exit 0
fi
mkdir -p "$PREFIX"
npm install --prefix "$PREFIX" --no-save --no-audit --no-fund --silent "@huggingface/jinja@$VERSION"
echo "installed @huggingface/jinja $VERSION in $PREFIX/node_modules"
