/**
 * @module
 * `cuzk plan`: the memory plan an engine would make for a key (a .zkey, read for its counts only)
 * or for the synthetic PoRep circuit of a size, a batch and the memory budgets, without proving and
 * without a GPU (`planMemory`, the library's arithmetic). Prints the budgets, each section's
 * placement, the chunk, the totals, the least budget that fits, the host memory, the groups of a
 * batch and the bytes a proof reads over the link; `--json` prints the plan itself. A budget below
 * the minimum exits 1 with the library's message, after showing the minimum.
 *
 *   cuzk plan <circuit.zkey> [options]
 *   cuzk plan --synthetic porep --log2 K | --constraints N [--public N] [--curve bn254|bls12_381] [options]
 *   options: [--backend auto|cpu|cuda] [--gpu-memory SIZE] [--host-memory SIZE] [--batch N]
 *            [--points-on-demand] [--json]
 */
import process from "node:process";

import { CuzkError, Key, Library, LIMITS, planMemory } from "../mod.ts";
import type { BackendName, CurveName, MemoryPlan, PlanMemoryOptions } from "../mod.ts";
import { bytesFlag, countFlag, EXIT, integerFlag, say, UsageError } from "./io.ts";
import type { Parsed } from "./io.ts";

export const PLAN_USAGE = `  cuzk plan <circuit.zkey> [--backend auto|cpu|cuda] [--gpu-memory SIZE] [--host-memory SIZE] [--batch N]
             [--points-on-demand] [--json]
  cuzk plan --synthetic porep --log2 K|--constraints N [--public N] [--curve bn254|bls12_381] [options as above]
             (the memory plan for a key and a batch, without a GPU; SIZE: bytes, or with KiB, MiB, GiB, TiB)`;

/** The PoRep benchmarks' circuit of domain 2^K: 2^K - 16 constraints, so that the public inputs' rows fit the domain. */
const DOMAIN_SLACK = 16;

/** A byte count for people: bytes below 1 KiB, else KiB, MiB, GiB or TiB with two decimals. */
function sizeText(bytes: bigint | number): string {
  const n = Number(bytes);
  if (n < 1024) return `${n} bytes`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let unit = 0, value = n / 1024;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(2)} ${units[unit]}`;
}

/** 2^K for a power of two, else the number. */
function powerText(n: bigint): string {
  const k = Math.log2(Number(n));
  return Number.isInteger(k) ? `2^${k}` : String(n);
}

/** What is planned for, in words, and the request's key. */
async function plannedKey(p: Parsed): Promise<{ key: PlanMemoryOptions["key"]; words: string }> {
  const synthetic = p.flags.get("--synthetic");
  if (synthetic === undefined) {
    if (p.positional.length !== 1) throw new UsageError("plan needs <circuit.zkey>, or --synthetic porep --log2 K");
    for (const flag of ["--curve", "--constraints", "--log2", "--public"]) {
      if (p.flags.has(flag)) throw new UsageError(`${flag} describes a synthetic circuit; a .zkey gives its own (leave ${flag} out, or give --synthetic porep)`);
    }
    // Points on demand: the counts are all that is needed, and the point sections (most of the file) are not read.
    using key = await Key.open(p.positional[0], { pointsOnDemand: true });
    const info = key.info();
    return {
      key: info,
      words: `${p.positional[0]}: ${info.curve}, ${info.nConstraints} constraints (domain 2^${info.logDomain}), ${info.nVars} signals, ${info.nPublic} public, ${info.nCoefs} A/B coefficients`,
    };
  }
  if (p.positional.length !== 0) throw new UsageError("plan takes a .zkey or --synthetic, not both");
  if (synthetic !== "porep") throw new UsageError(`--synthetic must be porep, not ${synthetic}`);
  const curve = (p.flags.get("--curve") ?? "bls12_381") as string;
  if (!["bn254", "bls12_381"].includes(curve)) throw new UsageError(`--curve must be bn254 or bls12_381, not ${curve}`);
  if (p.flags.has("--log2") === p.flags.has("--constraints")) throw new UsageError("--synthetic porep needs --log2 K (2^K - 16 constraints) or --constraints N, one of them");
  const log2 = p.flags.has("--log2") ? integerFlag(p, "--log2", 0, 5, 32, " (the domain: 2^K - 16 constraints)") : undefined;
  const constraints = log2 !== undefined ? 2 ** log2 - DOMAIN_SLACK : countFlag(p, "--constraints");
  const publicInputs = countFlag(p, "--public", 4);
  const size = log2 !== undefined ? `${constraints} constraints (2^${log2} - ${DOMAIN_SLACK})` : `${constraints} constraints`;
  return {
    key: { synthetic: "porep", curve: curve as CurveName, constraints, publicInputs },
    words: `the synthetic PoRep circuit: ${curve}, ${size}, ${publicInputs} public inputs`,
  };
}

/** The backend: as given, else CUDA when --gpu-memory is given or a GPU is usable, else the CPU. */
function backendOf(p: Parsed): BackendName {
  const backend = (p.flags.get("--backend") ?? "auto") as string;
  if (!["auto", "cpu", "cuda"].includes(backend)) throw new UsageError(`--backend must be auto, cpu or cuda, not ${backend}`);
  if (backend !== "auto") return backend as BackendName;
  if (p.flags.has("--gpu-memory")) return "cuda";
  const info = Library.default().info();
  return info.backends.includes("cuda") && info.cudaDeviceCount > 0 ? "cuda" : "cpu";
}

/** The plan as text: one fact a line. */
function planText(plan: MemoryPlan, words: string, backend: BackendName): string[] {
  const engine = backend === "cuda" ? "GPU" : "host";
  const lines = [
    `budgets: ${engine} memory ${sizeText(plan.budget)} (${plan.budget} bytes)` +
    (backend === "cuda" ? `, host memory beyond the key ${sizeText(plan.hostBudget)}` : " (the CPU engine's one budget: points, rows and workspace)"),
    "section  placement  points        stored",
  ];
  for (const [name, s] of Object.entries(plan.sections)) {
    const where = s.placement === "in_key"
      ? "- (read in place from the key)"
      : `${sizeText(s.storedBytes)}${s.placement !== "streamed" || backend !== "cuda" ? "" : s.pinned ? " (pinned on the host)" : " (packed from the key per group)"}`;
    lines.push(`${name.padEnd(8)} ${s.placement.padEnd(10)} ${String(s.points).padEnd(13)} ${where}`);
  }
  const rows = plan.rowsChunkBytes === 0n ? "the A/B rows held whole" : `the A/B rows in chunks of ${sizeText(plan.rowsChunkBytes)}`;
  const groups = plan.msmWindowGroups > 1 ? `; each MSM's windows sorted and summed in ${plan.msmWindowGroups} groups` : "";
  lines.push(`chunk: ${powerText(plan.msmChunkPoints)} points per MSM chunk and streamed chunk; ${rows}${groups}`);
  if (plan.hChunkPoints !== plan.msmChunkPoints || plan.hWindowGroups !== plan.msmWindowGroups) {
    const hGroups = plan.hWindowGroups > 1 ? `, its windows in ${plan.hWindowGroups} groups` : ", its windows all at once";
    lines.push(`H chunk: ${powerText(plan.hChunkPoints)} points per chunk of the H MSM${hGroups} (in the same workspace)`);
  }
  const total = [
    ["fixed", plan.fixedBytes],
    [`${plan.nttVectors} NTT vectors`, BigInt(plan.nttVectors) * plan.vectorBytes],
    ["rows", plan.rowsBytes],
    ["MSM workspace", plan.msmWorkspaceBytes],
    ["resident points", plan.residentBytes],
    ["stream buffers", plan.streamBufferBytes],
  ] as const;
  lines.push(`totals: ${total.map(([what, bytes]) => `${what} ${sizeText(bytes)}`).join(", ")}`);
  if (plan.phasesShared) {
    lines.push(
      `        less ${sizeText(plan.sharedBytes)} shared: a proof's witness, NTT vectors and row chunks take turns with the ` +
        "group's streamed sums (given back and allocated again once per group; a proof alone is a group of one)",
    );
  }
  if (plan.overlapBytes > 0n) {
    lines.push(
      `        plus ${sizeText(plan.overlapBytes)} overlap: a second proof's witness and NTT vectors, so that in a batch ` +
        "proof p+1's upload, a/b/c and NTTs run beside proof p's MSMs",
    );
  }
  if (plan.hCopies > 0) {
    lines.push(`        plus ${sizeText(plan.hCopiesBytes)} H copies: ${plan.hCopies} copies of the H points (msm_h reduces fewer windows)`);
  }
  lines.push(`        = ${sizeText(plan.totalBytes)} (${plan.totalBytes} bytes) of the ${sizeText(plan.budget)} budget`);
  lines.push(`minimum budget: ${sizeText(plan.minBudget)} (${plan.minBudget} bytes)`);
  const pinned = Object.values(plan.sections).some((s) => s.pinned) ? "streamed points pinned once, " : "";
  lines.push(`host memory: ${sizeText(plan.hostBytes)} (${pinned}the H scalars a group keeps) of ${sizeText(plan.hostBudget)}`);
  // The caller's side of a batch: one witness a proof (one value a wire, a wire a point of A).
  const witness = plan.sections.A.points * 32n;
  lines.push(
    `witnesses: ${plan.batch} x ${sizeText(witness)} = ${sizeText(plan.batch * witness)} of the caller's memory (pinned ones come up ahead); ` +
      `with the plan's, ${sizeText(plan.batch * witness + plan.hostBytes)} of host memory besides the key`,
  );
  lines.push(
    plan.streamedBytesPerProof === 0n
      ? `batch: ${plan.batch} proof(s) a call; nothing streamed`
      : `batch: ${plan.batch} proof(s) a call, in groups of ${plan.groupSize} that share each read of the streamed sections ` +
        `(${sizeText(plan.streamedBytesPerProof)} a read); the memory allows groups of up to ${plan.groupMax}`,
  );
  const link = backend === "cuda" ? "over the link (PCIe)" : "into the engine";
  lines.push(`read ${link}: ${sizeText(plan.linkBytesPerProof)} per proof (a partition), besides its witness`);
  lines.push(
    `predicted: at most +${(Number(plan.predictedExtraNs) / 1e6).toFixed(0)} ms a proof over the plan with no memory limit ` +
      `(its traffic counted as if none of it overlapped the work)`,
  );
  return [`plan for ${words}; ${backend} engine`, NOTE, ...lines];
}

const NOTE = "note: a described key keeps every point; a prover's plan drops the points at infinity (a PoRep key about half of them), holding an index of the rest";

/** JSON with bigints as decimal strings, as `cuzk info` writes them. */
const json = (value: unknown) => JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? v.toString() : v), 2);

export async function plan(p: Parsed): Promise<number> {
  const backend = backendOf(p);
  const gpuMemory = bytesFlag(p, "--gpu-memory");
  const hostMemory = bytesFlag(p, "--host-memory");
  if (backend === "cpu" && gpuMemory !== undefined) throw new UsageError("--gpu-memory is the CUDA engine's budget; the CPU engine's is --host-memory");
  if (backend === "cuda" && p.flags.has("--points-on-demand")) throw new UsageError("--points-on-demand plans the CPU engine (a CUDA engine holds the points it uses either way)");
  const batch = integerFlag(p, "--batch", 1, 1, LIMITS.batchWitnesses, " (proofs per call)");
  const { key, words } = await plannedKey(p);
  const options: PlanMemoryOptions = backend === "cuda"
    ? { backend, key, batch, memoryBudget: gpuMemory, hostMemoryBudget: hostMemory }
    : { backend, key, batch, memoryBudget: hostMemory, pointsOnDemand: p.flags.has("--points-on-demand") };
  let result: MemoryPlan;
  try {
    result = planMemory(options);
  } catch (error) {
    if (!(error instanceof CuzkError)) throw error;
    if (error.code === "NO_DEVICE" && !gpuMemory) {
      const { status, nativeMessage, operation } = error;
      throw new CuzkError("NO_DEVICE", `${error.message} (here: --gpu-memory SIZE, e.g. --gpu-memory 80GiB)`, { status, nativeMessage, operation, cause: error });
    }
    const refused = error.code === "OUT_OF_MEMORY" ? error.memoryPlan : undefined;
    if (!refused) throw error;
    if (p.flags.has("--json")) {
      process.stdout.write(json({ fits: false, backend, budget: refused.budget, hostBudget: refused.hostBudget, minBudget: refused.minBudget, message: error.message }) + "\n");
    } else {
      process.stdout.write(
        [`plan for ${words}; ${backend} engine`, NOTE, `budget: ${sizeText(refused.budget)} (${refused.budget} bytes): too small`, `minimum budget: ${sizeText(refused.minBudget)} (${refused.minBudget} bytes)`]
          .join("\n") + "\n",
      );
    }
    say(error.message);
    return EXIT.failed;
  }
  process.stdout.write((p.flags.has("--json") ? json(result) : planText(result, words, backend).join("\n")) + "\n");
  return EXIT.ok;
}
