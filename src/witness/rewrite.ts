/**
 * @module
 * The rewrites `cuzk witness compile` makes to circom's generated circuit C++ (circuit.cpp) before
 * compiling it against native/witness/. Each is mechanical and leaves every computed value as
 * circom's code computes it (tests/witness_native_test.ts checks the witnesses byte for byte):
 *   - `assert(` and `std::cout` become native/witness/circom/circom.hpp's macros, so a failed
 *     assert is an error status with circom's message instead of an abort of the host process;
 *   - a template's copies of its own name strings become references to them, a component's name
 *     is passed by reference to where it is kept, and a component without subcomponents gets no
 *     (empty) array for them;
 *   - a run of blocks that copy circuit constants into consecutive local variables (circomlib's
 *     Poseidon copies its whole constant tables into locals on every run of MixS, Ark, ...) becomes
 *     one copy from an image of those constants made on first use: the same values from a few lines
 *     of code instead of thousands (the unrolled copies were most of the library's code and ran out
 *     of the instruction cache);
 *   - in a template's run function whose every write to its locals is at a constant index (the
 *     usual case), the locals are kept per thread from one run to the next, so such a run copies
 *     the image once per thread and afterwards restores only the locals the function writes: a
 *     template function never runs inside itself (each instance of a template has its own function
 *     and a component cannot contain itself), and circom's parallel components run on threads of
 *     their own. Any other use of the locals keeps the plain copy.
 */

/** One of circom's blocks that copies constant `constant` into local variable `local`. */
const CONSTANT_COPY = /\{\nPFrElement aux_dest = &lvar\[(\d+)\];\n\/\/ load src\n\/\/ end load src\nFr_copy\(aux_dest,&circuitConstants\[(\d+)\]\);\n\}\n/g;

/** Runs shorter than this stay as circom wrote them (a copy of a few elements gains nothing). */
const MIN_RUN = 8;

/** The header of a template's run function (circom's `<Template>_<id>_run`). */
const TEMPLATE_RUN = /^void \w+_run\(uint ctx_index,Circom_CalcWit\* ctx\)\{\n/gm;

interface ConstantRun {
  /** Offsets of the run's text in the function's text. */
  start: number;
  end: number;
  firstLocal: number;
  constants: number[];
}

/** The runs of at least MIN_RUN constant copies into consecutive locals in `text`. */
function constantRuns(text: string): ConstantRun[] {
  const runs: ConstantRun[] = [];
  let run: ConstantRun | null = null;
  for (const match of text.matchAll(CONSTANT_COPY)) {
    const start = match.index!;
    const local = Number(match[1]);
    if (run && run.end === start && run.firstLocal + run.constants.length === local) {
      run.constants.push(Number(match[2]));
      run.end = start + match[0].length;
      continue;
    }
    if (run && run.constants.length >= MIN_RUN) runs.push(run);
    run = { start, end: start + match[0].length, firstLocal: local, constants: [Number(match[2])] };
  }
  if (run && run.constants.length >= MIN_RUN) runs.push(run);
  return runs;
}

/** The offset just past the brace that closes the one open at `open` (string literals skipped). */
function closingBrace(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === '"' || c === "'") {
      for (i++; i < text.length && text[i] !== c; i++) if (text[i] === "\\") i++;
    } else if (c === "{") {
      depth++;
    } else if (c === "}" && --depth === 0) {
      return i + 1;
    }
  }
  return text.length;
}

/** The name of the call whose argument list holds offset `at` (scanning back to its open parenthesis). */
function enclosingCall(text: string, at: number): string | null {
  let depth = 0;
  for (let i = at - 1; i >= 0 && text[i] !== "\n"; i--) {
    if (text[i] === ")" || text[i] === "]") depth++;
    else if (text[i] === "[") depth--;
    else if (text[i] === "(") {
      if (depth > 0) {
        depth--;
        continue;
      }
      return /(\w+)$/.exec(text.slice(0, i))?.[1] ?? null;
    }
  }
  return null;
}

/** Field operations that only read their first argument (the others write it). */
const READS_FIRST = new Set(["Fr_toInt", "Fr_isTrue"]);

/**
 * The locals `body` (a template's run function, constant runs left out) writes, as [first, count]
 * ranges, or null when it uses its locals in any way not known to write only at constant indices.
 */
function constantWrites(body: string): Array<[number, number]> | null {
  const writes: Array<[number, number]> = [];
  for (const match of body.matchAll(/\blvar\b/g)) {
    const at = match.index!;
    const lineStart = body.lastIndexOf("\n", at) + 1;
    const before = body.slice(lineStart, at);
    const rest = body.slice(at);
    if (before === "FrElement " && /^lvar\[\d+\];\n/.test(rest)) continue; // the declaration
    if (!rest.startsWith("lvar[") || !before.endsWith("&")) return null;
    const index = /^lvar\[(\d+)\]/.exec(rest);
    if (before === "PFrElement aux_dest = &") {
      // A block's destination: its copies say how many values it writes.
      if (!index) return null;
      const blockEnd = body.indexOf("\nPFrElement aux_dest = ", at);
      const block = body.slice(at, blockEnd < 0 ? body.length : blockEnd);
      let count = 0;
      for (const use of block.matchAll(/\baux_dest\b/g)) {
        const tail = block.slice(use.index!);
        if (use.index === 0 || tail.startsWith("aux_dest = ")) continue;
        const line = tail.slice(0, tail.indexOf("\n"));
        const copy = /^aux_dest,.*\);$/.test(line) && block.slice(0, use.index!).endsWith("Fr_copy(");
        const copyn = /^aux_dest,.*,(\d+)\);$/.exec(line);
        if (copy) count = Math.max(count, 1);
        else if (copyn && block.slice(0, use.index!).endsWith("Fr_copyn(")) count = Math.max(count, Number(copyn[1]));
        else return null;
      }
      if (count === 0) return null;
      writes.push([Number(index[1]), count]);
      continue;
    }
    const call = enclosingCall(body, at - 1);
    if (!call) return null;
    const firstArgument = before.endsWith(`${call}(&`);
    if (call.startsWith("Fr_")) {
      if (!firstArgument || READS_FIRST.has(call)) continue; // read
      if (!index) return null;
      if (call === "Fr_copyn") {
        const n = /^lvar\[\d+\],[^;]*,(\d+)\);/.exec(rest);
        if (!n) return null;
        writes.push([Number(index[1]), Number(n[1])]);
      } else {
        writes.push([Number(index[1]), 1]);
      }
      continue;
    }
    // A call of one of circom's functions: its result goes to `&lvar[k],size`.
    const destination = /^lvar\[(\d+)\],(\d+)\);/.exec(rest);
    if (!destination || !before.endsWith("(ctx,lvarcall,myId,&")) return null;
    writes.push([Number(destination[1]), Number(destination[2])]);
  }
  return writes;
}

/** A run as one copy from its image; with `kept`, only the locals in `restore` after the first run on a thread. */
function runCopy(run: ConstantRun, kept: boolean, restore: number[]): string {
  const n = run.constants.length;
  const image = `{\nstatic const u32 cuzk_constant_index[${n}] = {${run.constants.join(",")}};\n` +
    `static const FrElement* const cuzk_constant_image = ::cuzk::witness::constant_image(circuitConstants, cuzk_constant_index, ${n});\n`;
  if (!kept) return `${image}::cuzk::witness::copy_constants(&lvar[${run.firstLocal}], cuzk_constant_image, ${n});\n}\n`;
  const restoring = restore.length === 0 ? "" : `static const u32 cuzk_written[${restore.length}] = {${restore.join(",")}};\n` +
    `::cuzk::witness::restore_constants(&lvar[${run.firstLocal}], cuzk_constant_image, cuzk_written, ${restore.length});\n`;
  return `${image}static thread_local bool cuzk_copied = false;\nif (cuzk_copied) {\n${restoring}} else {\n` +
    `::cuzk::witness::copy_constants(&lvar[${run.firstLocal}], cuzk_constant_image, ${n});\ncuzk_copied = true;\n}\n}\n`;
}

/** `text` with its constant runs as image copies; `kept`: a template run function's, locals kept per thread. */
function rewriteRuns(text: string, templateRun: boolean): string {
  const runs = constantRuns(text);
  if (runs.length === 0) return text;
  let writes: Array<[number, number]> | null = null;
  let declaration: RegExpExecArray | null = null;
  if (templateRun) {
    declaration = /^FrElement lvar\[(\d+)\];$/m.exec(text);
    let outside = "";
    let from = 0;
    for (const run of runs) {
      outside += text.slice(from, run.start);
      from = run.end;
    }
    outside += text.slice(from);
    if (declaration && (outside.match(/^FrElement lvar\[/gm) ?? []).length === 1) writes = constantWrites(outside);
  }
  const kept = writes !== null && declaration !== null;
  const pieces: string[] = [];
  let from = 0;
  for (const run of runs) {
    pieces.push(text.slice(from, run.start));
    // What may differ from this run's image when it starts: the function's other writes, the other runs' too.
    const written = kept ? [...writes!, ...runs.filter((r) => r !== run).map((r): [number, number] => [r.firstLocal, r.constants.length])] : [];
    const restore = run.constants.map((_, i) => i).filter((i) => written.some(([first, count]) => run.firstLocal + i >= first && run.firstLocal + i < first + count));
    pieces.push(runCopy(run, kept, restore));
    from = run.end;
  }
  pieces.push(text.slice(from));
  let rewritten = pieces.join("");
  if (kept) {
    // Kept per thread: one thread-local lookup per run, then a plain pointer.
    rewritten = rewritten.replace(/^FrElement lvar\[(\d+)\];$/m, "static thread_local FrElement cuzk_kept_lvar[$1];\nFrElement* const lvar = ::cuzk::witness::looked_up(cuzk_kept_lvar);");
  }
  return rewritten;
}

/** Every template run function's runs with its locals kept where it can be, the other runs copied. */
function constantRunsToImages(source: string): string {
  const pieces: string[] = [];
  let from = 0;
  for (const header of source.matchAll(TEMPLATE_RUN)) {
    const start = header.index!;
    if (start < from) continue;
    const end = closingBrace(source, start + header[0].length - 2);
    pieces.push(rewriteRuns(source.slice(from, start), false));
    pieces.push(rewriteRuns(source.slice(start, end), true));
    from = end;
  }
  pieces.push(rewriteRuns(source.slice(from), false));
  return pieces.join("");
}

/** circuit.cpp as `cuzk witness compile` compiles it (see the module's comment). */
export function rewriteCircuitCpp(source: string): string {
  const rewritten = source
    .replace(/\bassert\(/g, "CUZK_WITNESS_ASSERT(")
    .replace(/std::cout/g, "CUZK_WITNESS_LOG")
    // Read-only in the template's body (assert messages); the component outlives the run. A
    // template's name is one of the literals circom assigns (Circom_Component::templateName).
    .replace(/^std::string myTemplateName = ctx->componentMemory\[ctx_index\]\./gm, "const char* myTemplateName = ctx->componentMemory[ctx_index].")
    .replace(/^std::string myComponentName = ctx->componentMemory\[ctx_index\]\./gm, "const std::string& myComponentName = ctx->componentMemory[ctx_index].")
    // A component's name is copied once, into its slot, instead of into the argument first.
    .replace(/^(void \w+_create\(uint soffset,uint coffset,Circom_CalcWit\* ctx,)std::string componentName,/gm, "$1const std::string& componentName,")
    // A component without subcomponents gets no array for them (release_memory_component skips null).
    .replace(/^(ctx->componentMemory\[coffset\]\.subcomponents = )new uint\[0\];$/gm, "$1nullptr;");
  return constantRunsToImages(rewritten);
}
