import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { logLevel } from 'kafkajs';
import { describe, expect, inject, it } from 'vitest';
import { SpikeDetector } from '../../processors/spikes/detect-spikes.js';
import { NEON_DAY_RULE, NEON_HOUR_RULE } from '../../processors/spikes/spike-rule.js';
import type { Mention, SpikeAlert } from '../../schemas/records.generated.js';
import { createKafkaClient } from '../../streams/kafka/kafka-client.js';
import { createKafkaTransport } from '../../streams/kafka/kafka-transport.js';
import { topicRecord } from '../../streams/runtime/record-codec.js';
import { startSpikeStage, type SpikeStage } from '../../streams/stages/spike-stage.js';
import { startWebhookStage } from '../../streams/stages/webhook-stage.js';
import { followSpikes } from '../../streams/views/spike-feed.js';
import { Secret } from '../../schemas/connection-config.js';
import { parseFetchAllowList } from '../../schemas/outbound-address-policy.js';
import type { PipelineTopics } from '../../streams/pipeline/pipeline-topics.js';
import type { Transport } from '../../streams/runtime/transport.js';
import { freshTopic } from '../../devkit/fresh-names.js';
import { freshSpikeTopics } from '../../devkit/spike-topics.js';
import { assertCommittedToEnd, committedToEnd, waitUntil } from '../harness/invariants.js';
import { useLiveClients } from '../harness/live-clients.js';
import { readRawTopic, readTopicRecords } from '../harness/topic-contents.js';
import { mentionOf, mentionsOn, TEST_NOW } from '../unit/spike-fixtures.js';

/**
 * NEON's rule: its verdicts depend on each entity's own counts only, so a replica's alerts equal a
 * reference detector's whatever the interleaving of partitions. The count model reads the feed's
 * volume over every partition, so its verdicts depend on that interleaving (see detect-spikes.ts).
 */
const NEON = { day: NEON_DAY_RULE, hour: NEON_HOUR_RULE };

const live = useLiveClients();
const PARTITIONS = 3;
const now = (): number => TEST_NOW;

interface Run {
  transport: Transport;
  topics: PipelineTopics;
  group: string;
}

async function freshRun(label: string): Promise<Run> {
  const transport = createKafkaTransport(
    createKafkaClient({ clientId: `spikes-${label}`, brokers: inject('kafkaBrokers'), logLevel: logLevel.NOTHING }),
  );
  const { topics, created: used } = await freshSpikeTopics(transport, label, PARTITIONS);
  live.cleanup.topics.push(...used);
  return { transport, topics, group: freshTopic(`${label}.group`) };
}

/** Six entities, two per partition, with different histories and bursts over 30 days. */
function scenario(): { partition: number; mention: Mention }[] {
  const plan: [string, number, (day: number) => number][] = [
    ['e-alba', 0, (d) => (d === 12 ? 9 : 1)],
    ['e-brook', 0, (d) => (d % 2 === 0 ? 2 : 0) + (d === 20 || d === 21 ? 8 : 0)],
    ['e-cato', 1, (d) => (d >= 15 && d <= 17 ? 6 : d % 3 === 0 ? 1 : 0)],
    ['e-dara', 1, () => 2],
    ['e-eli', 2, (d) => (d === 8 ? 5 : d === 25 ? 7 : 0)],
    ['e-fenn', 2, (d) => 1 + (d % 2)],
  ];
  const out: { partition: number; mention: Mention }[] = [];
  for (let day = 0; day < 30; day++) {
    for (const [entity, partition, perDay] of plan) {
      for (const mention of mentionsOn(entity, day, perDay(day))) out.push({ partition, mention });
    }
  }
  return out.sort((a, b) => a.mention.t - b.mention.t);
}

/** What the detector decides on the same mentions, partition by partition. */
function expectedAlerts(input: { partition: number; mention: Mention }[]): string[] {
  const detector = new SpikeDetector({ ...NEON, now });
  return input.flatMap(({ partition, mention }) => detector.offer(mention, partition).alerts).map(describeAlert);
}

function describeAlert(a: SpikeAlert): string {
  return `${a.id} ${a.state} ${a.window_end} ${a.observed}`;
}

async function produce(run: Run, input: { partition: number; mention: Mention }[]): Promise<void> {
  const producer = run.transport.producer();
  for (let i = 0; i < input.length; i += 200) {
    const batch = input.slice(i, i + 200);
    for (const partition of [0, 1, 2]) {
      const records = batch
        .filter((m) => m.partition === partition)
        .map(({ mention }) => ({
          ...topicRecord(run.topics.mentions, 'Mention', mention.entity_id, mention),
          partition,
        }));
      if (records.length > 0) await producer.send(run.topics.mentions, records);
    }
  }
  await producer.disconnect();
}

async function drained(run: Run): Promise<void> {
  await waitUntil(
    () => committedToEnd(live.admin, run.group, run.topics.mentions),
    60_000,
    'the spike stage committed to the end of entity.mentions',
  );
}

async function start(run: Run): Promise<SpikeStage> {
  return startSpikeStage(run.transport, {
    topics: run.topics,
    groupId: run.group,
    interactionsTopic: null,
    detector: { ...NEON, now },
  });
}

async function alertsOnTopic(run: Run): Promise<string[]> {
  const entries = await readTopicRecords(run.transport, run.topics.spikes, 'SpikeAlert');
  // Per entity (key → one partition) the topic keeps the order the detector decided in.
  return entries.map((e) => e.value).map(describeAlert);
}

function byEntity(lines: string[]): Map<string, string[]> {
  const grouped = new Map<string, string[]>();
  for (const line of lines) {
    const entity = line.split(':')[1]!;
    grouped.set(entity, [...(grouped.get(entity) ?? []), line]);
  }
  return grouped;
}

describe('spike stage on real Kafka', () => {
  it('sends exactly the alerts of the rule, once, across a restart and a rebalance between replicas', async () => {
    const run = await freshRun('spikes');
    const input = scenario();
    const expected = expectedAlerts(input);
    expect(expected.filter((line) => line.includes(' STARTED ')).length).toBeGreaterThanOrEqual(5);

    const firstThird = input.filter(({ mention }) => mention.t < input[0]!.mention.t + 10 * 86_400_000);
    const secondThird = input.filter(
      ({ mention }) =>
        mention.t >= input[0]!.mention.t + 10 * 86_400_000 && mention.t < input[0]!.mention.t + 20 * 86_400_000,
    );
    const lastThird = input.slice(firstThird.length + secondThird.length);

    // One replica, then a restart that must rebuild its state from the changelog and entity.spikes.
    await produce(run, firstThird);
    // Poison on the input: dead-lettered, nothing else disturbed.
    await run.transport.producer().send(run.topics.mentions, [{ key: 'e-alba', value: Buffer.from('junk') }]);
    let a = await start(run);
    await drained(run);
    await a.stop();
    a = await start(run);
    expect(a.detector.size().entities).toBe(6);

    // A second replica joins: the group rebalances and each takes over partitions from the other.
    const b = await start(run);
    await produce(run, secondThird);
    await drained(run);

    // The first leaves: the second owns everything, after catching up with what the first wrote.
    await a.stop();
    await produce(run, lastThird);
    await drained(run);
    await b.stop();

    const actual = await alertsOnTopic(run);
    const expectedByEntity = byEntity(expected);
    const actualByEntity = byEntity(actual);
    expect([...actualByEntity.keys()].sort()).toEqual([...expectedByEntity.keys()].sort());
    for (const [entity, lines] of expectedByEntity) expect(actualByEntity.get(entity), entity).toEqual(lines);
    expect(new Set(actual).size).toBe(actual.length);
    await assertCommittedToEnd(live.admin, run.group, run.topics.mentions);

    const deadLetters = await readRawTopic(run.transport, run.topics.deadLetters);
    expect(deadLetters.map((d) => d.headers['dlq.error.code'])).toEqual(['unknown_schema']);
    expect(deadLetters[0]!.value?.toString()).toBe('junk');

    // The changelog holds one live snapshot per entity, and they restore to the same counts.
    const state = await readTopicRecords(run.transport, run.topics.spikeState, 'EntitySpikeState');
    const latest = new Map(state.map((entry) => [entry.key, entry.value]));
    expect([...latest.keys()].sort()).toEqual(['e-alba', 'e-brook', 'e-cato', 'e-dara', 'e-eli', 'e-fenn']);
    const reference = new SpikeDetector({ ...NEON, now });
    for (const { partition, mention } of input) reference.offer(mention, partition);
    for (const [entity, snapshot] of latest) {
      expect(snapshot.days, entity!).toEqual(reference.snapshot(entity!)!.days);
    }
  });

  it('counts a redelivered or replayed mention once', async () => {
    const run = await freshRun('spikes-replay');
    const mentions = [0, 1, 2, 3, 4, 5, 6].flatMap((d) => mentionsOn('e-gale', d, 1));
    const burst = mentionsOn('e-gale', 7, 4);
    const input = [...mentions, ...burst].map((mention) => ({ partition: 0, mention }));
    await produce(run, input);
    // The same burst again, as a replay upstream would send it.
    await produce(
      run,
      burst.map((mention) => ({ partition: 0, mention })),
    );
    await produce(run, [{ partition: 0, mention: mentionOf('e-gale', 7, { hour: 22 }) }]);
    const stage = await start(run);
    await drained(run);
    await stage.stop();
    expect(stage.detector.snapshot('e-gale')!.days.at(-1)).toEqual({
      bucket_start: burst[0]!.t - 8 * 3_600_000,
      count: 5,
    });
    const alerts = await alertsOnTopic(run);
    expect(alerts.filter((line) => line.includes(' STARTED '))).toHaveLength(1);
  });

  it('lists the spikes from the topic and pushes them to webhooks, retried, signed, dead-lettered when refused', async () => {
    const run = await freshRun('spikes-deliver');
    const input = [0, 1, 2, 3, 4, 5, 6].flatMap((d) => mentionsOn('e-hale', d, 1));
    const burst = mentionsOn('e-hale', 7, 5);
    const after = [8, 9, 10, 11, 12].map((d) => mentionOf('e-idle', d, { hour: 3 }));
    await produce(
      run,
      [...input, ...burst, ...after].map((mention) => ({ partition: 0, mention })),
    );
    const spikes = await start(run);
    await drained(run);
    await spikes.stop();

    const feed = await followSpikes(run.transport, run.topics.spikes);
    await feed.caughtUp;
    await feed.stop();
    const [episode] = feed.book.query({ entityId: 'e-hale' });
    expect(episode).toMatchObject({ open: false, granularity: 'DAY' });
    expect(episode!.states.map((s) => s.state)).toEqual(['STARTED', 'ONGOING', 'ONGOING', 'ENDED']);
    expect(feed.targets.isTarget('e-hale', burst[0]!.t)).toBe(true);

    // One endpoint fails twice then accepts; another refuses everything.
    const received: { path: string; alertId: string }[] = [];
    let failures = 2;
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.url === '/refuse') return void res.writeHead(403).end();
        if (failures-- > 0) return void res.writeHead(503).end();
        received.push({ path: req.url!, alertId: String(req.headers['x-neon-alert-id']) });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const group = freshTopic('webhooks.group');
    const endpoint = (path: string, states: ('STARTED' | 'ENDED')[]) => ({
      url: `${base}${path}`,
      secret: new Secret('a-long-enough-secret'),
      states,
      granularities: ['DAY' as const],
    });
    const webhooks = await startWebhookStage(run.transport, {
      topics: run.topics,
      groupId: group,
      endpoints: [endpoint('/ok', ['STARTED', 'ENDED']), endpoint('/refuse', ['ENDED'])],
      retry: { attempts: 4, baseMs: 5, capMs: 50, timeoutMs: 2_000 },
      // The receiver is on loopback, which webhooks may reach only when the operator allows it.
      fetchAllow: parseFetchAllowList('127.0.0.1'),
    });
    try {
      await waitUntil(() => committedToEnd(live.admin, group, run.topics.spikes), 60_000, 'webhooks committed');
    } finally {
      await webhooks.stop();
      await new Promise((resolve) => server.close(resolve));
    }
    // Every STARTED and ENDED on the topic (e-hale's episode, and e-idle's three days after none),
    // once each, whatever order the concurrent deliveries and retries finished in.
    const wanted = feed.book
      .query()
      .flatMap((e) =>
        e.states.filter((s) => s.state !== 'ONGOING').map((s) => `${e.id}/${s.state}/${s.window_end}/${s.observed}`),
      );
    expect(wanted).toHaveLength(3);
    expect(received.map((r) => r.alertId).sort()).toEqual(wanted.sort());
    const deadLetters = await readRawTopic(run.transport, run.topics.deadLetters);
    // Only e-hale's episode ended, and /refuse only wants ENDED.
    expect(deadLetters.map((d) => d.headers['dlq.error.code'])).toEqual(['webhook_failed']);
    expect(deadLetters[0]!.headers['dlq.error.message']).toContain('HTTP 403 after 1 attempts');
  });
});
