/**
 * docs/performance.svg: grouped bar charts, hand-written SVG (no chart library). One panel per
 * figure, one group per workload, one bar per contender, at the largest N of each panel's wire
 * and transport, warm phase (medians).
 */
import { CONTENDERS, type ContenderId } from './contenders/index.js';
import type { Row } from './report.js';
import type { Workload } from './scenario.js';
import type { TransportKind, WireKind } from './transports.js';

const COLORS: Record<ContenderId, string> = {
  'mcp-task-client': '#1f6feb',
  'mcp-task-client-v2': '#54aeff',
  'mcp-task-client-otel': '#8250df',
  'sdk-stream': '#d1242f',
  'ext-tasks': '#bf8700',
  floor: '#6e7781',
  'floor-v2': '#afb8c1',
};

function esc(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

function tickLabel(value: number): string {
  if (value === 0) return '0';
  if (Math.abs(value) >= 1000) return `${value / 1000}k`;
  if (Math.abs(value) < 1) return String(Number(value.toPrecision(2)));
  return String(Number(value.toPrecision(3)));
}

/** "Nice" linear ticks from 0 to at least `max`. */
function linearTicks(max: number): number[] {
  if (!(max > 0)) return [0, 1];
  const raw = max / 4;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? raw;
  const ticks: number[] = [];
  for (let v = 0; v <= max + step * 0.999; v += step) ticks.push(Number(v.toPrecision(6)));
  return ticks;
}

interface Panel {
  readonly title: string;
  readonly wire: WireKind;
  readonly transport: TransportKind;
  readonly value: (row: Row) => number;
  readonly log?: boolean;
}

const PANELS: readonly Panel[] = [
  {
    title: 'CPU per task, warm (ms), 2025-11-25, in process',
    wire: '2025',
    transport: 'memory',
    value: (r) => r.warm.cpuPerTaskMs.median,
  },
  {
    title: 'CPU per task, warm (ms), 2025-11-25, stdio (client)',
    wire: '2025',
    transport: 'stdio',
    value: (r) => r.warm.cpuPerTaskMs.median,
  },
  {
    title: 'Heap per in-flight task (KiB), 2025-11-25, in process',
    wire: '2025',
    transport: 'memory',
    value: (r) => r.heapPerTaskBytes.median / 1024,
  },
  {
    title: 'Median lag, warm (ms, log), 2025-11-25, in process',
    wire: '2025',
    transport: 'memory',
    value: (r) => r.warm.lagMedianMs.median,
    log: true,
  },
  {
    title: 'CPU per task, warm (ms), extension, in process',
    wire: 'ext',
    transport: 'memory',
    value: (r) => r.warm.cpuPerTaskMs.median,
  },
  {
    title: 'Median lag, warm (ms, log), extension, in process',
    wire: 'ext',
    transport: 'memory',
    value: (r) => r.warm.lagMedianMs.median,
    log: true,
  },
];

/** The chart. */
export function svgChart(rows: readonly Row[], workloads: readonly Workload[]): string {
  const cols = 2;
  const pw = 540;
  const ph = 260;
  const margin = { top: 34, right: 16, bottom: 46, left: 58 };
  const headerH = 64;
  const panels = PANELS.filter((p) => rows.some((r) => r.wire === p.wire && r.transport === p.transport));
  const width = cols * pw;
  const height = headerH + Math.ceil(Math.max(panels.length, 1) / cols) * ph;
  const present = CONTENDERS.filter((c) => rows.some((r) => r.wire === c.wire && r.contender === c.id));
  const legend = [...new Map(present.map((c) => [c.id, c])).values()];
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="11">`,
  );
  out.push(`<rect width="${width}" height="${height}" fill="#ffffff"/>`);
  out.push(
    '<text x="16" y="24" font-size="16" font-weight="bold">mcp-task-client, the alternatives and the floors (largest N of each panel, medians)</text>',
  );
  let lx = 16;
  for (const c of legend) {
    const name = c.id === 'floor' ? 'floor (reference)' : c.id === 'ext-tasks' ? 'ext-tasks' : c.label;
    out.push(`<rect x="${lx}" y="38" width="12" height="12" fill="${COLORS[c.id]}"/>`);
    out.push(`<text x="${lx + 16}" y="48">${esc(name)}</text>`);
    lx += 28 + name.length * 6.2;
  }
  for (const [index, panel] of panels.entries()) {
    const subset = rows.filter((r) => r.wire === panel.wire && r.transport === panel.transport);
    const n = Math.max(...subset.map((r) => r.n));
    const at = subset.filter((r) => r.n === n);
    const contenders = CONTENDERS.filter((c) => c.wire === panel.wire && at.some((r) => r.contender === c.id));
    const groups = workloads.filter((w) => at.some((r) => r.workload === w.id));
    const ox = (index % cols) * pw;
    const oy = headerH + Math.floor(index / cols) * ph;
    const plotW = pw - margin.left - margin.right;
    const plotH = ph - margin.top - margin.bottom;
    const x0 = ox + margin.left;
    const y0 = oy + margin.top;
    out.push(
      `<text x="${x0}" y="${oy + 20}" font-size="12" font-weight="bold">${esc(`${panel.title}, N=${n.toLocaleString('en-US')}`)}</text>`,
    );
    const values = at.map(panel.value).filter((v) => Number.isFinite(v));
    let scale: (v: number) => number;
    let ticks: number[];
    if (panel.log === true) {
      const positive = values.filter((v) => v > 0);
      const lo = 10 ** Math.floor(Math.log10(Math.min(...positive, 1)));
      const hi = 10 ** Math.ceil(Math.log10(Math.max(...positive, lo * 10)));
      ticks = [];
      for (let t = lo; t <= hi * 1.0001; t *= 10) ticks.push(t);
      scale = (v) => plotH * (1 - (Math.log10(Math.max(v, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo)));
    } else {
      ticks = linearTicks(Math.max(...values, 0));
      const top = ticks.at(-1)!;
      scale = (v) => plotH * (1 - v / top);
    }
    for (const t of ticks) {
      const y = y0 + scale(t);
      out.push(`<line x1="${x0}" y1="${y.toFixed(1)}" x2="${x0 + plotW}" y2="${y.toFixed(1)}" stroke="#e6e8eb"/>`);
      out.push(`<text x="${x0 - 6}" y="${(y + 4).toFixed(1)}" text-anchor="end" fill="#57606a">${tickLabel(t)}</text>`);
    }
    out.push(`<line x1="${x0}" y1="${y0 + plotH}" x2="${x0 + plotW}" y2="${y0 + plotH}" stroke="#57606a"/>`);
    const groupW = plotW / Math.max(groups.length, 1);
    const barW = Math.min(22, (groupW - 16) / Math.max(contenders.length, 1));
    for (const [gi, w] of groups.entries()) {
      const gx = x0 + gi * groupW + (groupW - barW * contenders.length) / 2;
      for (const [ci, c] of contenders.entries()) {
        const row = at.find((r) => r.workload === w.id && r.contender === c.id);
        const v = row === undefined ? Number.NaN : panel.value(row);
        if (!Number.isFinite(v)) continue;
        const y = y0 + scale(Math.max(v, 0));
        const h = y0 + plotH - y;
        const x = gx + ci * barW;
        out.push(
          `<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${(barW - 2).toFixed(1)}" height="${Math.max(h, 0.5).toFixed(1)}" fill="${COLORS[c.id]}"><title>${esc(`${c.label}, ${w.id}: ${v.toPrecision(3)}`)}</title></rect>`,
        );
      }
      out.push(
        `<text x="${(x0 + gi * groupW + groupW / 2).toFixed(1)}" y="${y0 + plotH + 16}" text-anchor="middle">${esc(w.id)}</text>`,
      );
    }
  }
  out.push('</svg>');
  return out.join('\n');
}
