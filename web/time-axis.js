/**
 * Retrieved items on a time axis: each item at its publication time (across) and score (up), the
 * query time marked. Each point is a link to the item in the list below, so it can be reached with
 * the keyboard; hovering or focusing one shows its text beside it.
 */
import { formatScore, formatTime, s } from './dom.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Tick spacings to choose from, shortest first. */
const STEPS = [HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 2 * DAY, 7 * DAY, 14 * DAY, 30 * DAY, 91 * DAY, 365 * DAY];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * @typedef {{ id: string, kind: string, text: string, published_at: string, score: number }} AxisItem
 */

/**
 * @param {number} t
 * @param {number} step
 */
function tickLabel(t, step) {
  const d = new Date(t);
  if (step < DAY) return d.toISOString().slice(11, 16);
  if (step >= 91 * DAY) return `${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]}`;
}

/**
 * @param {HTMLElement} container
 * @param {HTMLElement} tip
 * @param {AxisItem[]} items
 * @param {number} queryTime
 */
export function renderTimeAxis(container, tip, items, queryTime) {
  const width = Math.max(280, Math.floor(container.clientWidth || 640));
  const narrow = width < 480;
  const height = narrow ? 170 : 190;
  const margin = { top: 34, right: 16, bottom: 40, left: narrow ? 36 : 44 };
  const innerWidth = width - margin.left - margin.right;
  const innerHeight = height - margin.top - margin.bottom;
  const times = items.map((item) => Date.parse(item.published_at)).filter(Number.isFinite);
  let lo = Math.min(queryTime, ...times);
  let hi = Math.max(queryTime, ...times);
  const pad = Math.max(HOUR, (hi - lo) * 0.06);
  lo -= pad;
  hi += pad;
  // Scores from zero (or the lowest, when negative) up to a little above the best.
  const scores = items.map((item) => item.score).filter(Number.isFinite);
  const low = Math.min(0, ...scores);
  let high = Math.max(0, ...scores);
  high = high - low < 1e-9 ? low + 1 : high + (high - low) * 0.08;
  /** @param {number} t */
  const x = (t) => margin.left + ((t - lo) / (hi - lo)) * innerWidth;
  /** @param {number} v */
  const y = (v) => margin.top + innerHeight - ((v - low) / (high - low)) * innerHeight;

  const step = STEPS.find((candidate) => (candidate / (hi - lo)) * innerWidth >= (narrow ? 60 : 72)) ?? 365 * DAY;
  const ticks = [s('line', { class: 'axis-line', x1: margin.left, x2: width - margin.right, y1: y(low), y2: y(low) })];
  const firstTick = step >= DAY ? Math.ceil(lo / DAY) * DAY : Math.ceil(lo / step) * step;
  for (let t = firstTick; t <= hi; t += step) {
    const at = step >= 30 * DAY ? Date.UTC(new Date(t).getUTCFullYear(), new Date(t).getUTCMonth(), 1) : t;
    if (at < lo) continue;
    ticks.push(
      s('line', { class: 'grid', x1: x(at).toFixed(1), x2: x(at).toFixed(1), y1: margin.top, y2: y(low) }),
      s('text', { class: 'tick', x: x(at).toFixed(1), y: y(low) + 15, 'text-anchor': 'middle' }, tickLabel(at, step)),
    );
  }
  ticks.push(
    s('text', { class: 'axis-title', x: width - margin.right, y: height - 4, 'text-anchor': 'end' }, 'Published (UTC)'),
    s(
      'text',
      {
        class: 'axis-title',
        x: 10,
        y: margin.top + innerHeight / 2,
        transform: `rotate(-90 10 ${margin.top + innerHeight / 2})`,
        'text-anchor': 'middle',
      },
      'Score',
    ),
    s('line', { class: 'grid', x1: margin.left, x2: width - margin.right, y1: y(high), y2: y(high) }),
    s('text', { class: 'tick', x: margin.left - 6, y: y(high) + 4, 'text-anchor': 'end' }, formatScore(high, 1)),
    s(
      'text',
      { class: 'tick', x: margin.left - 6, y: y(low), 'text-anchor': 'end' },
      formatScore(low, low === 0 ? 0 : 1),
    ),
  );

  const qx = x(queryTime);
  const queryMark = s(
    'g',
    { class: 'query-time' },
    s('line', { x1: qx.toFixed(1), x2: qx.toFixed(1), y1: margin.top - 12, y2: y(low) }),
    s(
      'text',
      { x: qx.toFixed(1), y: margin.top - 16, 'text-anchor': qx > width - 110 ? 'end' : qx < 110 ? 'start' : 'middle' },
      `as of ${formatTime(queryTime)}`,
    ),
  );

  // Rank numbers above the points, best ranks first; one that would overlap a placed one is left
  // out (the point's own label and the list below still say it).
  /** @type {{ x: number, y: number }[]} */
  const placed = [];
  const points = items.map((item, i) => {
    const t = Date.parse(item.published_at);
    const cx = x(Number.isFinite(t) ? t : lo);
    const cy = y(Number.isFinite(item.score) ? item.score : low);
    const showRank = !placed.some((p) => Math.abs(p.x - cx) < 14 && Math.abs(p.y - cy) < 12);
    if (showRank) placed.push({ x: cx, y: cy });
    const label = `Item ${i + 1}, ${item.kind}, published ${formatTime(item.published_at)}, score ${formatScore(item.score, 3)}: ${item.text}`;
    const shape =
      item.kind === 'chunk'
        ? s('rect', { x: (cx - 5.5).toFixed(1), y: (cy - 5.5).toFixed(1), width: 11, height: 11, rx: 2 })
        : s('circle', { cx: cx.toFixed(1), cy: cy.toFixed(1), r: 6.5 });
    const link = s(
      'a',
      {
        href: `#ask-item-${i + 1}`,
        class: `axis-point kind-${item.kind === 'chunk' ? 'chunk' : 'interaction'}`,
        'aria-label': label,
        'data-item-id': item.id,
        'data-index': i,
      },
      shape,
      showRank
        ? s(
            'text',
            {
              class: 'point-rank',
              x: cx.toFixed(1),
              y: (cy - 10).toFixed(1),
              'text-anchor': 'middle',
              'aria-hidden': 'true',
            },
            String(i + 1),
          )
        : null,
    );
    /** @param {boolean} show */
    const toggle = (show) => showTip(container, tip, show ? { item, index: i, cx, cy, width } : null);
    link.addEventListener('mouseenter', () => toggle(true));
    link.addEventListener('mouseleave', () => toggle(false));
    link.addEventListener('focus', () => toggle(true));
    link.addEventListener('blur', () => toggle(false));
    return link;
  });

  const svg = s(
    'svg',
    {
      class: 'axis-svg',
      role: 'group',
      'aria-label': `${items.length} retrieved items by publication time (UTC) and score; the query time ${formatTime(queryTime)} is marked`,
      viewBox: `0 0 ${width} ${height}`,
      width,
      height,
    },
    s('g', { class: 'axis', 'aria-hidden': 'true' }, ...ticks),
    s('g', { 'aria-hidden': 'true' }, queryMark),
    s('g', { class: 'points' }, ...points),
  );
  container.replaceChildren(svg);
  tip.hidden = true;
}

/**
 * Places the tip box next to a point (positions go through the CSSOM, which a strict
 * Content-Security-Policy allows, unlike style attributes).
 * @param {HTMLElement} container
 * @param {HTMLElement} tip
 * @param {{ item: AxisItem, index: number, cx: number, cy: number, width: number } | null} at
 */
function showTip(container, tip, at) {
  if (!at) {
    tip.hidden = true;
    return;
  }
  tip.replaceChildren();
  const head = document.createElement('strong');
  head.textContent = `[${at.index + 1}] ${formatTime(at.item.published_at)} · ${at.item.kind} · score ${formatScore(at.item.score, 3)}`;
  const body = document.createElement('span');
  body.textContent = at.item.text.length > 280 ? `${at.item.text.slice(0, 277)}…` : at.item.text;
  tip.append(head, body);
  tip.hidden = false;
  const tipWidth = Math.min(320, at.width - 16);
  tip.style.width = `${tipWidth}px`;
  const left = Math.min(Math.max(8, at.cx - tipWidth / 2), at.width - tipWidth - 8);
  tip.style.left = `${container.offsetLeft + left}px`;
  tip.style.top = `${container.offsetTop + at.cy + 14}px`;
}
