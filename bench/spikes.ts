/**
 * `npm run bench -- spikes`: what spike detection costs.
 *
 * - detector: mentions/s of `SpikeDetector.offer` alone, and with the per-change snapshot encoding
 *   the stage does (Avro), on a synthetic stream: Zipf-distributed entities over 60 days of event
 *   time, in time order, on 6 partitions;
 * - state: Avro bytes of a snapshot per tracked entity and heap bytes per tracked entity (measured
 *   with forced GCs around filling a detector);
 * - real data: the Current Events 2025 Q1 mentions (when the development data is present);
 * - stage on Kafka (`--kafka`, default on): the same synthetic mentions through the spike stage on
 *   real Kafka, from first fetch until the group committed to the end — next to the detector alone.
 *
 *   npm run bench -- spikes [--mentions 300000] [--entities 20000] [--kafka-mentions 60000] [--no-kafka]
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parseArgs } from 'node:util';
import { logLevel } from 'kafkajs';
import { currentEventsMentions } from '../devkit/current-events-mentions.js';
import { SpikeDetector } from '../processors/spikes/detect-spikes.js';
import { DAY_MS } from '../processors/spikes/spike-rule.js';
import { encodeRecord } from '../schemas/avro-codec.js';
import type { Mention } from '../schemas/records.generated.js';
import { createKafkaClient } from '../streams/kafka/kafka-client.js';
import { createKafkaTransport } from '../streams/kafka/kafka-transport.js';
import { topicRecord } from '../streams/runtime/record-codec.js';
import { startSpikeStage } from '../streams/stages/spike-stage.js';
import { acquireTestInfrastructure } from '../devkit/acquire-infrastructure.js';
import { committedToEnd, waitUntil } from '../devkit/kafka-progress.js';
import { freshSpikeTopics } from '../devkit/spike-topics.js';
import { writeBenchResults } from './results.js';

const { values: args } = parseArgs({
  options: {
    mentions: { type: 'string', default: '300000' },
    entities: { type: 'string', default: '20000' },
    'kafka-mentions': { type: 'string', default: '60000' },
    'no-kafka': { type: 'boolean', default: false },
  },
});
const MENTIONS = Number(args.mentions);
const ENTITIES = Number(args.entities);
const KAFKA_MENTIONS = Number(args['kafka-mentions']);
const START = Date.UTC(2025, 0, 1);
const NOW = START + 400 * DAY_MS;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** A deterministic Zipf(1.1) stream of mentions over 60 days, in time order. */
function syntheticMentions(count: number, entities: number): { mention: Mention; partition: number }[] {
  let seed = 42;
  const random = (): number => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const weights = Array.from({ length: entities }, (_, i) => 1 / (i + 1) ** 1.1);
  const total = weights.reduce((a, b) => a + b, 0);
  const cumulative: number[] = [];
  let running = 0;
  for (const w of weights) cumulative.push((running += w / total));
  const pick = (): number => {
    const r = random();
    let lo = 0;
    let hi = entities - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < r) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const out: { mention: Mention; partition: number }[] = [];
  for (let i = 0; i < count; i++) {
    const entity = pick();
    const t = START + Math.floor((i / count) * 60 * DAY_MS);
    out.push({
      partition: entity % 6,
      mention: {
        entity_id: `e-entity-${entity}`,
        name: `Entity ${entity}`,
        entity_type: 'ORGANIZATION',
        t,
        chunk_id: `a${i}:v1:0`,
        article_id: `a${i}`,
        url: `https://news.example/a${i}`,
      },
    });
  }
  return out;
}

function rate(count: number, seconds: number): number {
  return Math.round(count / seconds);
}

function detectorRun(input: { mention: Mention; partition: number }[], encode: boolean) {
  const detector = new SpikeDetector({ now: () => NOW });
  let alerts = 0;
  let bytes = 0;
  const started = process.hrtime.bigint();
  for (const { mention, partition } of input) {
    const output = detector.offer(mention, partition);
    alerts += output.alerts.length;
    if (encode) {
      for (const snapshot of output.changed) bytes += encodeRecord('EntitySpikeState', snapshot).value.length;
      for (const alert of output.alerts) bytes += encodeRecord('SpikeAlert', alert).value.length;
    }
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { detector, alerts, seconds, mentions_per_s: rate(input.length, seconds), bytes_written: bytes };
}

function stateSize(input: { mention: Mention; partition: number }[]) {
  gc();
  const before = process.memoryUsage().heapUsed;
  const { detector } = detectorRun(input, false);
  gc();
  const after = process.memoryUsage().heapUsed;
  const entities = detector.size().entities;
  let snapshotBytes = 0;
  let largest = 0;
  let count = 0;
  for (let i = 0; i < ENTITIES; i++) {
    const snapshot = detector.snapshot(`e-entity-${i}`);
    if (!snapshot) continue;
    const size = encodeRecord('EntitySpikeState', snapshot).value.length;
    snapshotBytes += size;
    largest = Math.max(largest, size);
    count += 1;
  }
  return {
    tracked_entities: entities,
    heap_bytes_per_entity: Math.round((after - before) / entities),
    snapshot_avro_bytes_mean: Math.round(snapshotBytes / count),
    snapshot_avro_bytes_max: largest,
    partitions: detector.size().partitions,
  };
}

async function kafkaRun(input: { mention: Mention; partition: number }[]) {
  const infra = await acquireTestInfrastructure(process.env, (line) => console.error(line));
  const transport = createKafkaTransport(
    createKafkaClient({ clientId: 'bench-spikes', brokers: infra.kafkaBrokers, logLevel: logLevel.NOTHING }),
  );
  const { topics, created: used } = await freshSpikeTopics(transport, 'bench.spikes', 6);
  const producer = transport.producer();
  for (let i = 0; i < input.length; i += 1000) {
    const batch = input.slice(i, i + 1000);
    await Promise.all(
      [0, 1, 2, 3, 4, 5].map((partition) => {
        const records = batch
          .filter((m) => m.partition === partition)
          .map(({ mention }) => ({
            ...topicRecord(topics.mentions, 'Mention', mention.entity_id, mention),
            partition,
          }));
        return records.length > 0 ? producer.send(topics.mentions, records) : Promise.resolve();
      }),
    );
  }
  await producer.disconnect();
  const group = `bench.spikes.group.${Date.now().toString(36)}`;
  const kafka = createKafkaClient({
    clientId: 'bench-spikes-admin',
    brokers: infra.kafkaBrokers,
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  const started = process.hrtime.bigint();
  const stage = await startSpikeStage(transport, {
    topics,
    groupId: group,
    interactionsTopic: null,
    detector: { now: () => NOW },
    log: () => undefined,
  });
  await waitUntil(() => committedToEnd(admin, group, topics.mentions), 600_000, 'the spike stage to commit to the end');
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await stage.stop();
  await admin.deleteTopics({ topics: used }).catch(() => undefined);
  await admin.disconnect();
  await transport.close();
  await infra.release();
  return {
    mentions: input.length,
    seconds: Math.round(seconds * 100) / 100,
    mentions_per_s: rate(input.length, seconds),
  };
}

const synthetic = syntheticMentions(MENTIONS, ENTITIES);
detectorRun(synthetic.slice(0, 20_000), true); // warm-up
const alone = detectorRun(synthetic, false);
const encoded = detectorRun(synthetic, true);
const state = stateSize(synthetic);
const real = currentEventsMentions();
const realRun = real
  ? detectorRun(
      real.mentions.map((mention) => ({ mention, partition: 0 })),
      true,
    )
  : undefined;
const kafkaInput = synthetic.slice(0, KAFKA_MENTIONS);
const kafkaAlone = detectorRun(kafkaInput, true);
const kafka = args['no-kafka'] ? undefined : await kafkaRun(kafkaInput);

const figures = {
  data: {
    synthetic: `${MENTIONS} mentions, Zipf(1.1) over ${ENTITIES} entities, 60 days, 6 partitions`,
    real: real ? `Current Events 2025 Q1: ${real.mentions.length} mentions` : 'absent',
  },
  detector: {
    mentions_per_s: alone.mentions_per_s,
    seconds: Math.round(alone.seconds * 100) / 100,
    alerts: alone.alerts,
  },
  detector_with_encoding: {
    mentions_per_s: encoded.mentions_per_s,
    bytes_written_per_mention: Math.round(encoded.bytes_written / MENTIONS),
  },
  state,
  real_data: realRun ? { mentions_per_s: realRun.mentions_per_s, alerts: realRun.alerts } : null,
  kafka: kafka
    ? {
        ...kafka,
        detector_alone_same_input_mentions_per_s: kafkaAlone.mentions_per_s,
        stage_to_detector_ratio: Math.round((kafka.mentions_per_s / kafkaAlone.mentions_per_s) * 1000) / 1000,
      }
    : null,
};
const path = writeBenchResults('spikes', figures);
console.log(JSON.stringify(figures, null, 2));
console.log('');
console.log(`detector alone                 ${String(alone.mentions_per_s).padStart(9)} mentions/s`);
console.log(`detector + Avro snapshots      ${String(encoded.mentions_per_s).padStart(9)} mentions/s`);
if (kafka) {
  console.log(
    `spike stage on Kafka           ${String(kafka.mentions_per_s).padStart(9)} mentions/s ` +
      `(${figures.kafka!.stage_to_detector_ratio} of the detector with encoding on the same ${kafka.mentions} mentions)`,
  );
}
console.log(
  `state per tracked entity       ${state.heap_bytes_per_entity} heap bytes, ${state.snapshot_avro_bytes_mean} Avro bytes (max ${state.snapshot_avro_bytes_max})`,
);
console.log(`results: ${path}`);
