/**
 * The ask box: `GET /v1/ask` with the question, the "as of" date, strategy, store and k. Shows the
 * answer with its [n] markers as links to the cited sources, the retrieved items on a time axis and
 * as a list, the reformulated query and the timings.
 */
import { describeError, getJson, isAbort, ApiError } from './api.js';
import {
  byId,
  externalLink,
  formatScore,
  formatTime,
  h,
  hostOf,
  safeHref,
  showError,
  timeElement,
  toDate,
} from './dom.js';
import { renderTimeAxis } from './time-axis.js';

/**
 * @typedef {{ n: number, id: string, kind: string, url: string | null, published_at: string }} Citation
 * @typedef {{ id: string, kind: string, text: string, published_at: string, url: string | null, score: number,
 *   semantic_score?: number, lexical_score?: number, sentence_score?: number, temporal_score?: number, day_distance?: number, via_entity?: string,
 *   title?: string, passage?: string,
 *   subject?: { name: string }, object?: { name: string } | null }} Item
 */

/**
 * How the question's own time words were read, for people; null when it had none.
 * @param {any} time
 * @returns {string | null}
 */
export function timeReading(time) {
  if (!time || typeof time !== 'object' || typeof time.explanation !== 'string') return null;
  const found = Array.isArray(time.expressions) && time.expressions.length > 0;
  if (!found && !time.recency && !time.event) return null;
  return `${time.explanation}${time.applied === false ? ' (not applied: the request set its own time scope)' : ''}`;
}

/**
 * The answer's text with each [n] that names a citation turned into a link to its source (or, for
 * a source without an address, to the item in the list).
 * @param {string} text
 * @param {Citation[]} citations
 * @param {Item[]} items
 * @returns {Node[]}
 */
export function linkCitations(text, citations, items) {
  const byN = new Map(citations.map((c) => [c.n, c]));
  /** @type {Node[]} */
  const nodes = [];
  let last = 0;
  for (const match of text.matchAll(/\[(\d{1,3})\]/g)) {
    const citation = byN.get(Number(match[1]));
    if (!citation) continue;
    const at = match.index ?? 0;
    if (at > last) nodes.push(document.createTextNode(text.slice(last, at)));
    const href = safeHref(citation.url);
    const itemIndex = items.findIndex((item) => item.id === citation.id);
    const label = `Source ${citation.n}, ${citation.kind} published ${formatTime(citation.published_at)}${href ? ` at ${hostOf(href)}` : ''}`;
    nodes.push(
      href
        ? externalLink(href, `[${citation.n}]`, {
            class: 'cite',
            'aria-label': label,
            title: label,
            'data-n': citation.n,
          })
        : h(
            'a',
            {
              class: 'cite',
              href: `#ask-item-${itemIndex + 1}`,
              'aria-label': label,
              title: label,
              'data-n': citation.n,
            },
            `[${citation.n}]`,
          ),
    );
    last = at + match[0].length;
  }
  if (last < text.length) nodes.push(document.createTextNode(text.slice(last)));
  return nodes;
}

export class AskPanel {
  constructor() {
    this.form = /** @type {HTMLFormElement} */ (byId('ask-form'));
    this.q = /** @type {HTMLInputElement} */ (byId('ask-q'));
    this.date = /** @type {HTMLInputElement} */ (byId('ask-date'));
    this.strategy = /** @type {HTMLSelectElement} */ (byId('ask-strategy'));
    this.store = /** @type {HTMLSelectElement} */ (byId('ask-store'));
    this.hops = /** @type {HTMLSelectElement} */ (byId('ask-hops'));
    this.k = /** @type {HTMLInputElement} */ (byId('ask-k'));
    this.submitButton = /** @type {HTMLButtonElement} */ (byId('ask-submit'));
    this.error = byId('ask-error');
    this.busy = byId('ask-busy');
    this.result = byId('ask-result');
    this.answer = byId('answer');
    this.answerMeta = byId('answer-meta');
    this.citations = byId('citations');
    this.axis = byId('items-axis');
    this.tip = byId('axis-tip');
    this.items = byId('items');
    this.queryDetails = byId('query-details');
    /** @type {AbortController | null} */
    this.asking = null;
    this.waitingForKey = false;
    /** @type {{ items: Item[], queryTime: number } | null} */
    this.axisData = null;
    this.form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.ask();
    });
    let frame = 0;
    new ResizeObserver(() => {
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => {
        if (this.axisData && !this.result.hidden)
          renderTimeAxis(this.axis, this.tip, this.axisData.items, this.axisData.queryTime);
      });
    }).observe(this.axis);
  }

  /** What the form asks for, or the problems to fix first (checked here so the message is ours). */
  params() {
    /** @type {string[]} */
    const problems = [];
    const q = this.q.value.trim();
    if (q === '') problems.push('Type a question.');
    const k = Number(this.k.value);
    if (!Number.isInteger(k) || k < 1 || k > 100) problems.push('Items (k) must be a whole number from 1 to 100.');
    if (this.date.value !== '' && !/^\d{4}-\d{2}-\d{2}$/.test(this.date.value))
      problems.push('The date must be YYYY-MM-DD.');
    return {
      problems,
      params: {
        q,
        date: this.date.value,
        strategy: this.strategy.value,
        store: this.store.value,
        k,
        hops: Number(this.hops.value),
      },
    };
  }

  async ask() {
    const { problems, params } = this.params();
    if (problems.length > 0) {
      showError(this.error, problems.join(' '), problems);
      (problems[0]?.startsWith('Items') ? this.k : this.q).focus();
      return;
    }
    this.asking?.abort();
    const controller = new AbortController();
    this.asking = controller;
    showError(this.error, null);
    this.busy.textContent = 'Asking…';
    this.submitButton.disabled = true;
    const started = performance.now();
    try {
      const data = await getJson('v1/ask', params, { signal: controller.signal });
      this.waitingForKey = false;
      this.render(data, performance.now() - started);
      this.busy.textContent = `Answered with ${Array.isArray(data.items) ? data.items.length : 0} retrieved items.`;
    } catch (error) {
      if (isAbort(error)) return;
      this.waitingForKey = error instanceof ApiError && error.status === 401;
      this.busy.textContent = '';
      // An answer to an earlier question must not pass for the answer to this one.
      this.result.hidden = true;
      this.axisData = null;
      showError(
        this.error,
        `The question could not be answered: ${describeError(error)}`,
        error instanceof ApiError ? error.problems : [],
      );
    } finally {
      if (this.asking === controller) this.submitButton.disabled = false;
    }
  }

  /** Asks again with the same form (after an API key was given), if there was an answer or a 401. */
  reload() {
    if (!this.result.hidden || this.waitingForKey) void this.ask();
  }

  /**
   * @param {any} data
   * @param {number} clientMs
   */
  render(data, clientMs) {
    /** @type {Item[]} */
    const items = Array.isArray(data.items) ? data.items : [];
    /** @type {Citation[]} */
    const citations = Array.isArray(data.citations) ? data.citations : [];
    /** @type {string} */
    const answer = typeof data.answer === 'string' ? data.answer : '';
    this.answer.replaceChildren(
      ...answer
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => h('p', {}, ...linkCitations(line, citations, items))),
    );
    const model = typeof data.model === 'string' ? `Written by ${data.model}` : 'Extractive answer (no LLM)';
    const reading = timeReading(data.time);
    this.answerMeta.textContent =
      `${model}${typeof data.fallback === 'string' ? ` — the LLM was not used: ${data.fallback}` : ''}.` +
      (reading ? ` Time: ${reading}.` : '');

    this.citations.replaceChildren(
      ...citations.map((c) => {
        const href = safeHref(c.url);
        return h(
          'li',
          { value: c.n, id: `citation-${c.n}` },
          timeElement(c.published_at),
          ` · ${c.kind} · `,
          href ? externalLink(href, hostOf(href), { title: href }) : 'no source address',
        );
      }),
    );
    if (citations.length === 0) this.citations.replaceChildren(h('li', { class: 'empty' }, 'No sources cited.'));

    const queryTime = toDate(data.query?.date)?.getTime() ?? Date.now();
    this.axisData = { items, queryTime };
    this.result.hidden = false;
    if (items.length > 0) renderTimeAxis(this.axis, this.tip, items, queryTime);
    else this.axis.replaceChildren(h('p', { class: 'empty' }, 'Nothing was retrieved.'));

    this.items.replaceChildren(...items.map((item, i) => this.renderItem(item, i)));
    this.renderQuery(data, clientMs);
  }

  /**
   * @param {Item} item
   * @param {number} i
   */
  renderItem(item, i) {
    const href = safeHref(item.url);
    const scores = [
      `score ${formatScore(item.score, 3)}`,
      typeof item.semantic_score === 'number' ? `semantic ${formatScore(item.semantic_score, 3)}` : null,
      typeof item.lexical_score === 'number' ? `lexical ${formatScore(item.lexical_score, 2)}` : null,
      typeof item.sentence_score === 'number' ? `sentence ${formatScore(item.sentence_score, 2)}` : null,
      typeof item.temporal_score === 'number' ? `temporal ${formatScore(item.temporal_score, 3)}` : null,
      typeof item.day_distance === 'number'
        ? `${item.day_distance} day${item.day_distance === 1 ? '' : 's'} away`
        : null,
      typeof item.via_entity === 'string' ? `via ${item.via_entity}` : null,
    ].filter(Boolean);
    const pair = item.subject?.name ? `${item.subject.name}${item.object?.name ? ` → ${item.object.name}` : ''}` : null;
    return h(
      'li',
      { id: `ask-item-${i + 1}`, class: 'item', tabindex: -1 },
      h(
        'p',
        { class: 'item-head' },
        h('span', { class: 'rank' }, `${i + 1}`),
        timeElement(item.published_at),
        h('span', { class: `badge kind-${item.kind === 'chunk' ? 'chunk' : 'interaction'}` }, item.kind),
        h('span', { class: 'scores' }, scores.join(' · ')),
      ),
      typeof item.title === 'string' && item.title !== '' ? h('p', { class: 'item-title' }, item.title) : '',
      h('p', { class: 'item-text' }, String(item.text ?? '')),
      // A statement's source passage: the fact asked about is often in the sentence next to it.
      typeof item.passage === 'string' && item.passage !== ''
        ? h('blockquote', { class: 'item-passage' }, item.passage)
        : '',
      h(
        'p',
        { class: 'meta' },
        pair ? `${pair} · ` : '',
        href ? externalLink(href, `Source: ${hostOf(href)}`) : 'No source link',
      ),
    );
  }

  /**
   * @param {any} data
   * @param {number} clientMs
   */
  renderQuery(data, clientMs) {
    const query = data.query ?? {};
    /** @type {[string, string][]} */
    const rows = [];
    if (typeof data.reformulated === 'string') rows.push(['Reformulated', data.reformulated]);
    if (Array.isArray(data.entities) && data.entities.length > 0) {
      rows.push([
        'Linked entities',
        data.entities
          .map((/** @type {any} */ e) => `${e.name}${e.surface && e.surface !== e.name ? ` (“${e.surface}”)` : ''}`)
          .join(', '),
      ]);
    }
    if (query.date) rows.push(['As of', formatTime(query.date)]);
    const reading = timeReading(data.time);
    if (reading) rows.push(['Time words', reading]);
    const settings = ['strategy', 'store', 'fusion', 'per_article', 'k', 'hops', 'constraint', 'window_days']
      .filter((name) => query[name] !== undefined)
      .map((name) => `${name.replace('_', ' ')} ${query[name]}`);
    if (settings.length > 0) rows.push(['Settings', settings.join(' · ')]);
    const timings = data.timings_ms && typeof data.timings_ms === 'object' ? Object.entries(data.timings_ms) : [];
    const serverTotal = timings.reduce((sum, [, ms]) => sum + (typeof ms === 'number' ? ms : 0), 0);
    rows.push([
      'Timings',
      [
        ...timings.map(([step, ms]) => `${step} ${typeof ms === 'number' ? ms.toFixed(1) : '?'} ms`),
        `server ${serverTotal.toFixed(1)} ms`,
        `in the browser ${clientMs.toFixed(0)} ms`,
      ].join(' · '),
    ]);
    this.queryDetails.replaceChildren(
      ...rows.map(([term, value]) => h('div', { class: 'query-row' }, h('dt', {}, term), h('dd', {}, value))),
    );
  }
}
