/**
 * Live spike alerts: the current episodes from `GET /v1/spikes`, then every new alert state from
 * the server-sent events of `GET /v1/spikes/stream`. The stream is opened before the list is read
 * and its events are held until the list is in, so nothing that happens in between is missed (an
 * alert already in the list changes nothing when it is applied again).
 */
import { ApiError, apiKey, apiUrl, describeError, getJson } from './api.js';
import {
  byId,
  externalLink,
  formatCount,
  formatDay,
  formatScore,
  formatTime,
  h,
  hostOf,
  reducedMotion,
  s,
  safeHref,
  showError,
  timeElement,
  toDate,
} from './dom.js';

/**
 * @typedef {{ bucket_start: string, count: number }} BucketCount
 * @typedef {{ id: string, entity_id: string, entity_name: string, entity_type?: string, granularity: string,
 *   state: 'STARTED' | 'ONGOING' | 'ENDED', window_start: string, window_end: string, observed: number,
 *   baseline_mean: number, baseline_std: number, threshold: number, score: number, rule?: string,
 *   counts?: BucketCount[], article_ids?: string[], urls?: string[],
 *   first_interactions?: { t: string, text: string }[], detected_at: string, episode_start?: string | null }} Alert
 * @typedef {{ id: string, entity_id: string, entity_name: string, granularity: string, open: boolean,
 *   started_at: string, ended_at: string | null, peak_observed: number, peak_score: number | null, latest: Alert }} Episode
 * @typedef {{ entity_id: string, entity_name: string, entity_type: string, relation: string }} StoryMember
 * @typedef {{ rank: number, id: string, entity_id: string, entity_name: string, entity_type: string,
 *   significance: number, articles: number, observed: number, expected: number, delivered: boolean,
 *   open: boolean, members: StoryMember[], urls: string[] }} Story
 * @typedef {{ date: string, budget: { perDay: number }, totals: { stories: number, above_bar: number,
 *   generic: number }, stories: Story[], developing: Story[] }} Digest
 */

const STATE_LABEL = { STARTED: 'Started', ONGOING: 'Ongoing', ENDED: 'Ended' };
const MAX_EPISODES = 200;

/**
 * An episode as the list shows it, from a live alert and what was known of it before.
 * @param {Alert} alert
 * @param {Episode | undefined} known
 * @returns {Episode}
 */
export function applyAlert(alert, known) {
  if (known) {
    // A late ONGOING never reopens an ended episode, and an older window never replaces a newer one.
    if (known.latest.state === 'ENDED' && alert.state !== 'ENDED') return known;
    if (alert.state !== 'ENDED' && Date.parse(alert.window_end) < Date.parse(known.latest.window_end)) return known;
  }
  const ended = alert.state === 'ENDED';
  return {
    id: alert.id,
    entity_id: alert.entity_id,
    entity_name: alert.entity_name,
    granularity: alert.granularity,
    open: !ended,
    started_at: known?.started_at ?? alert.episode_start ?? alert.window_start,
    ended_at: ended ? alert.window_end : null,
    peak_observed: ended ? (known?.peak_observed ?? 0) : Math.max(known?.peak_observed ?? 0, alert.observed),
    peak_score: ended ? (known?.peak_score ?? null) : Math.max(known?.peak_score ?? -Infinity, alert.score),
    latest: alert,
  };
}

/**
 * The observed window in words: whole days for day buckets, times for hours (the end is exclusive).
 * @param {Alert} alert
 */
export function windowText(alert) {
  const start = toDate(alert.window_start);
  const end = toDate(alert.window_end);
  if (!start || !end) return '—';
  if (alert.granularity === 'DAY') {
    const last = formatDay(end.getTime() - 1);
    const first = formatDay(start.getTime());
    return first === last ? first : `${first} – ${last}`;
  }
  return `${formatTime(start.getTime())} – ${formatTime(end.getTime())}`;
}

/**
 * A tiny chart of the alert's per-bucket counts; decorative (the numbers are in the text).
 * @param {BucketCount[]} counts
 */
function sparkline(counts) {
  const width = 100;
  const height = 30;
  const max = Math.max(1, ...counts.map((c) => c.count));
  const step = width / Math.max(1, counts.length);
  const bars = counts.map((c, i) => {
    const barHeight = Math.max(1, (c.count / max) * (height - 2));
    return s('rect', {
      x: (i * step + step * 0.1).toFixed(1),
      y: (height - barHeight).toFixed(1),
      width: Math.max(1, step * 0.8).toFixed(1),
      height: barHeight.toFixed(1),
    });
  });
  return s(
    'svg',
    { class: 'sparkline', viewBox: `0 0 ${width} ${height}`, width, height, 'aria-hidden': 'true', focusable: 'false' },
    ...bars,
  );
}

/**
 * One story of the digest: its rank, lead name, significance and volume, the other names folded
 * into it, and its first source.
 * @param {Story} story
 */
export function renderStory(story) {
  const others = (story.members ?? []).filter((m) => m.entity_id !== story.entity_id);
  const url = (story.urls ?? []).map(safeHref).find((u) => u !== null);
  return h(
    'li',
    { class: 'spike-card digest-story', 'data-story-id': story.id, 'data-rank': String(story.rank) },
    h(
      'div',
      { class: 'spike-top' },
      h('span', { class: 'badge badge-plain' }, `#${story.rank}`),
      h(
        'button',
        {
          type: 'button',
          class: 'entity-link',
          'data-entity-id': story.entity_id,
          'data-entity-name': story.entity_name,
          'data-entity-type': story.entity_type ?? null,
          'aria-label': `Show ${story.entity_name}`,
        },
        story.entity_name,
      ),
      story.delivered ? h('span', { class: 'badge state-started' }, 'Pushed') : null,
    ),
    h(
      'dl',
      { class: 'spike-stats' },
      h('div', {}, h('dt', {}, 'significance'), h('dd', {}, formatScore(story.significance, 1))),
      h('div', {}, h('dt', {}, 'articles'), h('dd', {}, formatCount(story.articles))),
      h('div', {}, h('dt', {}, 'expected'), h('dd', {}, formatScore(story.expected, 1))),
    ),
    others.length > 0
      ? h('p', { class: 'meta story-members' }, `with ${others.map((m) => m.entity_name).join(', ')}`)
      : null,
    url ? h('p', { class: 'meta' }, externalLink(url, hostOf(url), { title: url })) : null,
  );
}

export class SpikePanel {
  /**
   * @param {(entity: { id: string, name: string, type?: string }) => void} onSelectEntity
   * @param {(alert: Alert) => void} [onLiveAlert] every new alert state after the list was loaded
   */
  constructor(onSelectEntity, onLiveAlert = () => undefined) {
    this.onSelectEntity = onSelectEntity;
    this.onLiveAlert = onLiveAlert;
    this.list = /** @type {HTMLOListElement} */ (byId('spike-list'));
    this.error = byId('spikes-error');
    this.empty = byId('spikes-empty');
    this.connection = byId('spike-connection');
    this.announcer = byId('spike-announcer');
    this.filter = /** @type {HTMLSelectElement} */ (byId('spike-show'));
    /** @type {Map<string, Episode>} */
    this.episodes = new Map();
    /** Episode ids, top first. @type {string[]} */
    this.order = [];
    /** @type {EventSource | null} */
    this.source = null;
    /** Alerts that arrived before the list was loaded. @type {Alert[] | null} */
    this.pending = null;
    this.retryTimer = 0;
    this.digestList = /** @type {HTMLOListElement} */ (byId('spike-digest'));
    this.digestSummary = byId('spike-digest-summary');
    this.digestDate = /** @type {HTMLInputElement} */ (byId('spike-digest-date'));
    this.digestTimer = 0;
    /** Whether the reader picked the digest's day; until then it follows the latest day. */
    this.digestPicked = false;
    this.digestDate.addEventListener('change', () => {
      this.digestPicked = this.digestDate.value !== '';
      void this.loadDigest(this.pickedDay());
    });
    this.filter.addEventListener('change', () => this.render());
    this.digestList.addEventListener('click', (event) => this.selectFrom(event));
    this.list.addEventListener('click', (event) => {
      const target = /** @type {HTMLElement} */ (event.target);
      const button = target.closest('button[data-entity-id]');
      if (!(button instanceof HTMLButtonElement)) return;
      this.onSelectEntity({
        id: button.dataset.entityId ?? '',
        name: button.dataset.entityName ?? button.textContent ?? '',
        ...(button.dataset.entityType ? { type: button.dataset.entityType } : {}),
      });
    });
  }

  /** The day the reader picked for the digest, or undefined for the latest. */
  pickedDay() {
    return this.digestPicked && this.digestDate.value ? this.digestDate.value : undefined;
  }

  /** @param {Event} event a click in a list: an entity button selects the entity */
  selectFrom(event) {
    const target = /** @type {HTMLElement} */ (event.target);
    const button = target.closest('button[data-entity-id]');
    if (!(button instanceof HTMLButtonElement)) return;
    this.onSelectEntity({
      id: button.dataset.entityId ?? '',
      name: button.dataset.entityName ?? button.textContent ?? '',
      ...(button.dataset.entityType ? { type: button.dataset.entityType } : {}),
    });
  }

  /**
   * The day's stories within the alert budget, ranked (the default view): the latest day with
   * stories unless a day is picked.
   * @param {string} [date] YYYY-MM-DD
   */
  async loadDigest(date) {
    try {
      /** @type {Digest} */
      const digest = await getJson('v1/spikes/digest', date ? { date } : {});
      if (!date) this.digestDate.value = digest.date;
      this.renderDigest(digest);
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) return;
      this.digestSummary.textContent = `The digest could not be loaded: ${describeError(error)}`;
    }
  }

  /** @param {Digest} digest */
  renderDigest(digest) {
    const stories = Array.isArray(digest.stories) ? digest.stories : [];
    const t = digest.totals ?? { stories: 0, above_bar: 0, generic: 0 };
    this.digestSummary.textContent =
      stories.length === 0
        ? `${digest.date}: no story above the bar.`
        : `${digest.date}: ${stories.length} of ${t.above_bar} stories above the bar, most significant first (budget ${digest.budget?.perDay ?? stories.length} a day).`;
    this.digestList.replaceChildren(...stories.map((story) => renderStory(story)));
  }

  /** (Re)loads the list and follows the stream. */
  async start() {
    this.stop();
    this.pending = [];
    this.connect();
    void this.loadDigest(this.pickedDay());
    try {
      const data = await getJson('v1/spikes', { state: 'all', limit: 50 });
      /** @type {Episode[]} */
      const spikes = Array.isArray(data.spikes) ? data.spikes : [];
      this.episodes = new Map(spikes.map((e) => [e.id, e]));
      this.order = spikes.map((e) => e.id);
      showError(this.error, null);
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) {
        this.stop();
        this.setConnection('closed', 'Waiting for an API key');
        this.empty.textContent = 'Alerts appear here once an API key is given.';
        this.empty.hidden = false;
        return;
      }
      showError(this.error, `Spike alerts could not be loaded: ${describeError(error)}`);
    }
    const held = this.pending ?? [];
    this.pending = null;
    for (const alert of held) this.apply(alert, false);
    this.render();
  }

  stop() {
    window.clearTimeout(this.retryTimer);
    window.clearTimeout(this.digestTimer);
    this.source?.close();
    this.source = null;
  }

  connect() {
    const key = apiKey();
    const url = apiUrl('v1/spikes/stream', key ? { access_token: key } : {});
    const source = new EventSource(url);
    this.source = source;
    this.setConnection('connecting', 'Connecting…');
    source.addEventListener('open', () => this.setConnection('live', 'Live'));
    source.addEventListener('spike', (event) => {
      /** @type {Alert} */
      let alert;
      try {
        alert = JSON.parse(/** @type {MessageEvent<string>} */ (event).data);
      } catch {
        return;
      }
      if (this.pending) this.pending.push(alert);
      else this.apply(alert, true);
    });
    // A story delivered within the budget changes the digest: reloaded once things settle.
    source.addEventListener('story', () => {
      window.clearTimeout(this.digestTimer);
      this.digestTimer = window.setTimeout(() => void this.loadDigest(this.pickedDay()), 500);
    });
    source.addEventListener('error', () => {
      if (source.readyState === EventSource.CONNECTING) {
        // The browser reconnects by itself and sends Last-Event-ID, so no alert is lost.
        this.setConnection('reconnecting', 'Reconnecting…');
        return;
      }
      // Closed for good (a 401, or an answer that was not a stream): find out why, then retry.
      source.close();
      this.setConnection('reconnecting', 'Disconnected; retrying…');
      this.retryTimer = window.setTimeout(() => void this.probe(), 5000);
    });
  }

  /** After the stream closed: a 401 means a key is needed (the page asks); anything else, try again. */
  async probe() {
    try {
      await getJson('v1/spikes', { state: 'open', limit: 1 });
      void this.start();
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) {
        this.setConnection('closed', 'Waiting for an API key');
        return;
      }
      this.retryTimer = window.setTimeout(() => void this.probe(), 10_000);
    }
  }

  /**
   * @param {'connecting' | 'live' | 'reconnecting' | 'closed'} state
   * @param {string} text
   */
  setConnection(state, text) {
    this.connection.dataset.state = state;
    this.connection.textContent = text;
  }

  /**
   * @param {Alert} alert
   * @param {boolean} live announce it and move it to the top
   */
  apply(alert, live) {
    if (!alert || typeof alert.id !== 'string') return;
    const known = this.episodes.get(alert.id);
    const next = applyAlert(alert, known);
    if (next === known) return;
    this.episodes.set(alert.id, next);
    if (live || !known) {
      this.order = [alert.id, ...this.order.filter((id) => id !== alert.id)];
    }
    if (this.order.length > MAX_EPISODES) {
      for (const id of this.order.splice(MAX_EPISODES)) this.episodes.delete(id);
    }
    if (!live) return;
    this.render(alert.id);
    this.announce(alert);
    this.onLiveAlert(alert);
  }

  /** @param {Alert} alert */
  announce(alert) {
    const what = alert.state === 'STARTED' ? 'New spike' : alert.state === 'ENDED' ? 'Spike ended' : 'Spike continues';
    const text = `${what}: ${alert.entity_name}, ${formatCount(alert.observed)} mentions in the window (threshold ${formatScore(alert.threshold, 1)}, score ${formatScore(alert.score, 1)}).`;
    // Cleared first so that the same words twice are still announced twice.
    this.announcer.textContent = '';
    window.setTimeout(() => {
      this.announcer.textContent = text;
    }, 50);
  }

  /** @param {string} [freshId] the episode that just changed, highlighted */
  render(freshId) {
    const openOnly = this.filter.value === 'open';
    const episodes = this.order
      .map((id) => this.episodes.get(id))
      .filter((e) => e !== undefined && (!openOnly || e.open));
    const items = episodes.map((episode) =>
      this.renderEpisode(/** @type {Episode} */ (episode), episode?.id === freshId),
    );
    this.list.replaceChildren(...items);
    this.empty.hidden = items.length > 0;
    this.empty.textContent = openOnly && this.episodes.size > 0 ? 'No open spike episodes.' : 'No spike episodes yet.';
  }

  /**
   * @param {Episode} episode
   * @param {boolean} fresh
   */
  renderEpisode(episode, fresh) {
    const alert = episode.latest;
    const state = alert.state in STATE_LABEL ? alert.state : 'ONGOING';
    const granularity = String(episode.granularity).toLowerCase();
    const urls = (alert.urls ?? []).map(safeHref).filter((u) => u !== null);
    const interactions = alert.first_interactions ?? [];
    const sources =
      urls.length + interactions.length > 0
        ? h(
            'details',
            { class: 'spike-sources' },
            h(
              'summary',
              {},
              `${urls.length} source${urls.length === 1 ? '' : 's'}${interactions.length > 0 ? `, ${interactions.length} interactions` : ''}`,
            ),
            urls.length > 0
              ? h(
                  'ul',
                  { class: 'source-list' },
                  ...urls.slice(0, 8).map((u) => h('li', {}, externalLink(u, hostOf(u), { title: u }))),
                )
              : null,
            interactions.length > 0
              ? h(
                  'ul',
                  { class: 'interaction-list' },
                  ...interactions.slice(0, 5).map((i) => h('li', {}, timeElement(i.t), ' ', i.text)),
                )
              : null,
          )
        : null;
    const item = h(
      'li',
      {
        class: `spike-card${fresh && !reducedMotion() ? ' fresh' : ''}${fresh ? ' is-new' : ''}`,
        'data-episode-id': episode.id,
        'data-state': state,
      },
      h(
        'div',
        { class: 'spike-top' },
        h(
          'button',
          {
            type: 'button',
            class: 'entity-link',
            'data-entity-id': episode.entity_id,
            'data-entity-name': episode.entity_name,
            'data-entity-type': alert.entity_type ?? null,
            'aria-label': `Show ${episode.entity_name}`,
          },
          episode.entity_name,
        ),
        h(
          'span',
          { class: `badge state-${state.toLowerCase()}` },
          STATE_LABEL[/** @type {keyof typeof STATE_LABEL} */ (state)],
        ),
        h('span', { class: 'badge badge-plain' }, `by ${granularity === 'hour' ? 'hour' : 'day'}`),
      ),
      h(
        'div',
        { class: 'spike-body' },
        h(
          'dl',
          { class: 'spike-stats' },
          h('div', {}, h('dt', {}, 'mentions'), h('dd', {}, formatCount(alert.observed))),
          h('div', {}, h('dt', {}, 'threshold'), h('dd', {}, formatScore(alert.threshold, 1))),
          h('div', {}, h('dt', {}, 'score'), h('dd', {}, formatScore(alert.score, 1))),
        ),
        Array.isArray(alert.counts) && alert.counts.length > 1 ? sparkline(alert.counts) : null,
      ),
      h(
        'p',
        { class: 'spike-window meta' },
        alert.entity_type ? `${alert.entity_type.charAt(0)}${alert.entity_type.slice(1).toLowerCase()} · ` : '',
        'window ',
        h('span', { class: 'nowrap' }, windowText(alert)),
        h('br'),
        'Detected ',
        timeElement(alert.detected_at),
        episode.open ? '' : ' · ended',
      ),
      sources,
    );
    return item;
  }
}
