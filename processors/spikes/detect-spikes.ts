/**
 * Entity spike detection over `entity.mentions` (one Mention per entity per unique chunk, keyed by
 * entity id, so one entity's mentions all arrive on one partition, in order).
 *
 * Counting: per entity, unique chunks per day and per hour of **event time** (the chunk's time),
 * never arrival time. A chunk is counted once per entity however often its mention is redelivered
 * or replayed: chunks are remembered while their buckets can still change.
 *
 * Event time is kept per input partition (each partition is an ordered stream of its entities'
 * mentions). A bucket closes when the partition's latest event time passes its end by the rule's
 * allowed lateness; mentions for a closed bucket are late and are not counted (a bounded allowance,
 * so state stays bounded and a closed bucket's verdict never changes).
 *
 * Also counted: distinct articles per entity and bucket (an article cut into five chunks is one
 * story, not five), and the partition's volume, the sum of those over the partition's entities:
 * the count model reads an entity's articles against it (`spikes/count-model.ts`), and learns how
 * new names start from the partition's entities. Everything a verdict reads is the partition's
 * own, so the verdicts on a partition follow from its ordered mentions alone: the same whatever
 * order partitions are interleaved in (a replica catching up takes them a batch at a time), on
 * one replica or several, before a restart or after. Entities are spread over partitions by key,
 * so each partition's volume is a random share of the feed's and measures the same thing.
 *
 * Alerts: an episode STARTS the moment the current bucket's count is judged a spike (by default
 * the count model's significance reaching its bar; NEON's rolling-sum rule on request). Counts only
 * grow, so an early crossing is final — that is what makes hourly alerting up-to-the-hour. It is
 * updated ONGOING once per closed bucket while it stays a spike (the count model: while the
 * significance stays above a lower bar), and ENDS at the first closed bucket that is not. One
 * STARTED per episode; ids are deterministic. Ranking, budgets and the fold of aliases into one
 * story happen downstream, where every entity's alerts meet (`spikes/alert-desk.ts`).
 *
 * Delivery: at-least-once in, idempotent out. State is written as a per-entity snapshot
 * (`EntitySpikeState`) beside every change, and restored from it; alerts already sent are learnt
 * back from `entity.spikes` itself, so a restart neither forgets an open episode nor repeats a STARTED.
 * Every counted chunk and article keeps the position (input offset) of the mention that counted
 * it: a restarted detector, given positions, tells what its restored state holds of mentions not
 * redelivered yet by position rather than by time, so feeds that deliver out of time order are
 * decided after a restart exactly as the first time.
 */
import { createHash } from 'node:crypto';
import type {
  EntitySpikeState,
  EntityType,
  Mention,
  SpikeAlert,
  SpikeGranularity,
  SpikeState,
} from '../../schemas/records.generated.js';
import { baselineShare, NewcomerTail, ownOverdispersion, surpriseOf, type PastWindow } from './count-model.js';
import {
  BUCKET_MS,
  bucketStart,
  DEFAULT_DAY_RULE,
  DEFAULT_HOUR_RULE,
  DAY_MS,
  describeRule,
  evaluateRule,
  rollingSum,
  type Granularity,
  type RuleVerdict,
  type SpikeRule,
} from './spike-rule.js';

export interface SpikeDetectorOptions {
  /** The daily rule; null turns daily detection off. */
  day: SpikeRule | null;
  /** The hourly rule; null turns hourly detection off. */
  hour: SpikeRule | null;
  /** Contributing articles listed in an alert, newest first. */
  maxAlertArticles: number;
  /** Interactions listed in an alert. */
  maxAlertInteractions: number;
  /** An entity with no count left in any window, no open episode and no mention for this long is forgotten. */
  forgetAfterMs: number;
  /**
   * Whether this detector's own alerts come back to it through `noteSentAlert` (the stage follows
   * entity.spikes). Then an entity is forgotten only once its last alert has come back: an echo
   * arriving after the forget would otherwise bring back an episode that has long ended.
   */
  alertsEchoed: boolean;
  /** Mentions stamped further than this ahead of the wall clock are refused (a broken clock upstream). */
  futureToleranceMs: number;
  /** Wall clock for `detected_at` and the future check; injected by tests. */
  now: () => number;
}

export const DEFAULT_SPIKE_DETECTOR_OPTIONS: SpikeDetectorOptions = {
  day: DEFAULT_DAY_RULE,
  hour: DEFAULT_HOUR_RULE,
  maxAlertArticles: 20,
  maxAlertInteractions: 5,
  forgetAfterMs: 35 * DAY_MS,
  alertsEchoed: false,
  futureToleranceMs: 2 * DAY_MS,
  now: () => Date.now(),
};

export type MentionOutcome = 'counted' | 'duplicate' | 'late' | 'future';

export interface DetectorOutput {
  outcome: MentionOutcome;
  /** New alert states, in the order they happened. */
  alerts: SpikeAlert[];
  /** Snapshots of every entity whose state changed (the changelog records to write). */
  changed: EntitySpikeState[];
  /** Entities forgotten for good (the changelog tombstones to write). */
  forgotten: string[];
}

/**
 * A chunk or article counted for an entity. `position` is where on its partition the mention that
 * counted it was (the input offset; -1 when restored from a version that did not record it): after
 * a restart it tells what the restored state holds of mentions not yet redelivered.
 */
interface CountedItem {
  t: number;
  hourly: boolean;
  position: number;
}

interface ContributingArticle {
  article_id: string;
  url: string | null;
  t: number;
}

interface NotedInteraction {
  id: string;
  t: number;
  text: string;
}

interface EntityState {
  id: string;
  name: string;
  type: EntityType;
  partition: number;
  /** Unique chunks per bucket (NEON's rule). */
  counts: Record<Granularity, Map<number, number>>;
  /** Distinct articles per bucket (the count model). */
  articles: Record<Granularity, Map<number, number>>;
  /** chunk key → its time, whether it was counted by the hour, and the position that counted it. */
  recentChunks: Map<string, CountedItem>;
  /** article key → the same, while its buckets may still change. */
  countedArticles: Map<string, CountedItem>;
  /**
   * Position on the partition of the last mention decided for the entity (-1: unknown, a snapshot
   * of an earlier version): a mention redelivered at or before it is in this state already.
   */
  decidedThrough: number;
  recentArticles: ContributingArticle[];
  interactions: NotedInteraction[];
  episodes: Map<Granularity, SpikeEpisodeState>;
  lastMentionAt: number;
  /** The last alert this detector sent for the entity, until it is read back (`alertsEchoed` only). */
  awaitingEcho?: string;
  /** Event time after which the next prune is due: pruning every mention would cost O(state) each. */
  pruneDueAt: number;
  /**
   * The partition's event time when the entity's restored snapshot was saved: its buckets closed by
   * then are final even while the partition's own time, moved on again by redelivered mentions,
   * is behind it (a redelivered mention there was counted before its chunk was pruned, or was late).
   */
  countedTo?: number;
}

/** The last alert sent for one entity and granularity: whether an episode is open, and what was said. */
interface SpikeEpisodeState {
  granularity: SpikeGranularity;
  spike_id: string;
  state: SpikeState;
  /** Start of the bucket the episode started in. */
  episode_start: number;
  /** Start of the bucket the last state was about. */
  bucket_start: number;
  /**
   * true: the last state was a growth update of the count model within a bucket still filling,
   * not the bucket's final judgement; false: it stands for its bucket (a start, or the bucket's
   * final judgement); absent: read back from entity.spikes, which does not say (see `provisional`).
   */
  growing?: boolean;
  /** Significance of the last state sent (this process only). */
  significance?: number;
}

/**
 * While a bucket fills, an open episode of the count model is updated ONGOING each time its
 * significance passes a whole number above its last state's (p a power of ten smaller): the desk
 * then ranks a story by what it has become, not by the count that first crossed the bar, and a
 * story pushed at significance 2 is pushed as it passes 2 (a step of 1 from the last state would
 * hold one at 1.97 back until 2.97).
 */
function hasGrown(significance: number, last: number): boolean {
  return Math.floor(significance) > Math.floor(last);
}

/** A partition's share of the feed, as the count model reads it. */
interface PartitionFeed {
  /** Distinct (entity, article) pairs per bucket, over the partition's entities. */
  volume: Record<Granularity, Map<number, number>>;
  /** How new names start on the partition, per granularity, and the day it was learnt on. */
  newcomers: Partial<Record<Granularity, { tail: NewcomerTail; day: number }>>;
  /** Sums behind a bucket's expected volume over its closed baseline buckets, memoised. */
  expectedVolumes: Map<string, ClosedVolume>;
  /**
   * Entities restored from snapshots saved ahead of the partition's event time (see
   * `EntityState.countedTo`): until the partition's time catches up, their articles stamped later
   * are in the volume and their counts although this detector has not reached them.
   */
  ahead: Set<string>;
  /** Position of the mention being decided on the partition (-1: none given). */
  position: number;
  /**
   * Times of the counted items restored state holds, by position, from the first not yet passed:
   * the partition's event time at a redelivered mention is the latest of those before it, as it
   * was when the mention came the first time (feeds deliver out of time order). Rebuilt when
   * restored state arrives; dropped once passed.
   */
  replay: { items: { position: number; t: number }[]; next: number } | undefined;
  replayStale: boolean;
}

interface PartitionClock {
  /** Latest event time seen on the partition. */
  latest: number;
  /** Earliest event time counted on the partition. */
  since: number;
  /** Per granularity, the last closed bucket open episodes were judged on (absent: not yet, e.g. after a restore). */
  judged?: Partial<Record<Granularity, number>>;
}

/** What a judgement reads of one entity and its partition, per bucket. */
interface SeenCounts {
  /** The entity's distinct articles (the count model). */
  articles: ReadonlyMap<number, number>;
  /** The entity's unique chunks (NEON's rule). */
  chunks: ReadonlyMap<number, number>;
  /** The partition's volume. */
  volume: ReadonlyMap<number, number>;
}

/** A rule's verdict with what the alert says about it: the method, its significance and the window's articles. */
interface Verdict extends RuleVerdict {
  /** −log10 p of the count under the baseline (NEON's rule: of its score under a normal law). */
  significance: number;
  /** Distinct articles in the window. */
  articles: number;
  /** Buckets in the judged window. */
  window: number;
  /** The count model: the smallest count of the window that would reach the start bar. */
  countAtBar?: () => number;
}

/** −log10 of the upper normal tail of z (Abramowitz & Stegun 7.1.26): NEON's score on the significance scale. */
function normalTailSignificance(z: number): number {
  if (z <= 0) return 0;
  const x = z / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  return -Math.log10(0.5 * poly) + (x * x) / Math.LN10;
}

/** State is pruned at most this often per entity (event time); it may hold this much extra meanwhile. */
const PRUNE_EVERY_MS = 15 * 60_000;

const STATE_RANK: Readonly<Record<SpikeState, number>> = { STARTED: 0, ONGOING: 1, ENDED: 2 };

/** Orders two windows' verdicts: a spike first, then the more significant. */
function rank(verdict: { spike: boolean; significance: number }): number {
  return (verdict.spike ? 1000 : 0) + verdict.significance;
}

/** 48 bits of the chunk id's SHA-256: a collision among one entity's recent chunks is negligible. */
export function chunkKey(chunkId: string): string {
  return createHash('sha256').update(chunkId).digest('hex').slice(0, 12);
}

export function spikeId(entityId: string, granularity: Granularity, episodeStart: number): string {
  const stamp = new Date(episodeStart).toISOString().slice(0, granularity === 'DAY' ? 10 : 13);
  return `spike:${entityId}:${granularity.toLowerCase()}:${stamp}`;
}

/** Day-only dates are stored as 00:00 UTC: such a time says nothing about the hour. */
function hasTimeOfDay(t: number): boolean {
  return t % DAY_MS !== 0;
}

/** Identifies one sent alert state, to recognise it when it is read back. */
function echoKey(alert: Pick<SpikeAlert, 'id' | 'state' | 'window_end' | 'observed'>): string {
  return `${alert.id}/${alert.state}/${alert.window_end}/${alert.observed}`;
}

/**
 * Whether a judgement of the detector's own is newer than what the episode holds: a later bucket,
 * or the same bucket further in the life cycle, or the same bucket's final judgement after a
 * `provisional` state (a growth update does not stand for the bucket's final judgement).
 */
function isNewer(
  alert: { bucket_start: number; state: SpikeState },
  held: SpikeEpisodeState | undefined,
  provisional: boolean,
): boolean {
  if (!held) return true;
  if (alert.bucket_start !== held.bucket_start) return alert.bucket_start > held.bucket_start;
  if (provisional) return true;
  return STATE_RANK[alert.state] > STATE_RANK[held.state];
}

/**
 * Whether an alert read back from entity.spikes says more than what the episode holds: a later
 * bucket, or the same bucket further in the life cycle. The detector's own states come back no
 * newer than what it holds. States known only from entity.spikes (after a restart, or another
 * replica's) are read back in the order they were sent, so there the later of two of the same
 * bucket and life cycle is the newer (a growth update after an earlier one).
 */
function echoIsNewer(echo: SpikeEpisodeState, held: SpikeEpisodeState | undefined): boolean {
  if (!held) return true;
  if (echo.bucket_start !== held.bucket_start) return echo.bucket_start > held.bucket_start;
  if (echo.state !== held.state) return STATE_RANK[echo.state] > STATE_RANK[held.state];
  return held.growing === undefined;
}

export class SpikeDetector {
  private readonly options: SpikeDetectorOptions;
  private readonly entities = new Map<string, EntityState>();
  private readonly byPartition = new Map<number, Set<string>>();
  private readonly clocks = new Map<number, PartitionClock>();
  /** Partitions this instance decides for; null: all (a lone detector). */
  private owned: ReadonlySet<number> | null = null;
  /** Per partition, what the count model reads beside an entity's own counts. */
  private readonly feeds = new Map<number, PartitionFeed>();

  constructor(options: Partial<SpikeDetectorOptions> = {}) {
    this.options = { ...DEFAULT_SPIKE_DETECTOR_OPTIONS, ...options };
    if (!this.options.day && !this.options.hour) throw new Error('at least one of the day and hour rules must be on');
  }

  /** The partitions whose entities this instance decides for; others' state only follows the changelog. */
  setOwnedPartitions(partitions: Iterable<number> | null): void {
    this.owned = partitions === null ? null : new Set(partitions);
  }

  private owns(partition: number): boolean {
    return this.owned === null || partition < 0 || this.owned.has(partition);
  }

  private rules(): [Granularity, SpikeRule][] {
    const rules: [Granularity, SpikeRule][] = [];
    if (this.options.day) rules.push(['DAY', this.options.day]);
    if (this.options.hour) rules.push(['HOUR', this.options.hour]);
    return rules;
  }

  /**
   * Counts one mention that arrived on `partition`, and says what it changed. `position` is where
   * on the partition it was (the input offset, increasing): a stage passes it so that a restart
   * from state saved ahead of its committed offset decides every redelivered mention as the first
   * time. Without positions (a detector fed from memory), a restart falls back on event times,
   * exact only for mentions that arrive in time order.
   */
  offer(mention: Mention, partition: number, position?: number): DetectorOutput {
    const out: DetectorOutput = { outcome: 'counted', alerts: [], changed: [], forgotten: [] };
    const feed = this.feedOf(partition);
    const at = position === undefined || position < 0 ? -1 : position;
    if (mention.t > this.options.now() + this.options.futureToleranceMs) {
      out.outcome = 'future';
      return out;
    }
    feed.position = at;
    const changed = new Set<EntityState>();
    const clock = this.clockFor(partition, mention.t);
    const latest = at < 0 ? mention.t : Math.max(mention.t, this.replayedTime(partition, feed, at));
    if (latest > clock.latest) this.advance(partition, clock, latest, out, changed);

    const entity = this.entityFor(mention, partition);
    out.outcome = this.count(entity, mention, clock, at);
    if (out.outcome === 'counted') changed.add(entity);
    // Saved with the next snapshot: a late or repeated mention redelivered after a restart that
    // did not save it is decided the same way again.
    entity.decidedThrough = Math.max(entity.decidedThrough, at);

    // Evaluate even a duplicate: a redelivered mention must be able to send an alert whose first
    // attempt was lost (the episode state says whether it was sent).
    for (const [granularity, rule] of this.rules()) {
      // The mention's own bucket while it may still be counted: the verdict a mention gets is then
      // the same whether it comes in order or is redelivered after a restart whose state ran ahead.
      const own = bucketStart(mention.t, granularity);
      const bucket = this.isClosed(own, granularity, rule, clock) ? bucketStart(clock.latest, granularity) : own;
      if (this.isOpen(entity, granularity)) {
        const grown = this.growthUpdate(entity, granularity, rule, bucket, clock);
        if (grown) {
          out.alerts.push(grown);
          changed.add(entity);
        }
        continue;
      }
      // Most windows hold fewer mentions than any spike needs: skip the baseline for them.
      if (
        rule.method === 'neon' &&
        rollingSum(entity.counts[granularity], bucket, rule, granularity) < rule.minObserved
      )
        continue;
      if (
        rule.method === 'surprise' &&
        rollingSum(entity.articles[granularity], bucket, rule, granularity) < rule.minArticles
      )
        continue;
      const verdict = this.judge(entity, granularity, rule, bucket, clock, 'start');
      if (!verdict.spike) continue;
      const held = entity.episodes.get(granularity);
      // A closed episode's bucket can not spike again; a new one starts in a later bucket.
      if (held && held.bucket_start >= bucket) continue;
      out.alerts.push(this.transition(entity, granularity, rule, bucket, verdict, 'STARTED', bucket));
      changed.add(entity);
    }
    out.changed = [...changed].map((e) => this.snapshotOf(e));
    return out;
  }

  /** Restores an entity from its changelog snapshot (another replica's, or this one's before a restart). */
  restore(snapshot: EntitySpikeState): void {
    const known = this.entities.get(snapshot.entity_id);
    if (known && known.partition >= 0 && this.owned?.has(snapshot.partition)) {
      // Our own write coming back through the changelog: what we hold is at least as new.
      return;
    }
    const entity: EntityState = {
      id: snapshot.entity_id,
      name: snapshot.entity_name,
      type: snapshot.entity_type,
      partition: snapshot.partition,
      counts: {
        DAY: new Map(snapshot.days.map((b) => [b.bucket_start, b.count])),
        HOUR: new Map(snapshot.hours.map((b) => [b.bucket_start, b.count])),
      },
      articles: {
        DAY: new Map(snapshot.article_days.map((b) => [b.bucket_start, b.count])),
        HOUR: new Map(snapshot.article_hours.map((b) => [b.bucket_start, b.count])),
      },
      recentChunks: new Map(
        snapshot.recent_chunks.map((c) => [c.chunk_key, { t: c.t, hourly: c.hourly, position: c.position }]),
      ),
      countedArticles: new Map(
        snapshot.counted_articles.map((a) => [a.article_key, { t: a.t, hourly: a.hourly, position: a.position }]),
      ),
      decidedThrough: snapshot.decided_through,
      recentArticles: snapshot.recent_articles.map((a) => ({ ...a })),
      interactions: known?.interactions ?? [],
      // What was sent is known from entity.spikes alone: a snapshot may run ahead of its alert.
      episodes: known?.episodes ?? new Map<Granularity, SpikeEpisodeState>(),
      lastMentionAt: snapshot.latest_event_at,
      pruneDueAt: 0,
      countedTo: snapshot.latest_event_at,
    };
    if (known) this.addVolume(known, -1);
    this.addVolume(entity, 1);
    this.put(entity);
    const feed = this.feedOf(entity.partition);
    feed.ahead.add(entity.id);
    feed.replayStale = true;
    // Only where counting began is restored. The changelog may run ahead of the committed offset
    // (snapshots are saved as they stand when written), so its newest event time is not where the
    // redelivered mentions stand: the partition's event time moves on from them, and buckets close,
    // and episodes are judged on them, at the same mentions as the first time.
    const clock = this.clocks.get(snapshot.partition);
    if (!clock)
      this.clocks.set(snapshot.partition, { latest: snapshot.observed_since, since: snapshot.observed_since });
    else clock.since = Math.min(clock.since, snapshot.observed_since);
  }

  /** A tombstone on the changelog: the entity went quiet and was forgotten by its owner. */
  forget(entityId: string): void {
    const entity = this.entities.get(entityId);
    if (!entity || this.owns(entity.partition)) return;
    this.remove(entity);
  }

  /** An alert read back from `entity.spikes`: what was already sent, even if the snapshot is older. */
  noteSentAlert(alert: SpikeAlert): void {
    const size = BUCKET_MS[alert.granularity];
    const episode: SpikeEpisodeState = {
      granularity: alert.granularity,
      spike_id: alert.id,
      state: alert.state,
      episode_start: alert.episode_start ?? alert.window_end - size,
      bucket_start: alert.window_end - size,
      // What it was judged at: growth updates go on from it after a restart as they would have.
      significance: alert.significance,
    };
    // Versioned: the owner's own alerts echo back no newer than what it holds, so they change nothing
    // (an echo of an earlier growth update taken for newer would throw away the growth since).
    let entity = this.entities.get(alert.entity_id);
    if (!entity) {
      entity = this.emptyEntity(alert.entity_id, alert.entity_name, alert.entity_type, -1);
      this.put(entity);
    }
    if (echoIsNewer(episode, entity.episodes.get(alert.granularity))) entity.episodes.set(alert.granularity, episode);
    // Echoes come back in the order they were sent: the last one means every earlier one is in.
    if (entity.awaitingEcho === echoKey(alert)) delete entity.awaitingEcho;
  }

  /** An interaction extracted for an entity: the first ones go into its later alerts. */
  noteInteraction(entityId: string, interaction: NotedInteraction): void {
    const entity = this.entities.get(entityId);
    if (!entity) return;
    if (entity.interactions.some((known) => known.id === interaction.id)) return;
    entity.interactions.push(interaction);
    entity.interactions.sort((a, b) => a.t - b.t || a.id.localeCompare(b.id));
    const horizon = this.horizon(entity.partition);
    entity.interactions = entity.interactions
      .filter((i) => i.t >= horizon)
      .slice(0, this.options.maxAlertInteractions * 4);
  }

  /** Entities currently in an open episode, with the granularity. */
  openEpisodes(): { entityId: string; name: string; granularity: Granularity; spikeId: string; since: number }[] {
    const open: { entityId: string; name: string; granularity: Granularity; spikeId: string; since: number }[] = [];
    for (const entity of this.entities.values()) {
      for (const episode of entity.episodes.values()) {
        if (episode.state !== 'ENDED') {
          open.push({
            entityId: entity.id,
            name: entity.name,
            granularity: episode.granularity,
            spikeId: episode.spike_id,
            since: episode.episode_start,
          });
        }
      }
    }
    return open;
  }

  snapshot(entityId: string): EntitySpikeState | undefined {
    const entity = this.entities.get(entityId);
    return entity ? this.snapshotOf(entity) : undefined;
  }

  size(): { entities: number; partitions: number } {
    return { entities: this.entities.size, partitions: this.clocks.size };
  }

  // ---------------------------------------------------------------------------------------------

  private clockFor(partition: number, t: number): PartitionClock {
    let clock = this.clocks.get(partition);
    if (!clock) {
      clock = { latest: t, since: t };
      this.clocks.set(partition, clock);
    }
    return clock;
  }

  private feedOf(partition: number): PartitionFeed {
    let feed = this.feeds.get(partition);
    if (!feed) {
      feed = {
        volume: { DAY: new Map(), HOUR: new Map() },
        newcomers: {},
        expectedVolumes: new Map(),
        ahead: new Set(),
        position: -1,
        replay: undefined,
        replayStale: false,
      };
      this.feeds.set(partition, feed);
    }
    return feed;
  }

  private emptyEntity(id: string, name: string, type: EntityType, partition: number): EntityState {
    return {
      id,
      name,
      type,
      partition,
      counts: { DAY: new Map(), HOUR: new Map() },
      articles: { DAY: new Map(), HOUR: new Map() },
      recentChunks: new Map(),
      countedArticles: new Map(),
      decidedThrough: -1,
      recentArticles: [],
      interactions: [],
      episodes: new Map(),
      lastMentionAt: 0,
      pruneDueAt: 0,
    };
  }

  private entityFor(mention: Mention, partition: number): EntityState {
    let entity = this.entities.get(mention.entity_id);
    if (!entity) {
      entity = this.emptyEntity(mention.entity_id, mention.name, mention.entity_type, partition);
      this.put(entity);
    } else if (entity.partition !== partition) {
      // Known only from an alert, or the topic was repartitioned: it lives where its mentions arrive.
      this.byPartition.get(entity.partition)?.delete(entity.id);
      this.addVolume(entity, -1);
      entity.partition = partition;
      this.addVolume(entity, 1);
      this.indexPartition(entity);
    }
    entity.name = mention.name;
    entity.type = mention.entity_type;
    return entity;
  }

  private put(entity: EntityState): void {
    const previous = this.entities.get(entity.id);
    if (previous) this.byPartition.get(previous.partition)?.delete(previous.id);
    this.entities.set(entity.id, entity);
    this.indexPartition(entity);
  }

  private indexPartition(entity: EntityState): void {
    let ids = this.byPartition.get(entity.partition);
    if (!ids) {
      ids = new Set();
      this.byPartition.set(entity.partition, ids);
    }
    ids.add(entity.id);
  }

  private remove(entity: EntityState): void {
    this.addVolume(entity, -1);
    this.feeds.get(entity.partition)?.ahead.delete(entity.id);
    this.entities.delete(entity.id);
    this.byPartition.get(entity.partition)?.delete(entity.id);
  }

  /**
   * The latest time of the restored items counted before `position`: where the partition's event
   * time stood when the mention at `position` came the first time, whatever order the feed
   * delivered times in. Rebuilt from the partition's entities after restored state arrived. Items
   * without a position (an earlier version's) take no part: the partition's time then moves on
   * from the redelivered mentions alone.
   */
  private replayedTime(partition: number, feed: PartitionFeed, position: number): number {
    if (feed.replayStale) {
      feed.replayStale = false;
      const items: { position: number; t: number }[] = [];
      for (const id of this.byPartition.get(partition) ?? []) {
        for (const c of this.entities.get(id)?.recentChunks.values() ?? []) {
          if (c.position >= 0) items.push({ position: c.position, t: c.t });
        }
      }
      items.sort((a, b) => a.position - b.position);
      feed.replay = items.length > 0 ? { items, next: 0 } : undefined;
    }
    const replay = feed.replay;
    let latest = Number.NEGATIVE_INFINITY;
    if (!replay) return latest;
    while (replay.next < replay.items.length && replay.items[replay.next]!.position < position) {
      latest = Math.max(latest, replay.items[replay.next]!.t);
      replay.next += 1;
    }
    if (replay.next >= replay.items.length) feed.replay = undefined;
    return latest;
  }

  private isClosed(bucket: number, granularity: Granularity, rule: SpikeRule, clock: PartitionClock): boolean {
    return closedAt(clock.latest, bucket, granularity, rule);
  }

  /** Whether the entity's count in a bucket is final: closed on the partition, or when its restored state was saved. */
  private isFinalFor(
    entity: EntityState,
    bucket: number,
    granularity: Granularity,
    rule: SpikeRule,
    clock: PartitionClock,
  ): boolean {
    // With positions, a redelivered mention the state holds is told by its position (`count`), and
    // the partition's time is where it was the first time: closed on the partition is the rule.
    // Restored without them, a bucket closed when the state was saved is final too.
    return (
      this.isClosed(bucket, granularity, rule, clock) ||
      (entity.decidedThrough < 0 &&
        entity.countedTo !== undefined &&
        closedAt(entity.countedTo, bucket, granularity, rule))
    );
  }

  private count(entity: EntityState, mention: Mention, clock: PartitionClock, position: number): MentionOutcome {
    const key = chunkKey(mention.chunk_id);
    if (entity.recentChunks.has(key)) return 'duplicate';
    // Decided before (in this process, or in the restored state): counted then, or found late.
    // A mention stamped after the restored state's time cannot be one (the input was replaced).
    if (
      position >= 0 &&
      position <= entity.decidedThrough &&
      (entity.countedTo === undefined || mention.t <= entity.countedTo)
    ) {
      return 'duplicate';
    }
    let countedDay = false;
    let countedHour = false;
    const day = this.options.day;
    const hour = this.options.hour;
    if (day) {
      const bucket = bucketStart(mention.t, 'DAY');
      if (!this.isFinalFor(entity, bucket, 'DAY', day, clock)) {
        entity.counts.DAY.set(bucket, (entity.counts.DAY.get(bucket) ?? 0) + 1);
        countedDay = true;
      }
    }
    if (hour && hasTimeOfDay(mention.t)) {
      const bucket = bucketStart(mention.t, 'HOUR');
      if (!this.isFinalFor(entity, bucket, 'HOUR', hour, clock)) {
        entity.counts.HOUR.set(bucket, (entity.counts.HOUR.get(bucket) ?? 0) + 1);
        countedHour = true;
      }
    }
    if (!countedDay && !countedHour) return 'late';
    entity.recentChunks.set(key, { t: mention.t, hourly: countedHour, position });
    // The article's first counted chunk counts the article, in the buckets that chunk was counted in.
    const articleKey = chunkKey(mention.article_id);
    const counted = entity.countedArticles.get(articleKey);
    const articleDay = countedDay && counted === undefined;
    const articleHour = countedHour && !(counted?.hourly ?? false);
    if (articleDay) this.bump(entity, 'DAY', bucketStart(mention.t, 'DAY'));
    if (articleHour) this.bump(entity, 'HOUR', bucketStart(mention.t, 'HOUR'));
    if (articleDay || articleHour) {
      entity.countedArticles.set(articleKey, {
        t: mention.t,
        hourly: articleHour || (counted?.hourly ?? false),
        position: counted?.position ?? position,
      });
    }
    entity.lastMentionAt = Math.max(entity.lastMentionAt, mention.t);
    if (!entity.recentArticles.some((a) => a.article_id === mention.article_id)) {
      // Newest first; mentions mostly arrive in time order, so this is usually an insert at the front.
      const at = entity.recentArticles.findIndex((a) => a.t < mention.t);
      const article = { article_id: mention.article_id, url: mention.url, t: mention.t };
      if (at < 0) entity.recentArticles.push(article);
      else entity.recentArticles.splice(at, 0, article);
      entity.recentArticles.length = Math.min(entity.recentArticles.length, this.options.maxAlertArticles * 3);
    }
    if (clock.latest >= entity.pruneDueAt) this.prune(entity, clock);
    return 'counted';
  }

  private isOpen(entity: EntityState, granularity: Granularity): boolean {
    const episode = entity.episodes.get(granularity);
    return episode !== undefined && episode.state !== 'ENDED';
  }

  /**
   * Moves the partition's event time to `t`: every bucket that closes on the way is final, so open
   * episodes of the partition's entities are re-judged on it, and quiet entities may be forgotten.
   */
  private advance(
    partition: number,
    clock: PartitionClock,
    t: number,
    out: DetectorOutput,
    changed: Set<EntityState>,
  ): void {
    const before = clock.latest;
    clock.latest = t;
    const ids = this.byPartition.get(partition);
    if (!ids || !this.owns(partition)) return;
    for (const [granularity, rule] of this.rules()) {
      const size = BUCKET_MS[granularity];
      const lastClosed = bucketStart(t - rule.allowedLatenessMs, granularity) - size;
      // Only when a bucket closed since the last judgement (or never judged since a restore).
      clock.judged ??= {};
      const judged = clock.judged[granularity];
      if (judged !== undefined && lastClosed <= judged) continue;
      clock.judged[granularity] = lastClosed;
      for (const id of ids) {
        const entity = this.entities.get(id);
        const episode = entity?.episodes.get(granularity);
        if (!entity || !episode || episode.state === 'ENDED') continue;
        // Every closed bucket the episode has not been judged on yet — also one missed before a
        // restart. Past the rolling window every sum is empty, so a long jump judges only its end.
        const horizon = (rule.rollingBuckets + 1) * size;
        const from = Math.max(episode.bucket_start, lastClosed - horizon);
        for (let bucket = from; bucket <= lastClosed; bucket += size) {
          const verdict = this.judge(entity, granularity, rule, bucket, clock, 'continue');
          const state: SpikeState = verdict.spike ? 'ONGOING' : 'ENDED';
          const held = entity.episodes.get(granularity);
          if (
            !held ||
            !isNewer({ bucket_start: bucket, state }, held, this.provisional(entity, held, granularity, rule))
          )
            continue;
          out.alerts.push(this.transition(entity, granularity, rule, bucket, verdict, state, held.episode_start));
          changed.add(entity);
          if (state === 'ENDED') break;
        }
      }
    }
    // Once a day closes, forget entities that have gone quiet, and let go of old volume.
    if (this.options.day && bucketStart(before, 'DAY') !== bucketStart(t, 'DAY')) {
      this.pruneVolume(partition, t);
      for (const id of [...ids]) {
        const entity = this.entities.get(id);
        if (!entity) continue;
        this.prune(entity, clock);
        const quiet =
          entity.counts.DAY.size === 0 &&
          entity.counts.HOUR.size === 0 &&
          ![...entity.episodes.values()].some((e) => e.state !== 'ENDED') &&
          entity.lastMentionAt < t - this.options.forgetAfterMs &&
          entity.awaitingEcho === undefined;
        if (quiet) {
          this.remove(entity);
          changed.delete(entity);
          out.forgotten.push(entity.id);
        }
      }
    }
  }

  /** Oldest event time any retained count, chunk or article may have on this entity's partition. */
  private horizon(partition: number): number {
    const clock = this.clocks.get(partition);
    const latest = clock?.latest ?? 0;
    let keep = 0;
    for (const [granularity, rule] of this.rules()) {
      keep = Math.max(keep, (rule.baselineBuckets + rule.rollingBuckets + 1) * BUCKET_MS[granularity]);
    }
    return latest - keep;
  }

  private prune(entity: EntityState, clock: PartitionClock): void {
    entity.pruneDueAt = clock.latest + PRUNE_EVERY_MS;
    for (const [granularity, rule] of this.rules()) {
      const keepFrom =
        bucketStart(clock.latest, granularity) - (rule.baselineBuckets + rule.rollingBuckets) * BUCKET_MS[granularity];
      for (const bucket of entity.counts[granularity].keys()) {
        if (bucket < keepFrom) entity.counts[granularity].delete(bucket);
      }
      // The partition's volume of a pruned bucket stays: other entities' baselines still read it.
      for (const bucket of entity.articles[granularity].keys()) {
        if (bucket < keepFrom) entity.articles[granularity].delete(bucket);
      }
    }
    // A chunk only needs remembering while one of its buckets may still be counted.
    const lateness = Math.max(...this.rules().map(([g, rule]) => rule.allowedLatenessMs + BUCKET_MS[g]));
    for (const [key, chunk] of entity.recentChunks) {
      if (chunk.t < clock.latest - lateness) entity.recentChunks.delete(key);
    }
    for (const [key, article] of entity.countedArticles) {
      if (article.t < clock.latest - lateness) entity.countedArticles.delete(key);
    }
    const day = this.options.day ?? DEFAULT_DAY_RULE;
    const articlesFrom = clock.latest - (day.rollingBuckets + 1) * DAY_MS - day.allowedLatenessMs;
    entity.recentArticles = entity.recentArticles.filter((a) => a.t >= articlesFrom);
  }

  /**
   * An ONGOING update of an open episode of the count model whose significance has passed a whole
   * number since its last state (`hasGrown`), within the bucket still filling; undefined otherwise.
   */
  private growthUpdate(
    entity: EntityState,
    granularity: Granularity,
    rule: SpikeRule,
    bucket: number,
    clock: PartitionClock,
  ): SpikeAlert | undefined {
    if (rule.method !== 'surprise') return undefined;
    const held = entity.episodes.get(granularity);
    // Known from the detector's own judgement, or from the echo of the last state sent.
    if (!held || held.state === 'ENDED' || held.significance === undefined || held.bucket_start > bucket)
      return undefined;
    const verdict = this.judge(entity, granularity, rule, bucket, clock, 'continue');
    if (!hasGrown(verdict.significance, held.significance)) return undefined;
    const alert = this.transition(entity, granularity, rule, bucket, verdict, 'ONGOING', held.episode_start);
    entity.episodes.get(granularity)!.growing = true;
    return alert;
  }

  /**
   * Whether the held state may be a growth update, so that its bucket's final judgement is still
   * to send. Known for the detector's own states. For one read back from entity.spikes (after a
   * restart): a state about a bucket that had closed by the time the entity's restored snapshot was
   * saved was the final judgement or came before it, and that judgement was sent (the snapshot is
   * saved only once its alerts are acknowledged); otherwise it may have been a growth update, and
   * the final judgement is sent (again, at worst).
   */
  private provisional(
    entity: EntityState,
    held: SpikeEpisodeState,
    granularity: Granularity,
    rule: SpikeRule,
  ): boolean {
    if (held.growing !== undefined) return held.growing;
    return entity.countedTo === undefined || !closedAt(entity.countedTo, held.bucket_start, granularity, rule);
  }

  /** One more article of the entity in a bucket, and in its partition's volume. */
  private bump(entity: EntityState, granularity: Granularity, bucket: number): void {
    const counts = entity.articles[granularity];
    counts.set(bucket, (counts.get(bucket) ?? 0) + 1);
    const volume = this.feedOf(entity.partition).volume[granularity];
    volume.set(bucket, (volume.get(bucket) ?? 0) + 1);
  }

  /** Adds (sign 1) or takes away (−1) an entity's article counts from its partition's volume. */
  private addVolume(entity: EntityState, sign: 1 | -1): void {
    const feed = this.feedOf(entity.partition);
    for (const granularity of ['DAY', 'HOUR'] as const) {
      const volume = feed.volume[granularity];
      for (const [bucket, count] of entity.articles[granularity]) {
        const next = (volume.get(bucket) ?? 0) + sign * count;
        if (next > 0) volume.set(bucket, next);
        else volume.delete(bucket);
      }
    }
  }

  private pruneVolume(partition: number, t: number): void {
    const feed = this.feedOf(partition);
    for (const [granularity, rule] of this.rules()) {
      const keepFrom =
        bucketStart(t, granularity) - (rule.baselineBuckets + 2 * rule.rollingBuckets) * BUCKET_MS[granularity];
      for (const bucket of feed.volume[granularity].keys()) {
        if (bucket < keepFrom) feed.volume[granularity].delete(bucket);
      }
    }
    feed.expectedVolumes.clear();
  }

  /**
   * The volume a bucket still filling can be expected to reach: the mean of the same weekday (for
   * days) or hour of the day (for hours) over the baseline, shrunk towards the mean of every
   * observed bucket by two pseudo-observations, so seasonality counts only as far as the data
   * shows it. Only closed buckets are memoised; those still open are read from `volume` as it
   * stands at the partition's position: yesterday still gains late articles during the day, and a
   * memo of it as the day's first mention found it would differ from what a detector restarted
   * later that day, its memo empty, computes for the same mention.
   */
  private expectedVolume(
    feed: PartitionFeed,
    clock: PartitionClock,
    granularity: Granularity,
    rule: SpikeRule,
    bucket: number,
    volume: ReadonlyMap<number, number>,
  ): number {
    const size = BUCKET_MS[granularity];
    const period = granularity === 'DAY' ? 7 : 24;
    const firstKnown = bucketStart(clock.since, granularity);
    const closedBefore = bucketStart(clock.latest - rule.allowedLatenessMs, granularity);
    const memo = `${granularity}:${bucket}`;
    let closed = feed.expectedVolumes.get(memo);
    if (closed === undefined || closed.closedBefore !== closedBefore || closed.firstKnown !== firstKnown) {
      closed = { closedBefore, firstKnown, all: 0, allN: 0, same: 0, sameN: 0 };
      for (let i = 1; i <= rule.baselineBuckets; i++) {
        const b = bucket - i * size;
        if (b < firstKnown) break;
        if (b < closedBefore) addToBaseline(closed, feed.volume[granularity].get(b) ?? 0, i % period === 0);
      }
      if (feed.expectedVolumes.size > 10_000) feed.expectedVolumes.clear();
      feed.expectedVolumes.set(memo, closed);
    }
    // The few most recent buckets still open, as they stand now.
    const baseline: BaselineVolume = { all: closed.all, allN: closed.allN, same: closed.same, sameN: closed.sameN };
    for (let i = 1; i <= rule.baselineBuckets; i++) {
      const b = bucket - i * size;
      if (b < firstKnown || b < closedBefore) break;
      addToBaseline(baseline, volume.get(b) ?? 0, i % period === 0);
    }
    const mean = baseline.allN > 0 ? baseline.all / baseline.allN : 0;
    return (baseline.same + 2 * mean) / (baseline.sameN + 2);
  }

  /**
   * The partition's distribution of the counts entities reach in their first bucket after
   * `silenceBuckets` without a mention, from its entities' retained counts; learnt again once a
   * day. Only buckets closed when the day began and still retained at its end take part, so what is
   * learnt depends on the day alone, not on the mention that first asks (a restarted detector
   * learns it again at another).
   */
  private newcomerTail(
    partition: number,
    feed: PartitionFeed,
    granularity: Granularity,
    rule: SpikeRule,
    clock: PartitionClock,
  ): NewcomerTail {
    const today = bucketStart(clock.latest, 'DAY');
    const held = feed.newcomers[granularity];
    if (held && held.day >= today) return held.tail;
    const size = BUCKET_MS[granularity];
    const firstKnown = bucketStart(clock.since, granularity);
    const closedBefore = bucketStart(today - rule.allowedLatenessMs, granularity);
    const retainedFrom = bucketStart(today + DAY_MS, granularity) - (rule.baselineBuckets + rule.rollingBuckets) * size;
    const observations: { count: number; volume: number }[] = [];
    for (const id of this.byPartition.get(partition) ?? []) {
      const entity = this.entities.get(id);
      if (!entity) continue;
      const counts = entity.articles[granularity];
      if (counts.size === 0) continue;
      const buckets = [...counts.keys()].filter((b) => b >= retainedFrom).sort((a, b) => a - b);
      let previous = Number.NEGATIVE_INFINITY;
      for (const b of buckets) {
        const silentFrom = b - rule.silenceBuckets * size;
        if (b < closedBefore && silentFrom >= Math.max(firstKnown, retainedFrom) && previous < silentFrom) {
          observations.push({ count: counts.get(b)!, volume: feed.volume[granularity].get(b) ?? 0 });
        }
        previous = b;
      }
    }
    const tail = new NewcomerTail(observations);
    feed.newcomers[granularity] = { tail, day: today };
    return tail;
  }

  /**
   * The verdict of the granularity's rule on the window ending with `bucket`: `start` asks whether
   * an episode begins, `continue` whether an open one goes on (the count model's lower bar).
   */
  private judge(
    entity: EntityState,
    granularity: Granularity,
    rule: SpikeRule,
    bucket: number,
    clock: PartitionClock,
    phase: 'start' | 'continue',
  ): Verdict {
    const seen = this.asOfClock(entity, granularity, clock);
    const articles = rollingSum(seen.articles, bucket, rule, granularity);
    if (rule.method === 'neon') {
      const verdict = evaluateRule(seen.chunks, bucket, clock.since, rule, granularity);
      return {
        ...verdict,
        significance: normalTailSignificance(verdict.score),
        articles,
        window: rule.rollingBuckets,
      };
    }
    return this.judgeSurprise(entity, seen, granularity, rule, bucket, clock, phase);
  }

  /**
   * The entity's counts and its partition's volume as they stood when the partition's event time
   * was where it is now: without what restored snapshots saved ahead of it hold of later articles.
   * A mention redelivered after a restart is then judged as it was the first time. Outside a
   * catch-up after a restore, the detector's own maps.
   */
  private asOfClock(entity: EntityState, granularity: Granularity, clock: PartitionClock): SeenCounts {
    const own = { articles: entity.articles[granularity], chunks: entity.counts[granularity] };
    const feed = this.feedOf(entity.partition);
    const volume = feed.volume[granularity];
    if (feed.ahead.size === 0) return { ...own, volume };
    const latest = clock.latest;
    const position = feed.position;
    // Not reached yet: counted at a later position, or, without positions, stamped later.
    const isLater = (item: CountedItem): boolean => (item.position >= 0 ? item.position > position : item.t > latest);
    const laterOf = (state: EntityState): { articles: Map<number, number>; chunks: Map<number, number> } => {
      const later = { articles: new Map<number, number>(), chunks: new Map<number, number>() };
      const add = (into: Map<number, number>, t: number): void => {
        const b = bucketStart(t, granularity);
        into.set(b, (into.get(b) ?? 0) + 1);
      };
      for (const a of state.countedArticles.values()) {
        if (isLater(a) && (granularity === 'DAY' || a.hourly)) add(later.articles, a.t);
      }
      for (const c of state.recentChunks.values()) {
        if (isLater(c) && (granularity === 'DAY' || c.hourly)) add(later.chunks, c.t);
      }
      return later;
    };
    const minus = (counts: ReadonlyMap<number, number>, later: ReadonlyMap<number, number>): Map<number, number> => {
      const result = new Map(counts);
      for (const [b, n] of later) result.set(b, Math.max(0, (result.get(b) ?? 0) - n));
      return result;
    };
    let feedLater: Map<number, number> | undefined;
    let seen: SeenCounts = { ...own, volume };
    for (const id of [...feed.ahead]) {
      const state = this.entities.get(id);
      // Caught up: nothing it holds is later than where the partition is any more.
      const caughtUp =
        !state ||
        state.countedTo === undefined ||
        (state.decidedThrough >= 0 ? state.decidedThrough <= position : state.countedTo <= latest);
      if (caughtUp) {
        feed.ahead.delete(id);
        continue;
      }
      const later = laterOf(state);
      if (later.articles.size > 0) {
        feedLater ??= new Map();
        for (const [b, n] of later.articles) feedLater.set(b, (feedLater.get(b) ?? 0) + n);
      }
      if (state === entity)
        seen = { ...seen, articles: minus(own.articles, later.articles), chunks: minus(own.chunks, later.chunks) };
    }
    return feedLater ? { ...seen, volume: minus(volume, feedLater) } : seen;
  }

  private judgeSurprise(
    entity: EntityState,
    seen: SeenCounts,
    granularity: Granularity,
    rule: SpikeRule,
    bucket: number,
    clock: PartitionClock,
    phase: 'start' | 'continue',
  ): Verdict {
    const size = BUCKET_MS[granularity];
    const counts = seen.articles;
    const volume = seen.volume;
    const feed = this.feedOf(entity.partition);
    const firstKnown = bucketStart(clock.since, granularity);
    const newcomers = this.newcomerTail(entity.partition, feed, granularity, rule, clock);
    const windows = rule.rollingBuckets > 1 ? [1, rule.rollingBuckets] : [1];
    // Trying two windows is two tests: their best p is corrected for it (Bonferroni).
    const correction = Math.log10(windows.length);
    // The feed's expected volume counts the entity's own articles too; exposure is the others'.
    let ownSum = 0;
    let ownBuckets = 0;
    for (let i = 1; i <= rule.baselineBuckets && bucket - i * size >= firstKnown; i++) {
      ownSum += counts.get(bucket - i * size) ?? 0;
      ownBuckets += 1;
    }
    const ownTypical = ownBuckets > 0 ? ownSum / ownBuckets : 0;
    // A bucket's exposure: the others' articles, never below what the bucket usually brings (a
    // quiet day is no excuse), and above it only as far as the count can tell a busy day from
    // chance: the posterior mean of the bucket's multiplier under the volume prior.
    const exposureOf = (b: number): number => {
      const others = (volume.get(b) ?? 0) - (counts.get(b) ?? 0);
      const usual = this.expectedVolume(feed, clock, granularity, rule, b, volume) - ownTypical;
      if (usual <= 0 || rule.volumePrior <= 0) return Math.max(others, usual);
      return Math.max(usual, (usual * (rule.volumePrior + others)) / (rule.volumePrior + usual));
    };
    let best: Verdict | undefined;
    for (const w of windows) {
      let observed = 0;
      let exposure = 0;
      for (let i = 0; i < w; i++) {
        observed += counts.get(bucket - i * size) ?? 0;
        exposure += exposureOf(bucket - i * size);
      }
      let historyCount = 0;
      let historyExposure = 0;
      let baselineBuckets = 0;
      for (let i = w; i < w + rule.baselineBuckets; i++) {
        const b = bucket - i * size;
        if (b < firstKnown) break;
        historyCount += counts.get(b) ?? 0;
        historyExposure += (volume.get(b) ?? 0) - (counts.get(b) ?? 0);
        baselineBuckets += 1;
      }
      const bucketVolume = baselineBuckets > 0 ? historyExposure / baselineBuckets : exposure / w;
      const parameters = {
        historyHalfWeight: rule.historyHalfWeight,
        overdispersion:
          rule.overdispersionPriorWeight === null
            ? rule.overdispersion
            : ownOverdispersion(
                this.pastWindows(
                  counts,
                  volume,
                  bucket,
                  w,
                  baselineBuckets,
                  baselineShare(historyCount, historyExposure, bucketVolume),
                  size,
                ),
                rule.overdispersion,
                rule.overdispersionPriorWeight,
                w,
              ),
      };
      const surprise = surpriseOf(
        { observed, exposure, historyCount, historyExposure, bucketVolume, windowBuckets: w },
        newcomers,
        parameters,
      );
      const significance = Math.max(0, surprise.significance - correction);
      const bar = phase === 'start' ? rule.minSignificance : rule.endSignificance;
      const verdict: Verdict = {
        observed,
        baseline: { mean: surprise.expected, std: surprise.std, buckets: baselineBuckets },
        threshold: bar,
        score: significance,
        spike: baselineBuckets >= rule.minBaselineBuckets && observed >= rule.minArticles && significance >= bar,
        significance,
        articles: observed,
        window: w,
        countAtBar: () => {
          // Significance grows with the count: double, then bisect.
          const at = (y: number): number =>
            surpriseOf(
              { observed: y, exposure, historyCount, historyExposure, bucketVolume, windowBuckets: w },
              newcomers,
              parameters,
            ).significance - correction;
          let high = Math.max(rule.minArticles, 2);
          while (at(high) < rule.minSignificance && high < 1_000_000) high *= 2;
          let low = Math.max(rule.minArticles, 2) - 1;
          while (high - low > 1) {
            const mid = Math.floor((low + high) / 2);
            if (at(mid) >= rule.minSignificance) high = mid;
            else low = mid;
          }
          return high;
        },
      };
      if (!best || rank(verdict) > rank(best)) best = verdict;
    }
    return best!;
  }

  /**
   * The entity's past windows of `w` buckets inside its baseline (the `baselineBuckets` buckets
   * before the judged window), each with the articles it had and what `share` of its volume
   * predicted: the evidence of how erratic its coverage is at this window's scale.
   */
  private pastWindows(
    counts: ReadonlyMap<number, number>,
    volume: ReadonlyMap<number, number>,
    bucket: number,
    w: number,
    baselineBuckets: number,
    share: number,
    size: number,
  ): PastWindow[] {
    const windows: PastWindow[] = [];
    for (let start = w; start + w <= w + baselineBuckets; start++) {
      let observed = 0;
      let exposure = 0;
      for (let i = start; i < start + w; i++) {
        const b = bucket - i * size;
        const own = counts.get(b) ?? 0;
        observed += own;
        exposure += (volume.get(b) ?? 0) - own;
      }
      windows.push({ observed, expected: share * exposure });
    }
    return windows;
  }

  private transition(
    entity: EntityState,
    granularity: Granularity,
    rule: SpikeRule,
    bucket: number,
    verdict: Verdict,
    state: SpikeState,
    episodeStart: number,
  ): SpikeAlert {
    const size = BUCKET_MS[granularity];
    const id = spikeId(entity.id, granularity, episodeStart);
    entity.episodes.set(granularity, {
      granularity,
      spike_id: id,
      state,
      episode_start: episodeStart,
      bucket_start: bucket,
      significance: verdict.significance,
      growing: false,
    });
    const windowStart = bucket - (verdict.window - 1) * size;
    const windowEnd = bucket + size;
    if (this.options.alertsEchoed)
      entity.awaitingEcho = echoKey({ id, state, window_end: windowEnd, observed: verdict.observed });
    const articles = entity.recentArticles.filter((a) => a.t >= windowStart && a.t < windowEnd);
    const shown = articles.slice(0, this.options.maxAlertArticles);
    const countsFrom = bucket - (rule.baselineBuckets + rule.rollingBuckets - 1) * size;
    const counts = [...(rule.method === 'surprise' ? entity.articles : entity.counts)[granularity]]
      .filter(([start]) => start >= countsFrom && start <= bucket)
      .sort(([a], [b]) => a - b)
      .map(([start, count]) => ({ bucket_start: start, count }));
    return {
      id,
      entity_id: entity.id,
      entity_name: entity.name,
      entity_type: entity.type,
      granularity,
      window_start: windowStart,
      window_end: windowEnd,
      observed: verdict.observed,
      baseline_mean: verdict.baseline.mean,
      baseline_std: verdict.baseline.std,
      threshold: verdict.countAtBar?.() ?? verdict.threshold,
      score: verdict.score,
      article_ids: shown.map((a) => a.article_id),
      // Parallel to article_ids: an article whose URL is unknown is listed without a link.
      urls: shown.flatMap((a) => (a.url === null ? [] : [a.url])),
      detected_at: this.options.now(),
      state,
      episode_start: episodeStart,
      rule: describeRule(rule, granularity),
      baseline_buckets: verdict.baseline.buckets,
      counts,
      first_interactions: entity.interactions
        .filter((i) => i.t >= windowStart - size)
        .slice(0, this.options.maxAlertInteractions)
        .map((i) => ({ ...i })),
      method: rule.method,
      significance: verdict.significance,
      articles: verdict.articles,
    };
  }

  private snapshotOf(entity: EntityState): EntitySpikeState {
    const clock = this.clocks.get(entity.partition) ?? { latest: entity.lastMentionAt, since: entity.lastMentionAt };
    const sorted = (counts: Map<number, number>) =>
      [...counts]
        .filter(([, count]) => count > 0)
        .sort(([a], [b]) => a - b)
        .map(([start, count]) => ({ bucket_start: start, count }));
    return {
      entity_id: entity.id,
      entity_name: entity.name,
      entity_type: entity.type,
      partition: Math.max(0, entity.partition),
      // Never behind a restored snapshot's: the state still holds what was final then.
      latest_event_at: Math.max(clock.latest, entity.countedTo ?? clock.latest),
      observed_since: clock.since,
      days: sorted(entity.counts.DAY),
      hours: sorted(entity.counts.HOUR),
      recent_chunks: [...entity.recentChunks].map(([key, c]) => ({
        chunk_key: key,
        t: c.t,
        hourly: c.hourly,
        position: c.position,
      })),
      article_days: sorted(entity.articles.DAY),
      article_hours: sorted(entity.articles.HOUR),
      counted_articles: [...entity.countedArticles].map(([key, a]) => ({
        article_key: key,
        t: a.t,
        hourly: a.hourly,
        position: a.position,
      })),
      recent_articles: entity.recentArticles.map((a) => ({ ...a })),
      decided_through: entity.decidedThrough,
    };
  }
}

/** A baseline's volume: over all its buckets, and over those of the same weekday or hour. */
interface BaselineVolume {
  all: number;
  allN: number;
  same: number;
  sameN: number;
}

/** The part over a bucket's closed baseline buckets, memoised. */
interface ClosedVolume extends BaselineVolume {
  /** What was closed when it was summed, and where counting began: it is summed again when either moves. */
  closedBefore: number;
  firstKnown: number;
}

function addToBaseline(sums: BaselineVolume, volume: number, sameSeason: boolean): void {
  sums.all += volume;
  sums.allN += 1;
  if (sameSeason) {
    sums.same += volume;
    sums.sameN += 1;
  }
}

/** Whether a bucket is closed once the partition's event time has reached `latest`. */
function closedAt(latest: number, bucket: number, granularity: Granularity, rule: SpikeRule): boolean {
  return latest >= bucket + BUCKET_MS[granularity] + rule.allowedLatenessMs;
}
