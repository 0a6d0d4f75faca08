import { NearDuplicateFilter, type DedupeOptions } from '../../processors/dedupe/drop-near-duplicates.js';
import type { Chunk, Mention } from '../../schemas/records.generated.js';
import { KafkaSink, type TopicRecord } from '../kafka/kafka-sink.js';
import { stageDecoder, topicRecord } from '../runtime/record-codec.js';
import { startStage, stderrLogger, type RunningStage, type StageOutput } from '../runtime/run-stage.js';
import type { Sink } from '../runtime/sink.js';
import { StageError } from '../runtime/stage-error.js';
import { headerText, type Transport } from '../runtime/transport.js';
import { stageWithTails } from '../runtime/state-topic.js';
import { tailTopic } from '../runtime/topic-tail.js';
import { NAME_PREFIX } from '../pipeline/topics.js';
import { pipelineTopics, type PipelineTopics, type StageBindingOptions } from '../pipeline/pipeline-topics.js';

export interface DedupeStage extends RunningStage {
  readonly filter: NearDuplicateFilter;
}

/** Names the consumer group whose decision a record of `news.chunks.unique` is. */
export const DEDUPE_GROUP_HEADER = 'neon.dedupe.group';

/** A survivor as this group decided it. */
function survivorRecord(topics: PipelineTopics, chunk: Chunk, groupId: string): TopicRecord {
  const record = topicRecord(topics.uniqueChunks, 'Chunk', chunk.article_id, chunk);
  return { ...record, headers: { ...record.headers, [DEDUPE_GROUP_HEADER]: groupId } };
}

/** A survivor to write as it stands when it is written (see the `kafka` sink). */
interface SurvivorWrite {
  survivor: Chunk;
}

function uniqueOutputs(topics: PipelineTopics, chunk: Chunk, mentions: Mention[]): StageOutput[] {
  return [
    { sink: 'kafka', id: chunk.id, item: { survivor: chunk } satisfies SurvivorWrite },
    ...mentions.map((mention) => ({
      sink: 'kafka',
      id: `${chunk.id}/${mention.entity_id}`,
      item: topicRecord(topics.mentions, 'Mention', mention.entity_id, mention),
    })),
  ];
}

/**
 * `news.chunks` → near-duplicate removal → `news.chunks.unique` (keyed by article id) and one
 * `Mention` per entity per unique chunk → `entity.mentions` (keyed by entity id).
 *
 * A duplicate is not dropped silently: its source and date are merged into the surviving chunk's
 * provenance and the survivor is written again to `news.chunks.unique` under its own id (an
 * idempotent overwrite downstream), without new mentions, so syndication never inflates counts.
 *
 * State: the time window of unique chunks. It is rebuilt on start by reading
 * `news.chunks.unique` (the stage's own output is its changelog) and follows that topic while
 * running, so it survives restarts. Only this consumer group's decisions are its state (each record
 * names its group in the `neon.dedupe.group` header; records without one, written before the header
 * existed, count as its own): a fresh group re-reading `news.chunks` from the start — a replay into
 * fresh indices — starts from an empty window and decides every chunk as the first run did, instead
 * of against a window that already ends at the previous run's last chunk, where every early chunk is
 * older than the window and would pass as unique. Each chunk it then sees twice (its own upstream
 * replaying too) is decided once (drop-near-duplicates.ts: a chunk older than the window that was
 * decided before writes nothing). Replicas: the group uses the single-active assignment, so one
 * replica decides and the others stand by with a warm window; a standby takes over when the active
 * one leaves or dies (its unacknowledged inputs are redelivered and re-decided against the window,
 * which already holds what it wrote). On every new assignment the stage first catches its window up
 * with the current end of `news.chunks.unique`, so a hand-over never decides against a stale window. Replay-safe: a
 * chunk already in the window is never a duplicate of itself; it is re-emitted unchanged.
 *
 * Delivery: at-least-once; offsets are committed only after the outputs are acknowledged.
 * Dead letters: undecodable input.
 */
export async function startDedupeStage(
  transport: Transport,
  options: StageBindingOptions & { dedupe?: Partial<DedupeOptions> } = {},
): Promise<DedupeStage> {
  const topics = pipelineTopics(options.topics);
  const log = options.log ?? stderrLogger;
  const filter = new NearDuplicateFilter(options.dedupe);
  const groupId = options.groupId ?? `${NAME_PREFIX}neon.dedupe`;
  const decodeChunk = stageDecoder('Chunk');
  const tail = await tailTopic(
    transport,
    topics.uniqueChunks,
    (record) => {
      const decidedBy = headerText(record.headers)[DEDUPE_GROUP_HEADER];
      if (decidedBy !== undefined && decidedBy !== groupId) return; // another group's decisions
      try {
        filter.restore(decodeChunk(record));
      } catch (error) {
        // State is a cache of the log: one bad record must not keep the stage from starting.
        log('warn', 'unreadable Chunk record skipped while rebuilding state', {
          stage: 'dedupe',
          partition: record.partition,
          offset: record.offset,
          code: error instanceof StageError ? error.code : 'internal',
        });
      }
    },
    { purpose: 'dedupe-window' },
  );
  await tail.caughtUp;

  // After a hand-over, the new active replica first reads everything the previous one wrote.
  let windowReady: Promise<void> = Promise.resolve();
  const kafka = new KafkaSink(transport.producer(), { name: 'kafka' });
  // A survivor is written as it stands at each attempt, not as it stood when decided: a write that
  // failed (the topic's leader not ready at start, an outage) is retried after later writes of the
  // same survivor went through, and the retry must not put back a version with fewer sources.
  const sink: Sink<TopicRecord | SurvivorWrite> = {
    name: 'kafka',
    write: (item) =>
      kafka.write(
        'survivor' in item ? survivorRecord(topics, filter.current(item.survivor.id) ?? item.survivor, groupId) : item,
      ),
    close: () => kafka.close(),
  };
  const stage = await startStage<Chunk>(transport, {
    name: 'dedupe',
    // One decider at a time: two replicas deciding concurrently could both keep a near-duplicate
    // pair. Other replicas are warm standbys (their windows follow the unique-chunk topic).
    assignment: 'single-active',
    onAssignment: (assigned) => {
      if (assigned.length === 0) return;
      windowReady = tail.catchUp();
      windowReady.catch(() => undefined); // surfaced by the next process call
    },
    groupId,
    inputTopics: [topics.chunks],
    deadLetterTopic: topics.deadLetters,
    decode: stageDecoder('Chunk'),
    process: async ({ value: chunk }): Promise<StageOutput[]> => {
      try {
        await windowReady;
      } catch (cause) {
        throw new StageError('timeout', 'the dedupe window did not catch up with news.chunks.unique', 'dedupe', {
          cause,
        });
      }
      // Decided synchronously after the wait: records resume in arrival order, one at a time.
      const decision = filter.offer(chunk);
      switch (decision.kind) {
        case 'unique':
        case 'replayed':
          return uniqueOutputs(topics, decision.chunk, decision.mentions);
        case 'duplicate':
          return [{ sink: 'kafka', id: decision.survivor.id, item: { survivor: decision.survivor } }];
        case 'seen':
          return [];
      }
    },
    sinks: { kafka: sink },
    ...(options.maxInFlight === undefined ? {} : { maxInFlight: options.maxInFlight }),
    ...(options.metrics ? { metrics: options.metrics } : {}),
    log,
  });
  return stageWithTails(stage, [tail], { filter });
}
