/**
 * @module
 * Reads native/include/cuzk.h the way the tests need it: the CUZK_API prototypes (name, result,
 * parameters), the fixed-layout structs (with natural-alignment offsets computed from the field
 * types) and the enum values and #defines. The header is the single source of truth of the ABI;
 * these readers let the tests hold the TypeScript tables to it.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const HEADER_PATH = fileURLToPath(new URL("../../native/include/cuzk.h", import.meta.url));

/** The header without comments. */
export function headerSource(): string {
  return readFileSync(HEADER_PATH, "utf8").replace(/\/\*[\s\S]*?\*\//g, " ").replace(/\/\/[^\n]*/g, " ");
}

/** One parameter of a C prototype. */
export interface CParameter {
  type: string;
  name: string;
}

/** One CUZK_API function. */
export interface CFunction {
  name: string;
  result: string;
  parameters: CParameter[];
}

const normalize = (type: string) => type.replace(/\s+/g, " ").replace(/\s*\*\s*/g, "*").trim();

/** Every CUZK_API function of the header, in order. */
export function headerFunctions(): CFunction[] {
  const out: CFunction[] = [];
  const pattern = /CUZK_API\s+([^;(]*?)\b(cuzk_\w+)\s*\(([^)]*)\)\s*;/g;
  for (const match of headerSource().matchAll(pattern)) {
    const [, result, name, list] = match;
    const parameters = list.trim() === "void" || list.trim() === ""
      ? []
      : list.split(",").map((text) => {
        const m = /^(.*?)([A-Za-z_]\w*)\s*$/.exec(text.trim());
        if (!m) throw new Error(`cannot parse parameter "${text}" of ${name}`);
        return { type: normalize(m[1]), name: m[2] };
      });
    out.push({ name, result: normalize(result), parameters });
  }
  return out;
}

/** The neutral type a C type maps to in src/ffi/symbols.ts (several allowed for pointers). */
export function expectedNeutralTypes(cType: string): string[] {
  if (cType === "const char*") return ["cstring"];
  if (cType.endsWith("*")) return ["pointer", "buffer"];
  const scalars: Record<string, string> = {
    uint32_t: "u32",
    int32_t: "i32",
    uint64_t: "u64",
    size_t: "usize",
    uint8_t: "u8",
    cuzk_status: "i32",
    void: "void",
  };
  const mapped = scalars[cType];
  if (!mapped) throw new Error(`no neutral type for C type "${cType}"`);
  return [mapped];
}

/** A struct field with its offset computed by C's natural-alignment rules. */
export interface CField {
  name: string;
  type: string;
  count: number;
  offset: number;
  size: number;
}

/** A struct of the header, laid out. `documentedSize` is the "= sizeof(...) = N" comment. */
export interface CStruct {
  name: string;
  size: number;
  documentedSize: number | undefined;
  fields: CField[];
}

const SCALAR_SIZES: Record<string, number> = { uint32_t: 4, int32_t: 4, uint64_t: 8, char: 1, uint8_t: 1 };

/** Every struct of the header with a body, laid out (see the two forms below). */
export function headerStructs(): Map<string, CStruct> {
  const raw = readFileSync(HEADER_PATH, "utf8");
  const source = headerSource();
  const structs = new Map<string, CStruct>();
  const layout = (body: string, name: string): CStruct => {
    const fields: CField[] = [];
    let offset = 0, align = 1;
    for (const declaration of body.split(";").map((d) => d.trim()).filter(Boolean)) {
      const text = declaration.replace(/\s+/g, " ");
      // A pointer field (any pointee): 8 bytes, 8-aligned, as on the 64-bit hosts the bindings run on.
      const pointer = /^(.*\*)\s*(\w+)$/.exec(text);
      if (pointer) {
        offset = Math.ceil(offset / 8) * 8;
        fields.push({ name: pointer[2], type: normalize(pointer[1]), count: 1, offset, size: 8 });
        offset += 8;
        align = Math.max(align, 8);
        continue;
      }
      const m = /^([\w ]+?)\s+(\w+)(?:\[(\w+)\])?$/.exec(text);
      if (!m) throw new Error(`cannot parse field "${declaration}" of ${name}`);
      const [, type, fieldName, countText] = m;
      const count = countText === undefined ? 1 : Number(countText) || Number(headerDefines().get(countText));
      const nested = structs.get(type);
      const elementSize = nested ? nested.size : SCALAR_SIZES[type];
      const elementAlign = nested ? Math.max(...nested.fields.map((f) => SCALAR_SIZES[f.type] ?? 8)) : SCALAR_SIZES[type];
      if (!elementSize) throw new Error(`unknown field type ${type} in ${name}`);
      offset = Math.ceil(offset / elementAlign) * elementAlign;
      fields.push({ name: fieldName, type, count, offset, size: elementSize * count });
      offset += elementSize * count;
      align = Math.max(align, elementAlign);
    }
    const documented = new RegExp(`sizeof\\(${name}\\)\\s*=\\s*(\\d+)`).exec(raw);
    return {
      name,
      size: Math.ceil(offset / align) * align,
      documentedSize: documented ? Number(documented[1]) : undefined,
      fields,
    };
  };
  // `typedef struct name { ... } name;`, or `struct name { ... };` completing an earlier
  // `typedef struct name name;` (a struct that functions take before the section that defines it).
  for (const match of source.matchAll(/(?:typedef\s+)?\bstruct\s+(\w+)\s*\{([^}]*)\}\s*(\w*)\s*;/g)) {
    const name = match[3] || match[1];
    structs.set(name, layout(match[2], name));
  }
  return structs;
}

/**
 * Every `#define CUZK_NAME value` with a numeric value (u suffix dropped): a number, `(-N)` or
 * `(1u << K)`, the forms the header writes constants in.
 */
export function headerDefines(): Map<string, number> {
  const out = new Map<string, number>();
  const number = /(0x[0-9a-fA-F]+|\d+)u?/.source;
  const value = new RegExp(`^#define\\s+(CUZK_\\w+)\\s+(?:${number}\\b|\\((-\\d+)\\)|\\(${number}\\s*<<\\s*(\\d+)\\))`, "gm");
  for (const match of readFileSync(HEADER_PATH, "utf8").matchAll(value)) {
    const [, name, plain, negative, base, shift] = match;
    out.set(name, plain !== undefined ? Number(plain) : negative !== undefined ? Number(negative) : Number(base) * 2 ** Number(shift));
  }
  return out;
}

/** Every enumerator `CUZK_NAME = value` of the header's enums. */
export function headerEnumerators(): Map<string, number> {
  const out = new Map<string, number>();
  for (const body of headerSource().matchAll(/typedef\s+enum\s+\w+\s*\{([^}]*)\}/g)) {
    for (const match of body[1].matchAll(/(CUZK_\w+)\s*=\s*(\d+)/g)) out.set(match[1], Number(match[2]));
  }
  return out;
}
