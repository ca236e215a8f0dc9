/**
 * @module
 * A proof's phase timeline as a self-contained SVG waterfall: one row per phase that ran, a bar
 * from its start to its end on a shared millisecond axis, so that overlapping phases (the G2 MSM
 * on the CPU while the GPU works) are visible at a glance. Used by `cuzk prove --timeline`.
 * Beside it, the same phases as a text table (`cuzk prove --timings`, examples/prove.ts).
 */
import type { PhaseName, Timings } from "./timings.ts";

/** Options of timelineSvg. */
export interface TimelineOptions {
  /** Heading of the picture (default: backend and total time). */
  title?: string;
  /** Width of the bar area in pixels (default 640). */
  width?: number;
}

const ROW_HEIGHT = 22;
const LABEL_WIDTH = 120;
const VALUE_WIDTH = 90;
const HEADER_HEIGHT = 34;
const AXIS_HEIGHT = 24;

/** Colours by the kind of work, so that similar phases read as a group. */
function colourOf(phase: PhaseName): string {
  if (phase.startsWith("msm_") || phase === "batch_add") return "#4c78a8";
  if (phase === "ntt_h" || phase === "abc") return "#f58518";
  if (phase === "upload" || phase === "download" || phase === "host_register") return "#54a24b";
  return "#9d755d";
}

const escapeXml = (text: string) => text.replace(/[<>&"]/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;" })[c]!);

/** A "nice" tick step (1, 2 or 5 times a power of ten) giving about `count` ticks over `span`. */
function tickStep(span: number, count: number): number {
  const raw = span / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * power).find((step) => step >= raw) ?? 10 * power;
}

/** The SVG waterfall of one proof's timings. */
export function timelineSvg(timings: Timings, options: TimelineOptions = {}): string {
  const width = options.width ?? 640;
  const rows = (Object.entries(timings.phases) as Array<[PhaseName, { start: number; end: number }]>)
    .sort((a, b) => a[1].start - b[1].start || a[1].end - b[1].end);
  const total = Math.max(timings.totalMs, ...rows.map(([, span]) => span.end), 1e-3);
  const x = (ms: number) => LABEL_WIDTH + (ms / total) * width;
  const height = HEADER_HEIGHT + rows.length * ROW_HEIGHT + AXIS_HEIGHT;
  const title = options.title ?? `cuzk proof on ${timings.backend}: ${timings.totalMs.toFixed(2)} ms`;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${LABEL_WIDTH + width + VALUE_WIDTH}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="8" y="20" font-size="14" font-weight="bold">${escapeXml(title)}</text>`,
  ];
  const step = tickStep(total, 8);
  const axisY = HEADER_HEIGHT + rows.length * ROW_HEIGHT;
  for (let ms = 0; ms <= total + 1e-9; ms += step) {
    out.push(`<line x1="${x(ms).toFixed(1)}" y1="${HEADER_HEIGHT - 4}" x2="${x(ms).toFixed(1)}" y2="${axisY}" stroke="#dddddd"/>`);
    out.push(`<text x="${x(ms).toFixed(1)}" y="${axisY + 16}" text-anchor="middle" fill="#555555">${Number(ms.toPrecision(6))} ms</text>`);
  }
  rows.forEach(([phase, span], i) => {
    const y = HEADER_HEIGHT + i * ROW_HEIGHT;
    const barWidth = Math.max(1, x(span.end) - x(span.start));
    out.push(`<text x="8" y="${y + 15}">${escapeXml(phase)}</text>`);
    out.push(
      `<rect x="${x(span.start).toFixed(1)}" y="${y + 3}" width="${barWidth.toFixed(1)}" height="${ROW_HEIGHT - 6}" fill="${colourOf(phase)}">` +
        `<title>${escapeXml(phase)}: ${span.start.toFixed(3)} - ${span.end.toFixed(3)} ms</title></rect>`,
    );
    out.push(`<text x="${LABEL_WIDTH + width + 6}" y="${y + 15}" fill="#333333">${(span.end - span.start).toFixed(2)} ms</text>`);
  });
  out.push("</svg>");
  return out.join("\n") + "\n";
}

/**
 * The phases of one proof as a text table, one line per phase in start order (start, end and
 * duration in ms), under a heading with the backend and the call's total.
 */
export function phaseTable(timings: Timings): string {
  const rows = (Object.entries(timings.phases) as Array<[PhaseName, { start: number; end: number } | undefined]>)
    .filter((row): row is [PhaseName, { start: number; end: number }] => row[1] !== undefined)
    .sort((a, b) => a[1].start - b[1].start);
  const lines = [`phase              start ms     end ms   took ms   (${timings.backend}, total ${timings.totalMs.toFixed(1)} ms)`];
  for (const [name, span] of rows) {
    lines.push(`${name.padEnd(16)} ${span.start.toFixed(2).padStart(9)} ${span.end.toFixed(2).padStart(10)} ${(span.end - span.start).toFixed(2).padStart(9)}`);
  }
  return lines.join("\n");
}
