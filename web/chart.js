/**
 * The mentions chart: one bar per UTC day (or hour), missing buckets filled with zero, spike
 * episodes as shaded bands, axes with dates. Drawn at the container's real width (and again when it
 * changes) so the labels stay readable on a phone. Its text alternative is the SVG's title and
 * description, and the data table beside it.
 */
import { formatCount, formatDay, h, s } from './dom.js';

export const DAY_MS = 86_400_000;
export const HOUR_MS = 3_600_000;

/**
 * @typedef {{ start: number, count: number }} Bucket
 * @typedef {{ id: string, start: number, end: number, open: boolean, peak: number, score: number | null }} Band
 */

/**
 * Every bucket from `from` to `to` (inclusive of the bucket holding `to`), with the counts given and
 * zero elsewhere: the API leaves empty buckets out.
 * @param {{ start: string, count: number }[]} buckets
 * @param {number} from
 * @param {number} to
 * @param {number} size bucket length in ms
 * @returns {Bucket[]}
 */
export function fillBuckets(buckets, from, to, size) {
  const first = Math.floor(from / size) * size;
  const last = Math.floor(to / size) * size;
  /** @type {Map<number, number>} */
  const counts = new Map();
  for (const bucket of buckets) {
    const start = Math.floor(Date.parse(bucket.start) / size) * size;
    if (Number.isFinite(start)) counts.set(start, (counts.get(start) ?? 0) + (Number(bucket.count) || 0));
  }
  /** @type {Bucket[]} */
  const filled = [];
  for (let t = first; t <= last; t += size) filled.push({ start: t, count: counts.get(t) ?? 0 });
  return filled;
}

/**
 * A round upper bound and step for a count axis.
 * @param {number} max
 * @returns {{ top: number, step: number }}
 */
export function niceScale(max) {
  if (max <= 4) return { top: Math.max(1, max), step: 1 };
  const rough = max / 4;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * power).find((candidate) => candidate >= rough) ?? 10 * power;
  return { top: Math.ceil(max / step) * step, step };
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `6 Jan`. @param {number} t */
function shortDay(t) {
  const d = new Date(t);
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]}`;
}

/**
 * @param {HTMLElement} container
 * @param {{ entityName: string, buckets: Bucket[], size: number, bands: Band[] }} data
 */
export function renderMentionsChart(container, data) {
  const { buckets, size, bands, entityName } = data;
  const width = Math.max(280, Math.floor(container.clientWidth || 640));
  const narrow = width < 480;
  const height = narrow ? 200 : 240;
  const margin = { top: 14, right: 12, bottom: 46, left: narrow ? 34 : 44 };
  const innerWidth = width - margin.left - margin.right;
  const innerHeight = height - margin.top - margin.bottom;
  const n = Math.max(1, buckets.length);
  const slot = innerWidth / n;
  const max = Math.max(0, ...buckets.map((b) => b.count));
  const { top, step } = niceScale(max);
  const first = buckets[0]?.start ?? 0;
  const end = first + n * size;
  /** @param {number} t */
  const x = (t) => margin.left + ((t - first) / size) * slot;
  /** @param {number} c */
  const y = (c) => margin.top + innerHeight - (c / top) * innerHeight;

  const total = buckets.reduce((sum, b) => sum + b.count, 0);
  const peak = buckets.reduce((best, b) => (b.count > best.count ? b : best), buckets[0] ?? { start: first, count: 0 });
  const unit = size === DAY_MS ? 'day' : 'hour';
  const titleText = `Mentions of ${entityName} per ${unit}, ${formatDay(first)} to ${formatDay(end - 1)} (UTC)`;
  const descText =
    (total === 0
      ? `No mentions in these ${n} ${unit}s. `
      : `${formatCount(total)} mentions in ${n} ${unit}s; the busiest ${unit} was ${formatDay(peak.start)} with ${formatCount(peak.count)}. `) +
    (bands.length === 0
      ? 'No spike episodes in this period.'
      : `${bands.length} spike episode${bands.length === 1 ? '' : 's'}: ${bands
          .map((b) => `${formatDay(b.start)} to ${b.open ? 'now (open)' : formatDay(b.end - 1)}`)
          .join('; ')}.`);

  const id = container.id || 'chart';
  const children = [s('title', { id: `${id}-title` }, titleText), s('desc', { id: `${id}-desc` }, descText)];

  // Spike bands behind the bars, clipped to the chart's period.
  for (const band of bands) {
    const from = Math.max(first, band.start);
    const to = Math.min(end, band.open ? end : band.end);
    if (to <= from) continue;
    const label = `Spike episode ${formatDay(band.start)} – ${band.open ? 'ongoing' : formatDay(band.end - 1)}, peak ${formatCount(band.peak)} mentions in the window`;
    children.push(
      s(
        'g',
        { class: `spike-band${band.open ? ' open' : ''}`, 'data-episode-id': band.id },
        s('title', {}, label),
        s('rect', {
          x: x(from).toFixed(1),
          y: margin.top,
          width: Math.max(2, x(to) - x(from)).toFixed(1),
          height: innerHeight,
        }),
        s('path', { class: 'spike-marker', d: `M${x(from).toFixed(1)},${margin.top} l5,0 l-5,7 z` }),
      ),
    );
  }

  // Count axis: gridlines and labels.
  const grid = [];
  for (let c = 0; c <= top; c += step) {
    grid.push(
      s('line', { class: 'grid', x1: margin.left, x2: width - margin.right, y1: y(c).toFixed(1), y2: y(c).toFixed(1) }),
      s('text', { class: 'tick', x: margin.left - 6, y: (y(c) + 4).toFixed(1), 'text-anchor': 'end' }, formatCount(c)),
    );
  }
  children.push(s('g', { class: 'axis y-axis', 'aria-hidden': 'true' }, ...grid));

  // Bars.
  const barWidth = Math.max(1, slot * (slot > 6 ? 0.75 : 0.9));
  children.push(
    s(
      'g',
      { class: 'bars', 'aria-hidden': 'true' },
      ...buckets.map((b) =>
        s(
          'rect',
          {
            class: 'bar',
            x: (x(b.start) + (slot - barWidth) / 2).toFixed(1),
            y: y(b.count).toFixed(1),
            width: barWidth.toFixed(1),
            height: Math.max(0, y(0) - y(b.count)).toFixed(1),
            'data-start': new Date(b.start).toISOString(),
            'data-count': b.count,
          },
          s('title', {}, `${formatDay(b.start)}: ${formatCount(b.count)} mention${b.count === 1 ? '' : 's'}`),
        ),
      ),
    ),
  );

  // Date axis: a label every few buckets, at least ~64 px apart; the year under the first label
  // and under the first label of each new year.
  const every = Math.max(1, Math.ceil((narrow ? 56 : 64) / slot));
  const stepBuckets = size === DAY_MS && every > 1 ? ([2, 7, 14, 28, 56, 91].find((d) => d >= every) ?? every) : every;
  const ticks = [s('line', { class: 'axis-line', x1: margin.left, x2: width - margin.right, y1: y(0), y2: y(0) })];
  let lastYear = -1;
  for (let i = 0; i < buckets.length; i += stepBuckets) {
    const t = buckets[i]?.start ?? first;
    const cx = x(t) + slot / 2;
    const year = new Date(t).getUTCFullYear();
    ticks.push(
      s('line', { class: 'tick-mark', x1: cx.toFixed(1), x2: cx.toFixed(1), y1: y(0), y2: y(0) + 4 }),
      s(
        'text',
        { class: 'tick', x: cx.toFixed(1), y: y(0) + 16, 'text-anchor': 'middle' },
        size === DAY_MS ? shortDay(t) : new Date(t).toISOString().slice(11, 16),
      ),
    );
    if (year !== lastYear) {
      ticks.push(
        s('text', { class: 'tick tick-year', x: cx.toFixed(1), y: y(0) + 29, 'text-anchor': 'middle' }, String(year)),
      );
      lastYear = year;
    }
  }
  ticks.push(
    s(
      'text',
      { class: 'axis-title', x: width - margin.right, y: height - 4, 'text-anchor': 'end' },
      `Date (UTC), per ${unit}`,
    ),
    s(
      'text',
      {
        class: 'axis-title',
        x: 10,
        y: margin.top + innerHeight / 2,
        transform: `rotate(-90 10 ${margin.top + innerHeight / 2})`,
        'text-anchor': 'middle',
      },
      'Mentions',
    ),
  );
  children.push(s('g', { class: 'axis x-axis', 'aria-hidden': 'true' }, ...ticks));

  const svg = s(
    'svg',
    {
      class: 'mentions-svg',
      role: 'img',
      'aria-labelledby': `${id}-title ${id}-desc`,
      viewBox: `0 0 ${width} ${height}`,
      width,
      height,
      focusable: 'false',
    },
    ...children,
  );
  container.replaceChildren(svg);
  return { title: titleText, description: descText };
}

/**
 * Fills the data table that is the chart's text alternative.
 * @param {HTMLTableElement} table
 * @param {Bucket[]} buckets
 * @param {Band[]} bands
 * @param {string} caption
 */
export function fillMentionsTable(table, buckets, bands, caption) {
  const captionElement = table.querySelector('caption');
  if (captionElement) captionElement.textContent = caption;
  const body = table.tBodies[0] ?? table.createTBody();
  body.replaceChildren(
    ...buckets.map((b) => {
      const spiking = bands.some((band) => b.start + 1 > band.start && (band.open || b.start < band.end));
      return h(
        'tr',
        {},
        h('th', { scope: 'row' }, formatDay(b.start)),
        h('td', {}, formatCount(b.count)),
        h('td', {}, spiking ? 'yes' : ''),
      );
    }),
  );
}
