/**
 * @module
 * Promise: the service, the CLI, the benchmarks and the examples use the library only through its
 * public module (mod.ts, or "cuzk"), never a file under src/ directly, so that
 * src/ can be rearranged behind mod.ts without breaking them. Every import and export-from
 * specifier is read with a small tokenizer (static, `import type`, side-effect, `export ... from`,
 * dynamic `import()`, `require()`), ignoring comments, strings, templates and regular expressions.
 * The tokenizer is itself checked on planted violations, so the test is known to be able to fail.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SRC = join(ROOT, "src");
/** What must reach the library through mod.ts only. */
const LAYERS_ABOVE_THE_MODULE = ["service", "cli.ts", "cli", "bench", "examples"];
const SCRIPT = /\.(ts|mts|cts|tsx|js|mjs|cjs)$/;

interface Token {
  kind: "word" | "string" | "punct" | "other";
  text: string;
  at: number;
}

/** Words after which a `/` starts a regular expression rather than a division. */
const BEFORE_EXPRESSION = new Set(["return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case", "do", "else", "yield", "await"]);

/** The tokens of a script that matter for imports: words, string literals, punctuation. */
function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  const endsExpression = () => {
    const last = tokens[tokens.length - 1];
    if (!last) return false;
    if (last.kind === "word") return !BEFORE_EXPRESSION.has(last.text);
    if (last.kind === "string" || last.kind === "other") return true;
    return last.text === ")" || last.text === "]" || last.text === "}";
  };
  let i = 0;
  const n = source.length;
  /** Skips a quoted string starting at i (the quote); returns its (unescaped enough) value. */
  const readString = (quote: string): string => {
    let value = "";
    for (i++; i < n && source[i] !== quote; i++) {
      if (source[i] === "\\") value += source[++i] ?? "";
      else if (source[i] === "\n") break; // unterminated: stop at the line end
      else value += source[i];
    }
    i++;
    return value;
  };
  /** Skips a template literal starting at i (the backtick), including `${...}` parts. */
  const skipTemplate = () => {
    for (i++; i < n && source[i] !== "`"; i++) {
      if (source[i] === "\\") i++;
      else if (source[i] === "$" && source[i + 1] === "{") {
        let depth = 1;
        for (i += 2; i < n && depth > 0; i++) {
          const c = source[i];
          if (c === "{") depth++;
          else if (c === "}") depth--;
          else if (c === "'" || c === '"') {
            readString(c);
            i--;
          } else if (c === "`") {
            skipTemplate();
            i--;
          }
        }
        i--;
      }
    }
    i++;
  };
  while (i < n) {
    const c = source[i];
    if (/\s/.test(c)) {
      i++;
    } else if (c === "/" && source[i + 1] === "/") {
      while (i < n && source[i] !== "\n") i++;
    } else if (c === "/" && source[i + 1] === "*") {
      const end = source.indexOf("*/", i + 2);
      i = end < 0 ? n : end + 2;
    } else if (c === "'" || c === '"') {
      const at = i;
      tokens.push({ kind: "string", text: readString(c), at });
    } else if (c === "`") {
      const at = i;
      skipTemplate();
      tokens.push({ kind: "other", text: "`template`", at });
    } else if (c === "/" && !endsExpression()) {
      // A regular expression literal: up to the closing slash outside a character class.
      const at = i;
      let inClass = false;
      for (i++; i < n && source[i] !== "\n"; i++) {
        if (source[i] === "\\") i++;
        else if (source[i] === "[") inClass = true;
        else if (source[i] === "]") inClass = false;
        else if (source[i] === "/" && !inClass) break;
      }
      for (i++; i < n && /[a-z]/i.test(source[i]); i++);
      tokens.push({ kind: "other", text: "/regex/", at });
    } else if (/[A-Za-z_$0-9]/.test(c)) {
      const at = i;
      while (i < n && /[A-Za-z_$0-9]/.test(source[i])) i++;
      const text = source.slice(at, i);
      tokens.push({ kind: /^[0-9]/.test(text) ? "other" : "word", text, at });
    } else {
      tokens.push({ kind: "punct", text: c, at: i });
      i++;
    }
  }
  return tokens;
}

/** One module specifier found in a script; `computed` when a dynamic import's argument is not a literal. */
export interface Specifier {
  specifier: string;
  at: number;
  form: string;
  computed?: boolean;
}

/** Every import, export-from, dynamic import() and require() specifier of `source`. */
export function moduleSpecifiers(source: string): Specifier[] {
  const tokens = tokenize(source);
  const found: Specifier[] = [];
  const is = (k: number, text: string) => tokens[k]?.kind !== "string" && tokens[k]?.text === text;
  /** From token k on, the string after the first `from` before a `;` (the end of an import/export clause). */
  const fromClause = (k: number, form: string) => {
    for (let j = k; j < tokens.length && !is(j, ";"); j++) {
      if (is(j, "from") && tokens[j + 1]?.kind === "string") {
        found.push({ specifier: tokens[j + 1].text, at: tokens[j + 1].at, form });
        return;
      }
      // `export const x = ...`, `import x = require(...)`: no from-clause here.
      if (is(j, "=")) return;
    }
  };
  const call = (k: number, form: string) => {
    // tokens[k] is "import" or "require" and tokens[k + 1] is "(".
    const arg = tokens[k + 2];
    if (arg?.kind === "string" && (is(k + 3, ")") || is(k + 3, ","))) found.push({ specifier: arg.text, at: arg.at, form });
    else found.push({ specifier: "", at: tokens[k].at, form, computed: true });
  };
  for (let k = 0; k < tokens.length; k++) {
    const token = tokens[k];
    if (token.kind !== "word" || is(k - 1, ".")) continue;
    if (token.text === "import") {
      if (is(k + 1, "(")) call(k, "import()");
      else if (is(k + 1, ".")) continue; // import.meta
      else if (tokens[k + 1]?.kind === "string") found.push({ specifier: tokens[k + 1].text, at: tokens[k + 1].at, form: "import" });
      else fromClause(k + 1, is(k + 1, "type") ? "import type" : "import");
    } else if (token.text === "export") {
      const next = is(k + 1, "type") ? k + 2 : k + 1;
      if (is(next, "{") || is(next, "*")) fromClause(next, next === k + 2 ? "export type" : "export");
    } else if (token.text === "require" && is(k + 1, "(")) {
      call(k, "require()");
    }
  }
  return found;
}

/** The file a specifier names, when it names one by path (bare names resolve as packages). */
function resolved(specifier: string, file: string): string | undefined {
  if (specifier.startsWith("./") || specifier.startsWith("../")) return resolve(dirname(file), specifier);
  if (specifier.startsWith("file:")) return fileURLToPath(specifier);
  if (isAbsolute(specifier)) return specifier;
  return undefined;
}

/** The imports of `source` (as if it lay at `file`) that reach into src/ or cannot be checked. */
function violations(source: string, file: string): string[] {
  const lineOf = (at: number) => source.slice(0, at).split("\n").length;
  const out: string[] = [];
  for (const s of moduleSpecifiers(source)) {
    const where = `${relative(ROOT, file)}:${lineOf(s.at)}`;
    if (s.computed) {
      out.push(`${where}: ${s.form} with a computed specifier (cannot be checked; use a literal)`);
      continue;
    }
    const target = resolved(s.specifier, file);
    if (target !== undefined && (target === SRC || target.startsWith(SRC + sep))) {
      out.push(`${where}: ${s.form} ${JSON.stringify(s.specifier)} reaches into src/; import it from mod.ts (export it there if it is missing)`);
    }
  }
  return out;
}

/** The script files of a path (a file, or a folder walked recursively). */
function scripts(path: string): string[] {
  const full = join(ROOT, path);
  if (!statSync(full).isDirectory()) return [full];
  return readdirSync(full, { recursive: true, encoding: "utf8" })
    .filter((name) => SCRIPT.test(name) && !name.split(sep).includes("node_modules"))
    .map((name) => join(full, name))
    .filter((name) => statSync(name).isFile())
    .sort();
}

test("the layering check finds every form of import into src/ and nothing in comments, strings or regexes", () => {
  const file = join(ROOT, "service", "planted.ts");
  const planted = [
    `import { a } from "../src/static.ts";`,
    `import type { T } from '../src/type_only.ts';`,
    `import Default, { b } from "../src/default.ts";`,
    `import * as all from "../src/namespace.ts";`,
    `import "../src/side_effect.ts";`,
    `export { c } from "../src/reexport.ts";`,
    `export * from "../src/star.ts";`,
    `export * as ns from "../src/star_as.ts";`,
    `export type { U } from "../src/type_reexport.ts";`,
    `const m = await import("../src/dynamic.ts");`,
    `const later = () => import('../src/dynamic_in_function.ts').then((m) => m.x);`,
    `import {\n  d,\n  e,\n} from\n  "../src/multiline.ts";`,
    `import { f } from "./../src/roundabout.ts";`,
    `import { g } from "${join(ROOT, "src", "absolute.ts")}";`,
    `import { h } from "${new URL("../src/url.ts", import.meta.url).href}";`,
    `const r = require("../src/require.cjs");`,
    `const name = "x"; await import(name);`,
  ];
  for (const source of planted) assert.equal(violations(source, file).length, 1, `not caught: ${source}`);

  const innocent = [
    `// import { a } from "../src/comment.ts";`,
    `/* export * from "../src/block_comment.ts"; */`,
    `/**\n * import { x } from "../src/doc.ts";\n */`,
    `const s = "import x from '../src/in_string.ts'";`,
    "const t = `import(\"../src/in_template.ts\") ${1 + 2}`;",
    `const re = /"/g; const q = '"'; import { ok } from "../mod.ts";`,
    `const ratio = 4 / 2; const re2 = /import\\("..\\/src\\/x.ts"\\)/;`,
    `import { Prover } from "cuzk"; import { join } from "node:path"; const u = import.meta.url;`,
    `export const from = "../src/not_an_import.ts"; export { from };`,
    `import { y } from "../service/src/elsewhere.ts";`,
  ];
  for (const source of innocent) assert.deepEqual(violations(source, file), [], `false alarm: ${source}`);
});

test("service/, cli.ts, bench/ and examples/ import the library only through mod.ts", () => {
  const files = LAYERS_ABOVE_THE_MODULE.flatMap(scripts);
  assert.ok(files.length >= 10, `only ${files.length} files found: ${files.join(", ")}`);
  let imports = 0;
  const found: string[] = [];
  for (const file of files) {
    const source = readFileSync(file, "utf8");
    imports += moduleSpecifiers(source).length;
    found.push(...violations(source, file));
  }
  assert.ok(imports >= files.length, `only ${imports} imports in ${files.length} files: is the tokenizer reading them?`);
  assert.deepEqual(found, [], `imports past the public module:\n${found.join("\n")}`);
});
