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

/** One bar of a waterfall: its label, its kind of work (the colour), its span in ms. */
interface Bar {
  label: string;
  phase: PhaseName;
  start: number;
  end: number;
  /** A band behind the row (lanes: every other device shaded), or none. */
  shade?: boolean;
}

/** The SVG of bars in the order given, on one ms axis from 0 to `total`. */
function waterfallSvg(bars: Bar[], total: number, title: string, width: number): string {
  const x = (ms: number) => LABEL_WIDTH + (ms / total) * width;
  const height = HEADER_HEIGHT + bars.length * ROW_HEIGHT + AXIS_HEIGHT;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${LABEL_WIDTH + width + VALUE_WIDTH}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="8" y="20" font-size="14" font-weight="bold">${escapeXml(title)}</text>`,
  ];
  bars.forEach((bar, i) => {
    if (bar.shade) out.push(`<rect x="0" y="${HEADER_HEIGHT + i * ROW_HEIGHT}" width="100%" height="${ROW_HEIGHT}" fill="#f3f3f8"/>`);
  });
  const step = tickStep(total, 8);
  const axisY = HEADER_HEIGHT + bars.length * ROW_HEIGHT;
  for (let ms = 0; ms <= total + 1e-9; ms += step) {
    out.push(`<line x1="${x(ms).toFixed(1)}" y1="${HEADER_HEIGHT - 4}" x2="${x(ms).toFixed(1)}" y2="${axisY}" stroke="#dddddd"/>`);
    out.push(`<text x="${x(ms).toFixed(1)}" y="${axisY + 16}" text-anchor="middle" fill="#555555">${Number(ms.toPrecision(6))} ms</text>`);
  }
  bars.forEach((bar, i) => {
    const y = HEADER_HEIGHT + i * ROW_HEIGHT;
    const barWidth = Math.max(1, x(bar.end) - x(bar.start));
    out.push(`<text x="8" y="${y + 15}">${escapeXml(bar.label)}</text>`);
    out.push(
      `<rect x="${x(bar.start).toFixed(1)}" y="${y + 3}" width="${barWidth.toFixed(1)}" height="${ROW_HEIGHT - 6}" fill="${colourOf(bar.phase)}">` +
        `<title>${escapeXml(bar.label)}: ${bar.start.toFixed(3)} - ${bar.end.toFixed(3)} ms</title></rect>`,
    );
    out.push(`<text x="${LABEL_WIDTH + width + 6}" y="${y + 15}" fill="#333333">${(bar.end - bar.start).toFixed(2)} ms</text>`);
  });
  out.push("</svg>");
  return out.join("\n") + "\n";
}

const barsOf = (timings: Timings, offset = 0) =>
  (Object.entries(timings.phases) as Array<[PhaseName, { start: number; end: number } | undefined]>)
    .filter((row): row is [PhaseName, { start: number; end: number }] => row[1] !== undefined)
    .map(([phase, span]) => ({ label: phase as string, phase, start: span.start + offset, end: span.end + offset }));

/** The SVG waterfall of one proof's timings. */
export function timelineSvg(timings: Timings, options: TimelineOptions = {}): string {
  const bars = barsOf(timings).sort((a, b) => a.start - b.start || a.end - b.end);
  const total = Math.max(timings.totalMs, ...bars.map((b) => b.end), 1e-3);
  const title = options.title ?? `cuzk proof on ${timings.backend}: ${timings.totalMs.toFixed(2)} ms`;
  return waterfallSvg(bars, total, title, options.width ?? 640);
}

/** A proof of a batch as a lane of a waterfall: its device (lane), its call's start, its timings. */
export interface LaneProof {
  device: number;
  /** When its call started, in ms on the batch's axis. */
  callOffsetMs: number;
  timings: Timings;
}

/**
 * The SVG waterfall of a batch over several devices: one lane per device (rows "gpu 1 msm_h #3",
 * every other lane shaded), each proof's phases shifted by its call's start onto one axis, so
 * that the devices' proofs are seen running side by side. A phase shared by a call's proofs
 * (same span) is drawn once.
 */
export function lanesTimelineSvg(proofs: ReadonlyArray<LaneProof>, options: TimelineOptions = {}): string {
  const devices = [...new Set(proofs.map((p) => p.device))].sort((a, b) => a - b);
  const bars: Bar[] = [];
  devices.forEach((device, lane) => {
    const seen = new Set<string>();
    const mine = proofs.filter((p) => p.device === device);
    const lanes = mine.flatMap((p) =>
      barsOf(p.timings, p.callOffsetMs)
        .filter((b) => !seen.has(`${b.phase}@${b.start}-${b.end}`) && seen.add(`${b.phase}@${b.start}-${b.end}`) !== undefined)
        .map((b) => ({ ...b, label: `dev ${device} ${b.phase}${mine.length > 1 ? ` #${p.timings.proofIndex}` : ""}`, shade: lane % 2 === 1 }))
    );
    bars.push(...lanes.sort((a, b) => a.start - b.start || a.end - b.end));
  });
  const total = Math.max(...proofs.map((p) => p.callOffsetMs + p.timings.totalMs), ...bars.map((b) => b.end), 1e-3);
  const title = options.title ?? `cuzk batch of ${proofs.length} on ${devices.length} device(s): ${total.toFixed(1)} ms`;
  return waterfallSvg(bars, total, title, options.width ?? 640);
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
