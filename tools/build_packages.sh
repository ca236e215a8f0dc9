#!/usr/bin/env bash
# Builds the npm packages of cuzk into dist/npm/ (README, "Use cuzk in your project"):
#   cuzk                 compiled JS + .d.ts of mod.ts, src/ and cli.ts (typescript, tsconfig.build.json)
#   cuzk-linux-x64       libcuzk.so, CPU backend (x86-64-v3 + ADX baseline; IFMA chosen at run time)
#   cuzk-linux-x64-cuda  libcuzk.so, CPU + CUDA backends (static cudart; sm_80, sm_90 code + PTX)
# each as a directory and as the tarball `npm pack` would make (written with tar: no npm needed, so
# the CUDA package can be built on a GPU host that has cmake and nvcc but no Node).
#
#   tools/build_packages.sh [js] [cpu] [cuda]     (default: all three; cuda skipped without nvcc)
#
# Env: CUZK_PKG_CPU_LIB / CUZK_PKG_CUDA_LIB: package this prebuilt libcuzk.so instead of building
# (build dirs otherwise: build-pkg-cpu, build-pkg-cuda); CUZK_PKG_JOBS (default: nproc);
# CUZK_PKG_OUT (default: dist/npm).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

out=${CUZK_PKG_OUT:-$root/dist/npm}
jobs=${CUZK_PKG_JOBS:-$(nproc 2>/dev/null || echo 2)}
version=$(sed -n 's/^  "version": "\([^"]*\)",$/\1/p' package.json)
[[ -n "$version" ]] || { echo "build_packages: no version in package.json" >&2; exit 1; }
targets=("$@")
((${#targets[@]} > 0)) || targets=(js cpu cuda)
mkdir -p "$out"

# The tarball npm pack makes: every file under package/, owner 0, fixed time (reproducible).
pack_dir() {
  local dir=$1 name=$2
  local tarball="$out/$name-$version.tgz"
  (cd "$dir" && find . -type f | LC_ALL=C sort | sed 's,^\./,,' >"$out/.files-$name")
  tar --create --gzip --file "$tarball" --directory "$dir" --owner=0 --group=0 --numeric-owner \
    --mtime='1985-10-26 08:15:00 UTC' --mode='u+rw,go+r,go-w' --transform 's,^,package/,' \
    --files-from "$out/.files-$name"
  rm -f "$out/.files-$name"
  printf 'packed %s: %s bytes (%s unpacked)\n' "$tarball" "$(stat -c %s "$tarball")" "$(du -sb "$dir" | cut -f1)"
}

# The exported functions must be there and no shared CUDA runtime may be needed.
check_library() {
  local lib=$1 kind=$2 header symbols dynamic glibc glibcxx
  # Read once into variables: `readelf | grep -q` fails under pipefail when grep stops reading early.
  header=$(readelf -h "$lib") symbols=$(readelf --dyn-syms -W "$lib") dynamic=$(readelf -d "$lib")
  grep -q 'Advanced Micro Devices X86-64' <<<"$header" || { echo "build_packages: $lib is not an x86-64 ELF file" >&2; exit 1; }
  grep -q ' cuzk_abi_version$' <<<"$symbols" || { echo "build_packages: $lib does not export cuzk_abi_version" >&2; exit 1; }
  if grep -q 'NEEDED.*libcudart' <<<"$dynamic"; then
    echo "build_packages: $lib needs libcudart.so (the package must link cudart statically)" >&2; exit 1
  fi
  # A library may need no GLIBCXX version at all (libstdc++ linked statically, as nvcc's host
  # toolchain on the H200 host does): grep's "no match" must not end the script under pipefail.
  glibc=$( (grep -o 'GLIBC_[0-9.]*' <<<"$symbols" || true) | sort -uV | tail -1)
  glibcxx=$( (grep -o 'GLIBCXX_[0-9.]*' <<<"$symbols" || true) | sort -uV | tail -1)
  echo "$kind library: $lib, $(stat -c %s "$lib") bytes, needs $(sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' <<<"$dynamic" | tr '\n' ' ')(newest symbol versions $glibc, $glibcxx)"
}

# A library built with the package's CMake options (or the prebuilt one the environment names).
build_library() {
  local kind=$1 dir=$2 prebuilt=$3
  shift 3
  if [[ -n "$prebuilt" ]]; then
    [[ -f "$prebuilt" ]] || { echo "build_packages: the prebuilt $kind library $prebuilt does not exist" >&2; exit 1; }
    built_library=$prebuilt
    return
  fi
  local started=$SECONDS
  mkdir -p "$dir"
  cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DCUZK_TESTS=OFF -DCUZK_NATIVE_ARCH=OFF "$@" >"$dir/configure.log" 2>&1 ||
    { cat "$dir/configure.log" >&2; exit 1; }
  nice cmake --build "$dir" --target cuzk -j "$jobs"
  echo "$kind library built in $((SECONDS - started)) s"
  built_library=$dir/libcuzk.so
}

# A platform package: the library (stripped: only the cuzk_* symbols are needed), manifest, license.
platform_package() {
  local name=$1 lib=$2 summary=$3
  local dir="$out/$name"
  rm -rf "$dir" && mkdir -p "$dir"
  strip --strip-unneeded -o "$dir/libcuzk.so" "$lib"
  check_library "$dir/libcuzk.so" "$name"
  cp LICENSE "$dir/LICENSE"
  cat >"$dir/README.md" <<EOF
# $name

$summary, for the npm package [cuzk](https://www.npmjs.com/package/cuzk) $version. cuzk installs
it as an optional dependency and loads it by itself; see the cuzk README, "Use cuzk in your project".
EOF
  cat >"$dir/package.json" <<EOF
{
  "name": "$name",
  "version": "$version",
  "description": "$summary (prebuilt libcuzk.so for the cuzk package)",
  "license": "Apache-2.0",
  "os": ["linux"],
  "cpu": ["x64"],
  "libc": ["glibc"],
  "files": ["libcuzk.so", "README.md", "LICENSE"],
  "exports": {
    "./libcuzk.so": "./libcuzk.so",
    "./package.json": "./package.json"
  }
}
EOF
  pack_dir "$dir" "$name"
}

main_package() {
  local dir="$out/cuzk" node=${NODE:-node}
  command -v "$node" >/dev/null || { echo "build_packages: js needs Node and npm install (typescript); build it where they are and carry dist/npm/cuzk*" >&2; exit 1; }
  rm -rf "$dir" dist/build-types && mkdir -p dist/build-types
  # Types the build needs and the package must not: Deno's namespace (src/ffi/deno.ts) and an
  # untyped circom_runtime (src/witness_calculator.ts types what it uses itself).
  node_modules/.bin/deno types | sed '/^\/\/\/ <reference/d' >dist/build-types/deno.d.ts
  printf 'declare module "circom_runtime";\n' >dist/build-types/circom_runtime.d.ts
  "$node" node_modules/typescript/bin/tsc -p tsconfig.build.json --outDir "$dir"
  # npm links bins without a way to pass flags; under Node 20 cli.js cannot tell it is the main
  # module through the bin symlink, so the bin calls its main() itself.
  mkdir -p "$dir/bin"
  printf '#!/usr/bin/env node\n// The cuzk command line (cli.ts) under Node.\nimport { main } from "../cli.js";\nprocess.exit(await main(process.argv.slice(2)));\n' >"$dir/bin/cuzk.js"
  chmod +x "$dir/bin/cuzk.js"
  sed -i '1s,^#!.*$,#!/usr/bin/env node,' "$dir/cli.js"
  # Symbol.dispose is in lib esnext.disposable (or @types/node): name it, so that a consumer's tsc
  # needs neither a lib setting nor Node's types.
  grep -rl --include='*.d.ts' 'Symbol\.dispose' "$dir" | xargs -r sed -i '1i /// <reference lib="esnext.disposable" />'
  cp README.md LICENSE "$dir/"
  # The native sources `cuzk witness compile` builds a circuit's witness from (its list).
  node_modules/.bin/deno eval 'import { WITNESS_BUILD_FILES } from "./src/witness/compile.ts"; console.log(WITNESS_BUILD_FILES.join("\n"))' |
    while read -r f; do mkdir -p "$dir/native/$(dirname "$f")" && cp "native/$f" "$dir/native/$f"; done
  [[ -f "$dir/native/witness/entry.cpp" ]] || { echo "build_packages: the witness sources were not copied" >&2; exit 1; }
  # The published manifest: the repository's, less what only a checkout uses (scripts, the
  # service's typebox, dev tools), pointing at the compiled files, the platform packages optional.
  "$node" --input-type=commonjs - "$root/package.json" "$dir/package.json" <<'EOF'
const fs = require("node:fs");
const [source, target] = process.argv.slice(2);
const repo = JSON.parse(fs.readFileSync(source, "utf8"));
const runtimeDependencies = ["koffi", "circom_runtime"]; // koffi: Node's FFI; circom_runtime: fullProve, WitnessCalculator
const manifest = {
  name: repo.name,
  version: repo.version,
  description: repo.description,
  keywords: repo.keywords,
  license: repo.license,
  type: "module",
  engines: repo.engines,
  os: repo.os,
  cpu: repo.cpu,
  exports: {
    ".": { types: "./mod.d.ts", import: "./mod.js", default: "./mod.js" },
    "./package.json": "./package.json",
  },
  types: "./mod.d.ts",
  bin: { cuzk: "./bin/cuzk.js" },
  files: ["mod.js", "mod.d.ts", "cli.js", "cli.d.ts", "cli/", "src/", "bin/", "native/", "README.md", "LICENSE"],
  dependencies: Object.fromEntries(runtimeDependencies.map((name) => [name, repo.dependencies[name]])),
  // The CPU library comes with the package (optional: other platforms install nothing); the CUDA
  // library (22 MB packed, 63 MB unpacked) only where the user asks for it: npm cannot see a GPU
  // without an install script, and the package has none.
  optionalDependencies: { "cuzk-linux-x64": repo.version },
};
fs.writeFileSync(target, JSON.stringify(manifest, null, 2) + "\n");
EOF
  rm -rf dist/build-types
  pack_dir "$dir" cuzk
}

for target in "${targets[@]}"; do
  case "$target" in
    js) main_package ;;
    cpu)
      build_library cpu "$root/build-pkg-cpu" "${CUZK_PKG_CPU_LIB:-}" -DCUZK_CUDA=OFF
      platform_package cuzk-linux-x64 "$built_library" "cuzk's native library for Linux x64, CPU backend (AVX2 + ADX)"
      ;;
    cuda)
      if [[ -z "${CUZK_PKG_CUDA_LIB:-}" ]] && ! command -v nvcc >/dev/null && [[ ! -x /usr/local/cuda/bin/nvcc ]]; then
        echo "build_packages: no nvcc: cuzk-linux-x64-cuda skipped"
        continue
      fi
      build_library cuda "$root/build-pkg-cuda" "${CUZK_PKG_CUDA_LIB:-}" -DCUZK_CUDA=ON \
        "-DCUZK_CUDA_ARCHITECTURES=80-real;90-real;90-virtual"
      platform_package cuzk-linux-x64-cuda "$built_library" "cuzk's native library for Linux x64, CPU and CUDA backends (sm_80, sm_90 + PTX)"
      ;;
    *) echo "build_packages: unknown target $target (js, cpu, cuda)" >&2; exit 2 ;;
  esac
done
