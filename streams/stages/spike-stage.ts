import type { Registry } from 'prom-client';
import {
  SpikeDetector,
  type DetectorOutput,
  type SpikeDetectorOptions,
} from '../../processors/spikes/detect-spikes.js';
import type { Mention } from '../../schemas/records.generated.js';
import { KafkaSink } from '../kafka/kafka-sink.js';
import { spikeMetrics } from '../telemetry/spike-metrics.js';
import { stageDecoder, topicRecord } from '../runtime/record-codec.js';
import { startStage, stderrLogger, type RunningStage, type StageOutput } from '../runtime/run-stage.js';
import { StageError } from '../runtime/stage-error.js';
import { tailTopic, type TopicTail } from '../runtime/topic-tail.js';
import { TOPICS } from '../pipeline/topics.js';
import type { Transport } from '../runtime/transport.js';
import { pipelineTopics, type StageBindingOptions } from '../pipeline/pipeline-topics.js';
import { stageWithTails } from '../runtime/state-topic.js';
import { spikeWriter, type SpikeWrite } from './spike-writer.js';

export interface SpikeStage extends RunningStage {
  readonly detector: SpikeDetector;
}

export interface SpikeStageOptions extends StageBindingOptions {
  detector?: Partial<SpikeDetectorOptions>;
  /** Put the first extracted interactions into alerts, by following this topic (null: do not). */
  interactionsTopic?: string | null;
  /** Where the detector's own metrics (mentions by outcome, alerts, tracked entities) are registered. */
  registry?: Registry;
}

/**
 * `entity.mentions` (keyed by entity) → spike detection → `entity.spikes` (alert states, keyed by
 * entity) and the compacted changelog `entity.spike-state` (per-entity counts and episodes).
 *
 * State: rebuilt before the first mention from `entity.spike-state` (the counts) and
 * `entity.spikes` (the only record of what was already sent), and followed while running, so a replica that takes over a partition after a
 * rebalance first catches up with what the previous owner wrote. Groups use the balanced
 * assignment: entities are spread over replicas by partition, and a replica decides only for the
 * partitions it owns.
 *
 * Delivery: at-least-once. A mention's offset is committed after its alerts and the state snapshots
 * it changed are acknowledged. The detector is given each mention's offset: a redelivered mention
 * the restored state already holds is recognised by it (and by its chunk) and not counted again,
 * and the partition's event time at it is restored to where it stood the first time, so a restart
 * decides every redelivered mention as the first run did, in whatever time order the feed came.
 * Alert ids are deterministic (entity, granularity, episode start), so a repeated record is
 * recognisable downstream. Dead letters: undecodable mentions.
 */
export async function startSpikeStage(transport: Transport, options: SpikeStageOptions = {}): Promise<SpikeStage> {
  const topics = pipelineTopics(options.topics);
  const log = options.log ?? stderrLogger;
  const detector = new SpikeDetector({ ...options.detector, alertsEchoed: true });
  const metrics = options.registry ? spikeMetrics(options.registry) : undefined;
  const decodeState = stageDecoder('EntitySpikeState');
  const decodeAlert = stageDecoder('SpikeAlert');
  const decodeInteraction = stageDecoder('Interaction');
  const skipped = (what: string, error: unknown): void =>
    log('warn', `unreadable ${what} skipped while rebuilding spike state`, {
      stage: 'spikes',
      code: error instanceof StageError ? error.code : 'internal',
    });

  // Nothing is owned until the first assignment has caught up: every snapshot read now is the truth.
  detector.setOwnedPartitions([]);
  const tails: TopicTail[] = [];
  tails.push(
    await tailTopic(
      transport,
      topics.spikeState,
      (record) => {
        if (record.value === null) {
          if (record.key) detector.forget(record.key.toString());
          return;
        }
        try {
          detector.restore(decodeState(record));
        } catch (error) {
          skipped('EntitySpikeState', error);
        }
      },
      { purpose: 'spike-state' },
    ),
  );
  tails.push(
    await tailTopic(
      transport,
      topics.spikes,
      (record) => {
        try {
          detector.noteSentAlert(decodeAlert(record));
        } catch (error) {
          skipped('SpikeAlert', error);
        }
      },
      { purpose: 'spike-alerts' },
    ),
  );
  const interactionsTopic = options.interactionsTopic === undefined ? TOPICS.interactions : options.interactionsTopic;
  if (interactionsTopic !== null) {
    tails.push(
      await tailTopic(
        transport,
        interactionsTopic,
        (record) => {
          try {
            const interaction = decodeInteraction(record);
            const noted = { id: interaction.id, t: interaction.t, text: interaction.text };
            detector.noteInteraction(interaction.subject_id, noted);
            if (interaction.object_id !== null) detector.noteInteraction(interaction.object_id, noted);
          } catch (error) {
            skipped('Interaction', error);
          }
        },
        { purpose: 'spike-interactions' },
      ),
    );
  }
  await Promise.all(tails.map((tail) => tail.caughtUp));

  const toWrite = (output: DetectorOutput): SpikeWrite => ({
    alerts: output.alerts.map((alert) => topicRecord(topics.spikes, 'SpikeAlert', alert.entity_id, alert)),
    entityIds: output.changed.map((snapshot) => snapshot.entity_id),
    forgotten: output.forgotten,
  });

  const writer = spikeWriter(
    detector,
    topics,
    new KafkaSink(transport.producer(), { name: 'spike-alerts' }),
    new KafkaSink(transport.producer(), { name: 'spike-state', coalesceByKey: true }),
  );
  let ready: Promise<void> = Promise.resolve();
  const stage = await startStage<Mention>(transport, {
    name: 'spikes',
    ...(options.groupId ? { groupId: options.groupId } : {}),
    inputTopics: [topics.mentions],
    deadLetterTopic: topics.deadLetters,
    onAssignment: (assigned) => {
      const partitions = assigned.filter((a) => a.topic === topics.mentions).map((a) => a.partition);
      // Until the tails hold what the previous owners wrote, decide for nobody.
      detector.setOwnedPartitions([]);
      ready = Promise.all(tails.slice(0, 2).map((tail) => tail.catchUp())).then(() =>
        detector.setOwnedPartitions(partitions),
      );
      ready.catch(() => undefined); // surfaced by the next process call
    },
    decode: stageDecoder('Mention'),
    process: async ({ value: mention, partition, offset }): Promise<StageOutput[]> => {
      try {
        await ready;
      } catch (cause) {
        throw new StageError('timeout', 'the spike state did not catch up with its changelog', 'spikes', { cause });
      }
      // Decided synchronously after the wait, so mentions of one partition are judged in order.
      const output = detector.offer(mention, partition, Number(offset));
      metrics?.observe(output, detector);
      const write = toWrite(output);
      writer.decided(write.alerts);
      if (write.alerts.length === 0 && write.entityIds.length === 0 && write.forgotten.length === 0) return [];
      return [{ sink: 'kafka', id: mention.chunk_id, item: write }];
    },
    sinks: { kafka: writer },
    ...(options.maxInFlight === undefined ? {} : { maxInFlight: options.maxInFlight }),
    ...(options.metrics ? { metrics: options.metrics } : {}),
    log,
  });

  return stageWithTails(stage, tails, { detector });
}
