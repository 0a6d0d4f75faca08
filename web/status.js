/**
 * The status strip: `GET /v1/status` every few seconds (not while the tab is hidden). Fields are
 * rendered when present and skipped when not, so an older or newer server still shows what it has.
 */
import { ApiError, describeError, getJson } from './api.js';
import { byId, formatClock, formatCount, formatTime, h, num } from './dom.js';

const POLL_MS = 5000;

/** Fields shown by name; any other scalar field of the document is listed after them as it is. */
const KNOWN = new Set([
  'mode',
  'started_at',
  'feed',
  'stages',
  'datastores',
  'entities',
  'spikes',
  'embedder',
  'llm',
  'extractor',
]);

/** What a phone shows before "More status" is pressed. */
const PRIMARY = new Set(['Mode', 'Articles', 'Lag', 'Spikes', 'Updated']);

/**
 * @param {string} label
 * @param {...import('./dom.js').Child} value
 */
function field(label, ...value) {
  return h(
    'div',
    { class: `status-field${PRIMARY.has(label) ? '' : ' secondary'}` },
    h('dt', {}, label),
    h('dd', {}, ...value),
  );
}

/** @param {any} feed */
function feedFields(feed) {
  if (!feed || typeof feed !== 'object') return [];
  const fields = [];
  const kind = typeof feed.kind === 'string' ? feed.kind : null;
  const name = typeof feed.name === 'string' && feed.name !== '' ? feed.name : null;
  if (kind === 'none') {
    fields.push(field('Feed', 'none'));
    return fields;
  }
  fields.push(field('Feed', [kind, name].filter(Boolean).join(': ') || '—'));
  const replayed = num(feed.articles_replayed);
  const total = num(feed.articles_total);
  if (replayed !== null) {
    const text = total ? `${formatCount(replayed)} / ${formatCount(total)}` : formatCount(replayed);
    const done = feed.done === true ? ' (done)' : '';
    const progress =
      total && total > 0
        ? h('progress', { max: total, value: Math.min(replayed, total), 'aria-label': 'Articles replayed' })
        : null;
    fields.push(field('Articles', progress, ` ${text}${done}`));
  }
  const rejected = num(feed.articles_rejected);
  if (rejected) fields.push(field('Rejected', formatCount(rejected)));
  if (feed.position) fields.push(field('Feed position', formatTime(feed.position)));
  return fields;
}

/**
 * @param {any[]} stages
 * @param {boolean} open whether the table was open before this refresh
 */
function stagesField(stages, open) {
  const lags = stages.map((s) => num(s?.lag)).filter((lag) => lag !== null);
  const total = lags.reduce((sum, lag) => sum + lag, 0);
  const dead = stages.reduce((/** @type {number} */ sum, s) => sum + (num(s?.dead_lettered) ?? 0), 0);
  const summary = `${lags.length > 0 ? formatCount(total) : '—'} total · ${stages.length} stages${dead > 0 ? ` · ${formatCount(dead)} dead-lettered` : ''}`;
  const rows = stages.map((s) =>
    h(
      'tr',
      {},
      h('th', { scope: 'row' }, String(s?.stage ?? '?'), s?.running === false ? ' (stopped)' : ''),
      h('td', {}, formatCount(num(s?.lag))),
      h('td', {}, formatCount(num(s?.received))),
      h('td', {}, formatCount(num(s?.sent))),
      h('td', {}, formatCount(num(s?.dead_lettered))),
    ),
  );
  const details = h(
    'details',
    { class: 'stages', id: 'status-stages' },
    h('summary', {}, summary),
    h(
      'div',
      { class: 'table-scroll', tabindex: 0, role: 'group', 'aria-label': 'Per-stage lag and counters' },
      h(
        'table',
        {},
        h('caption', { class: 'visually-hidden' }, 'Per-stage lag and counters'),
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ...['Stage', 'Lag', 'Received', 'Sent', 'Dead-lettered'].map((t) => h('th', { scope: 'col' }, t)),
          ),
        ),
        h('tbody', {}, ...rows),
      ),
    ),
  );
  details.open = open;
  return field('Lag', details);
}

/** @param {any} doc */
export function renderStatus(doc, previouslyOpen = false) {
  const fields = [];
  if (typeof doc.mode === 'string') fields.push(field('Mode', h('span', { class: 'badge badge-mode' }, doc.mode)));
  fields.push(...feedFields(doc.feed));
  if (Array.isArray(doc.stages) && doc.stages.length > 0) fields.push(stagesField(doc.stages, previouslyOpen));
  const stores = doc.datastores;
  if (stores && typeof stores === 'object') {
    if ('chunks' in stores) fields.push(field('Chunks', formatCount(num(stores.chunks))));
    if ('interactions' in stores) fields.push(field('Interactions', formatCount(num(stores.interactions))));
  }
  if (num(doc.entities) !== null) fields.push(field('Entities', formatCount(doc.entities)));
  if (doc.spikes && typeof doc.spikes === 'object') {
    fields.push(field('Spikes', `${formatCount(num(doc.spikes.open))} open / ${formatCount(num(doc.spikes.total))}`));
  }
  if (typeof doc.embedder === 'string') fields.push(field('Embedder', doc.embedder));
  if ('llm' in doc) fields.push(field('LLM', typeof doc.llm === 'string' ? doc.llm : 'none (extractive answers)'));
  if (typeof doc.extractor === 'string') fields.push(field('Extractor', doc.extractor));
  for (const [name, value] of Object.entries(doc)) {
    if (KNOWN.has(name) || value === null || typeof value === 'object') continue;
    fields.push(field(name.replace(/_/g, ' '), String(value)));
  }
  if (typeof doc.started_at === 'string') fields.push(field('Up since', formatTime(doc.started_at)));
  return fields;
}

export class StatusStrip {
  constructor() {
    this.strip = byId('status');
    this.fields = byId('status-fields');
    this.message = byId('status-message');
    this.more = byId('status-more');
    this.more.addEventListener('click', () => {
      const expanded = this.strip.classList.toggle('expanded');
      this.more.setAttribute('aria-expanded', String(expanded));
      this.more.textContent = expanded ? 'Less status' : 'More status';
    });
    /** @type {number | undefined} */
    this.timer = undefined;
    this.stopped = true;
    document.addEventListener('visibilitychange', () => {
      if (!document.hidden && !this.stopped) void this.refresh();
    });
  }

  start() {
    this.stopped = false;
    void this.refresh();
  }

  /** Polling pauses while an API key is missing; `start` resumes it. */
  stop() {
    this.stopped = true;
    window.clearTimeout(this.timer);
  }

  async refresh() {
    window.clearTimeout(this.timer);
    if (this.stopped) return;
    if (document.hidden) {
      this.schedule();
      return;
    }
    try {
      const doc = await getJson('v1/status');
      const details = /** @type {HTMLDetailsElement | null} */ (document.getElementById('status-stages'));
      const hadFocus = details !== null && details.contains(document.activeElement);
      this.fields.replaceChildren(
        ...renderStatus(doc, details?.open ?? false),
        field('Updated', formatClock(Date.now())),
      );
      if (hadFocus) /** @type {HTMLElement | null} */ (document.querySelector('#status-stages summary'))?.focus();
      this.message.hidden = true;
    } catch (error) {
      this.message.hidden = false;
      if (error instanceof ApiError && error.status === 401) {
        this.stop();
        this.message.textContent = 'Status: waiting for an API key.';
        this.message.classList.remove('error');
        return;
      }
      this.message.textContent =
        error instanceof ApiError && error.status === 404
          ? 'Status is not served by this process.'
          : `Status unavailable: ${describeError(error)}`;
      this.message.classList.add('error');
    }
    this.schedule();
  }

  schedule() {
    window.clearTimeout(this.timer);
    if (!this.stopped) this.timer = window.setTimeout(() => void this.refresh(), POLL_MS);
  }
}
