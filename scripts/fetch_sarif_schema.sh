#!/usr/bin/env bash
# Fetch the official SARIF 2.1.0 JSON schema (sarif-2.1.0-rtm.5.json, the schema OASIS
# published for 2.1.0) from the npm package that ships it, @microsoft/jest-sarif, into
# target/sarif/sarif-schema-2.1.0.json, and install Python's `jsonschema` into the
# reference venv ($CHATPLATE_PYTHON) when it lacks it. The `chatplate lint --format sarif`
# test (tests/cli/lint_cli.rs) validates its output against the schema with them. Nothing
# is committed; re-running is a no-op once both are there.
#
# Usage: bash scripts/fetch_sarif_schema.sh
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGE="@microsoft/jest-sarif@1.0.0-beta.0"
INSIDE="package/lib/schemas/sarif-2.1.0-rtm.5.json"
OUT="target/sarif/sarif-schema-2.1.0.json"
JSONSCHEMA="jsonschema==4.26.0"

if [ ! -f "$OUT" ]; then
  command -v npm >/dev/null 2>&1 || { echo "npm is required to fetch the SARIF schema" >&2; exit 1; }
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack --silent "$PACKAGE" >/dev/null)
  tar -xzf "$work"/*.tgz -C "$work" "$INSIDE"
  mkdir -p "$(dirname "$OUT")"
  mv "$work/$INSIDE" "$OUT"
fi
echo "have the SARIF 2.1.0 schema at $OUT"

PYTHON="${CHATPLATE_PYTHON:-}"
if [ -n "$PYTHON" ] && ! "$PYTHON" -c "import jsonschema" >/dev/null 2>&1; then
  "$PYTHON" -m pip install --quiet "$JSONSCHEMA"
fi
if [ -n "$PYTHON" ] && "$PYTHON" -c "import jsonschema" >/dev/null 2>&1; then
  echo "have jsonschema in $PYTHON"
else
  echo "no Python with jsonschema (set CHATPLATE_PYTHON): the SARIF test fails under CI=true"
fi
