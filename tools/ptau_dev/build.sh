#!/usr/bin/env bash
# Builds build/ptau-dev (see README.md). Run from anywhere; paths are relative to the repo root.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p build
g++ -std=c++17 -O3 -march=x86-64-v3 -madx -Wall -Wextra -Inative/include -Inative/src \
  native/src/util/thread_pool.cpp tools/ptau_dev/*.cpp -lpthread -o build/ptau-dev
echo "built build/ptau-dev" >&2
