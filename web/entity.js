/**
 * The entity view: a search box with autocomplete (an ARIA 1.2 combobox over `GET /v1/entities`),
 * then for the chosen entity its mentions per day with its spike episodes, its story (the events of
 * the event graph, each with the sources that reported it) and its timeline of interactions.
 */
import { describeError, getJson, isAbort, unlessAborted } from './api.js';
import { DAY_MS, fillBuckets, fillMentionsTable, renderMentionsChart } from './chart.js';
import { windowText } from './spikes.js';
import {
  byId,
  externalLink,
  formatCount,
  formatDay,
  formatScore,
  h,
  hostOf,
  reducedMotion,
  safeHref,
  showError,
  timeElement,
  toDate,
} from './dom.js';

/**
 * @typedef {{ id: string, name: string, type?: string, aliases?: string[], mentions?: number,
 *   first_seen?: string | null, last_seen?: string | null }} Entity
 */

const SEARCH_DELAY_MS = 200;
/** The chart shows up to this much history before the entity's last mention. */
const CHART_SPAN_MS = 90 * DAY_MS;
const MIN_SPAN_MS = 30 * DAY_MS;

/**
 * The chart's period: up to 90 days ending on the day of the last mention (or now), not starting
 * long before the first one, and at least 30 days so a new entity still has context.
 * @param {Entity} entity
 * @param {number} now
 * @param {number | null} latestSpikeEnd
 */
export function chartPeriod(entity, now, latestSpikeEnd) {
  const lastSeen = toDate(entity.last_seen)?.getTime() ?? latestSpikeEnd ?? now;
  const to = Math.floor(Math.min(lastSeen, now) / DAY_MS) * DAY_MS + DAY_MS - 1;
  const firstSeen = toDate(entity.first_seen)?.getTime();
  let from = to + 1 - CHART_SPAN_MS;
  if (firstSeen !== undefined) from = Math.max(from, Math.floor(firstSeen / DAY_MS) * DAY_MS - 7 * DAY_MS);
  from = Math.min(from, to + 1 - MIN_SPAN_MS);
  return { from, to };
}

/**
 * One entry of a dated list (the story, the timeline): its time, its text and a line of meta.
 * @param {string | number | null | undefined} time
 * @param {string | null | undefined} text
 * @param {...(string | Node)} meta
 */
function datedEntry(time, text, ...meta) {
  return h(
    'li',
    { class: 'timeline-item' },
    h('div', { class: 'timeline-date' }, timeElement(time)),
    h(
      'div',
      { class: 'timeline-body' },
      h('p', { class: 'timeline-text' }, String(text ?? '')),
      h('p', { class: 'meta' }, ...meta),
    ),
  );
}

export class EntityPanel {
  constructor() {
    this.form = /** @type {HTMLFormElement} */ (byId('entity-form'));
    this.input = /** @type {HTMLInputElement} */ (byId('entity-q'));
    this.listbox = byId('entity-options');
    this.searchError = byId('entity-error');
    this.view = byId('entity-view');
    this.heading = byId('entity-name');
    this.meta = byId('entity-meta');
    this.chart = byId('mentions-chart');
    this.caption = byId('mentions-caption');
    this.chartError = byId('mentions-error');
    this.table = /** @type {HTMLTableElement} */ (byId('mentions-table'));
    this.episodesList = byId('entity-episodes');
    this.story = byId('story');
    this.storyError = byId('story-error');
    this.storyEmpty = byId('story-empty');
    this.timeline = byId('timeline');
    this.timelineError = byId('timeline-error');
    this.timelineEmpty = byId('timeline-empty');
    /** @type {Entity[]} */
    this.options = [];
    this.active = -1;
    this.searchTimer = 0;
    /** @type {AbortController | null} */
    this.searching = null;
    /** @type {AbortController | null} */
    this.loading = null;
    /** @type {Entity | null} */
    this.current = null;
    /** @type {Parameters<typeof renderMentionsChart>[1] | null} */
    this.chartData = null;

    this.input.addEventListener('input', () => this.scheduleSearch());
    this.input.addEventListener('keydown', (event) => this.onKey(event));
    this.input.addEventListener('blur', () => window.setTimeout(() => this.close(), 150));
    this.listbox.addEventListener('mousedown', (event) => event.preventDefault());
    this.listbox.addEventListener('click', (event) => {
      const option = /** @type {HTMLElement} */ (event.target).closest('[role="option"]');
      if (option instanceof HTMLElement) this.choose(Number(option.dataset.index));
    });
    this.form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.submit();
    });
    let frame = 0;
    new ResizeObserver(() => {
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => {
        if (this.chartData && !this.view.hidden) renderMentionsChart(this.chart, this.chartData);
      });
    }).observe(this.chart);
  }

  scheduleSearch() {
    window.clearTimeout(this.searchTimer);
    const text = this.input.value.trim();
    if (text === '') {
      this.close();
      return;
    }
    this.searchTimer = window.setTimeout(() => void this.search(text), SEARCH_DELAY_MS);
  }

  /**
   * @param {string} text
   * @returns {Promise<Entity[] | null>} null when a newer search replaced this one
   */
  async search(text) {
    this.searching?.abort();
    const controller = new AbortController();
    this.searching = controller;
    try {
      const data = await getJson('v1/entities', { q: text, limit: 10 }, { signal: controller.signal });
      if (controller.signal.aborted) return null;
      showError(this.searchError, null);
      /** @type {Entity[]} */
      const entities = Array.isArray(data.entities) ? data.entities : [];
      this.showOptions(entities);
      return entities;
    } catch (error) {
      if (isAbort(error)) return null;
      this.close();
      showError(this.searchError, `Entity search failed: ${describeError(error)}`);
      return [];
    }
  }

  /** @param {Entity[]} entities */
  showOptions(entities) {
    this.options = entities;
    this.active = -1;
    this.input.removeAttribute('aria-activedescendant');
    if (document.activeElement !== this.input) {
      this.close();
      return;
    }
    const items =
      entities.length === 0
        ? [
            h(
              'li',
              { class: 'combo-empty', role: 'option', 'aria-disabled': 'true', 'aria-selected': 'false' },
              'No matching entity',
            ),
          ]
        : entities.map((entity, i) =>
            h(
              'li',
              {
                id: `entity-option-${i}`,
                role: 'option',
                'aria-selected': 'false',
                'data-index': i,
                class: 'combo-option',
              },
              h('span', { class: 'option-name' }, entity.name),
              h(
                'span',
                { class: 'option-meta' },
                [
                  entity.type ? entity.type.toLowerCase() : null,
                  typeof entity.mentions === 'number' ? `${formatCount(entity.mentions)} mentions` : null,
                ]
                  .filter(Boolean)
                  .join(' · '),
              ),
            ),
          );
    this.listbox.replaceChildren(...items);
    this.listbox.hidden = false;
    this.input.setAttribute('aria-expanded', 'true');
  }

  close() {
    this.listbox.hidden = true;
    this.input.setAttribute('aria-expanded', 'false');
    this.input.removeAttribute('aria-activedescendant');
    this.active = -1;
  }

  /** @param {number} index */
  highlight(index) {
    const options = [...this.listbox.querySelectorAll('.combo-option')];
    if (options.length === 0) return;
    this.active = (index + options.length) % options.length;
    options.forEach((option, i) => option.setAttribute('aria-selected', String(i === this.active)));
    const chosen = options[this.active];
    if (chosen) {
      this.input.setAttribute('aria-activedescendant', chosen.id);
      chosen.scrollIntoView({ block: 'nearest' });
    }
  }

  /** @param {KeyboardEvent} event */
  onKey(event) {
    const open = !this.listbox.hidden;
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      if (!open) {
        if (this.options.length > 0) this.showOptions(this.options);
        else this.scheduleSearch();
        return;
      }
      this.highlight(this.active + (event.key === 'ArrowDown' ? 1 : -1));
    } else if (event.key === 'Enter' && open && this.active >= 0) {
      event.preventDefault();
      this.choose(this.active);
    } else if (event.key === 'Escape') {
      if (open) {
        event.preventDefault();
        this.close();
      } else this.input.value = '';
    }
  }

  /** @param {number} index */
  choose(index) {
    const entity = this.options[index];
    if (!entity) return;
    this.input.value = entity.name;
    this.close();
    void this.select(entity);
  }

  /** Enter or "Show" without a highlighted option: the best match of what was typed. */
  async submit() {
    const text = this.input.value.trim();
    if (text === '') {
      showError(this.searchError, 'Type part of an entity name first.');
      this.input.focus();
      return;
    }
    window.clearTimeout(this.searchTimer);
    if (!this.listbox.hidden && this.active >= 0) {
      this.choose(this.active);
      return;
    }
    const found = await this.search(text);
    if (found === null) return;
    this.close();
    if (found.length === 0) {
      showError(this.searchError, `No entity matches “${text}”.`);
      return;
    }
    this.input.value = found[0]?.name ?? text;
    void this.select(/** @type {Entity} */ (found[0]));
  }

  /** Shows an entity again (after an API key was given). */
  reload() {
    if (this.current) void this.select(this.current, false);
  }

  /**
   * @param {Entity} entity
   * @param {boolean} [moveFocus] bring the view into sight and focus its heading (a choice made
   *   elsewhere on the page, e.g. a spike alert)
   */
  async select(entity, moveFocus = false) {
    this.loading?.abort();
    const controller = new AbortController();
    this.loading = controller;
    const { signal } = controller;
    this.current = entity;
    showError(this.searchError, null);
    this.view.hidden = false;
    this.heading.textContent = entity.name;
    this.renderMeta(entity);
    this.chart.classList.add('loading');
    this.chart.setAttribute('aria-busy', 'true');
    if (moveFocus) {
      this.heading.focus({ preventScroll: true });
      this.heading.scrollIntoView({ behavior: reducedMotion() ? 'auto' : 'smooth', block: 'start' });
    }

    const id = encodeURIComponent(entity.id);
    const timeline = this.loadTimeline(id, signal);
    const story = this.loadStory(id, signal);
    try {
      // A spike's entity comes with a name only: its first and last mention set the chart's period.
      const [details, spikes] = await Promise.all([
        entity.last_seen === undefined
          ? unlessAborted(getJson(`v1/entities/${id}`, {}, { signal }), () => null)
          : Promise.resolve(entity),
        unlessAborted(getJson('v1/spikes', { entity: entity.id, state: 'all', limit: 100 }, { signal }), (error) => ({
          spikes: [],
          error,
        })),
      ]);
      const known = { ...entity, ...(details ?? {}) };
      if (details) this.renderMeta(known);
      /** @type {import('./spikes.js').Episode[]} */
      const episodes = (Array.isArray(spikes.spikes) ? spikes.spikes : []).filter(
        (/** @type {import('./spikes.js').Episode} */ e) => e.granularity === 'DAY',
      );
      const bands = episodes.map((e) => ({
        id: e.id,
        start: Date.parse(e.started_at),
        end: Date.parse(e.ended_at ?? e.latest.window_end),
        open: e.open,
        peak: e.peak_observed,
        score: e.peak_score,
      }));
      const latestSpikeEnd = bands.length > 0 ? Math.max(...bands.map((b) => b.end)) : null;
      const period = chartPeriod(known, Date.now(), latestSpikeEnd);
      const mentions = await getJson(
        `v1/entities/${id}/mentions`,
        { from: new Date(period.from).toISOString(), to: new Date(period.to).toISOString(), granularity: 'day' },
        { signal },
      );
      const buckets = fillBuckets(
        Array.isArray(mentions.buckets) ? mentions.buckets : [],
        period.from,
        period.to,
        DAY_MS,
      );
      this.chartData = { entityName: entity.name, buckets, size: DAY_MS, bands };
      const text = renderMentionsChart(this.chart, this.chartData);
      this.caption.textContent = `${text.title}. ${text.description}`;
      fillMentionsTable(this.table, buckets, bands, text.title);
      this.renderEpisodes(episodes);
      showError(
        this.chartError,
        'error' in spikes ? `Spike episodes could not be loaded: ${describeError(spikes.error)}` : null,
      );
    } catch (error) {
      if (isAbort(error)) return;
      this.chartData = null;
      this.chart.replaceChildren();
      this.caption.textContent = '';
      showError(this.chartError, `Mentions could not be loaded: ${describeError(error)}`);
    } finally {
      if (!signal.aborted) {
        this.chart.classList.remove('loading');
        this.chart.removeAttribute('aria-busy');
      }
    }
    await Promise.all([timeline, story]);
  }

  /** @param {Entity} entity */
  renderMeta(entity) {
    const parts = [];
    if (entity.type) parts.push(entity.type.toLowerCase());
    if (typeof entity.mentions === 'number') parts.push(`${formatCount(entity.mentions)} mentions`);
    if (entity.first_seen) parts.push(`first seen ${formatDay(entity.first_seen)}`);
    if (entity.last_seen) parts.push(`last seen ${formatDay(entity.last_seen)}`);
    const aliases = (entity.aliases ?? []).filter((a) => a !== entity.name);
    if (aliases.length > 0) parts.push(`also ${aliases.slice(0, 4).join(', ')}`);
    this.meta.textContent = parts.join(' · ');
  }

  /** @param {import('./spikes.js').Episode[]} episodes */
  renderEpisodes(episodes) {
    this.episodesList.replaceChildren(
      ...(episodes.length === 0
        ? [h('li', { class: 'empty' }, 'No spike episodes by day.')]
        : episodes.map((e) =>
            h(
              'li',
              {},
              h('span', { class: `badge state-${String(e.latest.state).toLowerCase()}` }, e.open ? 'Open' : 'Ended'),
              ` ${formatDay(e.started_at)} – ${e.open ? 'ongoing' : formatDay(Date.parse(e.ended_at ?? e.latest.window_end) - 1)} · peak ${formatCount(e.peak_observed)} mentions · score ${formatScore(e.peak_score, 1)} · latest window ${windowText(e.latest)}`,
            ),
          )),
    );
  }

  /**
   * @param {string} id already URL-encoded
   * @param {AbortSignal} signal
   */
  async loadTimeline(id, signal) {
    this.timeline.setAttribute('aria-busy', 'true');
    try {
      const data = await getJson(`v1/entities/${id}/timeline`, { limit: 50 }, { signal });
      /** @type {any[]} */
      const items = Array.isArray(data.items) ? data.items : [];
      this.timeline.replaceChildren(...items.map((item) => this.renderTimelineItem(item)));
      this.timelineEmpty.hidden = items.length > 0;
      showError(this.timelineError, null);
    } catch (error) {
      if (isAbort(error)) return;
      this.timeline.replaceChildren();
      this.timelineEmpty.hidden = true;
      showError(this.timelineError, `The timeline could not be loaded: ${describeError(error)}`);
    } finally {
      if (!signal.aborted) this.timeline.removeAttribute('aria-busy');
    }
  }

  /**
   * The entity's events, latest first (the API gives them earliest first, as a story reads).
   * @param {string} id already URL-encoded
   * @param {AbortSignal} signal
   */
  async loadStory(id, signal) {
    this.story.setAttribute('aria-busy', 'true');
    try {
      const data = await getJson(`v1/entities/${id}/events`, { limit: 20 }, { signal });
      /** @type {any[]} */
      const events = Array.isArray(data.events) ? [...data.events].reverse() : [];
      this.story.replaceChildren(...events.map((event) => this.renderStoryEvent(event, decodeURIComponent(id))));
      this.storyEmpty.hidden = events.length > 0;
      showError(this.storyError, null);
    } catch (error) {
      if (isAbort(error)) return;
      this.story.replaceChildren();
      this.storyEmpty.hidden = true;
      showError(this.storyError, `The story could not be loaded: ${describeError(error)}`);
    } finally {
      if (!signal.aborted) this.story.removeAttribute('aria-busy');
    }
  }

  /**
   * @param {any} event
   * @param {string} entityId
   */
  renderStoryEvent(event, entityId) {
    /** @type {{ id: string, name: string }[]} */
    const who = Array.isArray(event.who) ? event.who : [];
    const others = who.filter((p) => p.id !== entityId).map((p) => String(p.name));
    /** @type {string[]} */
    const sources = Array.isArray(event.sources) ? event.sources : [];
    const links = sources.flatMap((url) => {
      const href = safeHref(url);
      return href ? [externalLink(href, hostOf(href))] : [];
    });
    const meta = [
      others.length > 0 ? `with ${others.join(', ')}` : null,
      `${formatCount(Number(event.articles) || sources.length)} ${Number(event.articles) === 1 ? 'source' : 'sources'}`,
    ].filter((part) => part !== null);
    return datedEntry(
      event.when,
      event.what,
      `${meta.join(' · ')}${links.length > 0 ? ': ' : ''}`,
      ...links.flatMap((link, i) => (i === 0 ? [link] : [', ', link])),
    );
  }

  /** @param {any} item */
  renderTimelineItem(item) {
    const href = safeHref(item.url);
    const pair =
      item.subject && typeof item.subject.name === 'string'
        ? `${item.subject.name}${item.object && typeof item.object.name === 'string' ? ` → ${item.object.name}` : ''}`
        : null;
    return datedEntry(
      item.published_at,
      item.text,
      pair ? `${pair} · ` : '',
      href ? externalLink(href, `Source: ${hostOf(href)}`) : 'No source link',
    );
  }
}
