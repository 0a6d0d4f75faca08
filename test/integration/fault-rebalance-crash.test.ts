import { setTimeout as sleep } from 'node:timers/promises';
import { logLevel } from 'kafkajs';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { seededRandom } from '../../devkit/interval-statistics.js';
import { ElasticsearchDatastore } from '../../streams/elasticsearch/elasticsearch-datastore.js';
import { createKafkaClient } from '../../streams/kafka/kafka-client.js';
import { createKafkaTransport, withKafkaRetries } from '../../streams/kafka/kafka-transport.js';
import type { Transport } from '../../streams/runtime/transport.js';
import {
  collectingLogger,
  committedTotal,
  createScenarioTopics,
  describeOutcome,
  describeProgress,
  expectSameOutcome,
  groupOf,
  prefixedScenarioNames,
  publishPaced,
  readOutcome,
  runReference,
  sampleArticles,
  splitSample,
  stageCounters,
  stageInputs,
  stageProcess,
  startScenarioStages,
  startSlowProxy,
  topicEnd,
  waitUntilSettled,
  type IngestPlan,
  type RunOutcome,
  type ScenarioStage,
  type ScenarioTopics,
  type SlowProxy,
  type StageCounters,
  type StageProcess,
  faultSeed,
} from '../harness/fault-scenario.js';
import { waitUntil } from '../harness/invariants.js';
import { useLiveClients } from '../harness/live-clients.js';

/**
 * S10: a consumer crashes — SIGKILL, no leave — while its group is rebalancing under load. A stage
 * runs as two `neon pipeline --stages <stage> --no-api` processes of one group while the stages
 * around it run here on real articles streamed in one every 80 ms. A third process of the group
 * starts; as soon as the broker's own describeGroups shows the group rebalancing (PreparingRebalance
 * or CompletingRebalance), a member holding work it has not finished is killed, and the group is
 * checked to be still rebalancing right after: the crash landed inside the rebalance. The members
 * that rejoined wait for the dead one until its session expires, then go on without it and redo
 * what it had not committed. At the end both datastores (by content key and id, none twice),
 * `neon.dlq` (by distinct source record) and the mentions the spike stage was given equal an
 * undisturbed run's, and the spike episodes are what the product's detector decides for the run's
 * own mentions (see `test/harness/fault-scenario.ts`).
 *
 * Two stages, two ways a group shares work:
 * - the interaction indexer, balanced: two members share the three partitions of its input (one
 *   partition in the undisturbed run: documents are keyed by id, so the order across partitions
 *   changes nothing the comparison reads), writing to Elasticsearch through a proxy that holds each
 *   reply back 150 ms so both hold records in flight. Partitions move between live members while
 *   their records are in flight, which also exercises the record source's refusal to track a record
 *   admitted under an earlier generation (streams/record-source.ts). The victim is drawn (seeded)
 *   among the members with records in flight.
 * - dedupe, single-active: one member decides, the other stands by with a warm window. The
 *   incumbent is killed mid-rebalance; a standby must take over with its window caught up. That it
 *   held uncommitted work is proven after the kill: it had taken more records than its group has
 *   committed for good (it was the partition's only consumer from offset 0).
 *
 * NEON_FAULT_SEED=<seed it printed> repeats the draws.
 */

const live = useLiveClients();
const log = (line: string): void => console.log(`[fault S10] ${line}`);
const SEED = faultSeed();
const PUBLISH_INTERVAL_MS = 80;
const REBALANCING: ReadonlySet<string> = new Set(['PreparingRebalance', 'CompletingRebalance', 'AwaitingSync']);

interface Case {
  stage: ScenarioStage;
  /** Partitions of the run's topics other than one. */
  partitions: Partial<Record<keyof ScenarioTopics, number>>;
  /** Elasticsearch replies held back this long for the stage's processes (0: straight through). */
  slowReplyMs: number;
  /** Members that take records before the third joins. */
  working: number;
}

const CASES: Case[] = [
  { stage: 'index-interactions', partitions: { interactions: 3 }, slowReplyMs: 150, working: 2 },
  { stage: 'dedupe', partitions: {}, slowReplyMs: 0, working: 1 },
];

let shared: Promise<{ transport: Transport; plan: IngestPlan; reference: RunOutcome }> | undefined;

/** One undisturbed run for both cases. */
function referenceRun(): Promise<{ transport: Transport; plan: IngestPlan; reference: RunOutcome }> {
  shared ??= (async () => {
    log(`seed ${SEED} (NEON_FAULT_SEED=${SEED} repeats the draws)`);
    const transport = createKafkaTransport(
      createKafkaClient({ clientId: 'fault-s10', brokers: inject('kafkaBrokers'), logLevel: logLevel.NOTHING }),
    );
    const plan = splitSample(await sampleArticles(300), 120);
    const reference = await runReference(transport, live.admin, live.es, plan, live.cleanup, 's10-ref');
    log(`undisturbed run: ${describeOutcome(reference.outcome)} in ${reference.ms} ms`);
    return { transport, plan, reference: reference.outcome };
  })();
  return shared;
}

async function crashDuringRebalance(spec: Case, random: () => number): Promise<void> {
  const { transport, plan, reference } = await referenceRun();
  const say = (line: string): void => log(`${spec.stage}: ${line}`);
  const names = prefixedScenarioNames(`s10-${spec.stage}`);
  live.cleanup.topics.push(...(await createScenarioTopics(transport, names, spec.partitions)));
  const group = groupOf(names, spec.stage);
  const input = new Map(stageInputs(names)).get(spec.stage)!;
  const singlePartition = (await withKafkaRetries(() => live.admin.fetchTopicOffsets(input))).length === 1;
  let proxy: SlowProxy | undefined;
  let elasticsearchUrl = inject('elasticsearchUrl');
  if (spec.slowReplyMs > 0) {
    const es = new URL(elasticsearchUrl);
    proxy = await startSlowProxy({ host: es.hostname, port: Number(es.port) }, spec.slowReplyMs);
    elasticsearchUrl = `http://127.0.0.1:${proxy.port}`;
  }
  const launcher = stageProcess(names, [spec.stage], { kafkaBrokers: inject('kafkaBrokers'), elasticsearchUrl });
  const logger = collectingLogger();
  const datastore = new ElasticsearchDatastore({ es: live.es, prefix: names.indexPrefix });
  const upstream = await startScenarioStages(transport, names, {
    datastore,
    only: stageInputs(names)
      .map(([stage]) => stage)
      .filter((stage) => stage !== spec.stage),
    log: logger.log,
  });
  const members: StageProcess[] = [];
  const describeGroup = async (): Promise<{ state: string; members: number }> => {
    const { groups } = await live.admin.describeGroups([group]);
    return { state: groups[0]!.state, members: groups[0]!.members.length };
  };
  const counters = async (of: readonly StageProcess[]): Promise<StageCounters[]> =>
    Promise.all(of.map(async (m) => stageCounters(await m.metricsUrl, spec.stage)));
  // The run's indices go whatever happens; a failed run is read from its log.
  try {
    try {
      members.push(launcher.start(), launcher.start());
      await Promise.all(members.map((m) => m.ready));
      await waitUntil(async () => (await describeGroup()).members === 2, 60_000, 'two members in the group');

      let published = false;
      const began = Date.now();
      const publishing = publishPaced(transport, names, plan, PUBLISH_INTERVAL_MS).then(() => (published = true));
      publishing.catch(() => undefined);
      const firstTwo = members.slice();
      await waitUntil(
        async () => (await counters(firstTwo)).filter((c) => c.received > 0).length >= spec.working,
        90_000,
        `${spec.working} member(s) taking records`,
      );
      say(`${spec.working} member(s) working ${Date.now() - began} ms into the stream; starting a third`);

      const third = launcher.start();
      members.push(third);
      const thirdStarted = Date.now();
      // The third member's JoinGroup starts the rebalance; the others learn of it at their next
      // heartbeat and rejoin. Kill, while that is under way, a member holding unfinished work.
      let seenState = '';
      let victim: { index: number; before: StageCounters } | undefined;
      const deadline = Date.now() + 120_000;
      while (victim === undefined) {
        if (Date.now() > deadline) throw new Error(`no rebalance with work in flight within 120 s; last ${seenState}`);
        if (!third.running()) throw new Error(`the third member exited:\n${third.output().slice(-3000)}`);
        seenState = (await describeGroup()).state;
        if (!REBALANCING.has(seenState)) {
          await sleep(20);
          continue;
        }
        const now = await counters(firstTwo);
        // Taken and not finished; on a single partition, also taken and not yet committed.
        const committed = singlePartition ? await committedTotal(live.admin, group, input) : undefined;
        const holding = now
          .map((before, index) => ({ index, before }))
          .filter(
            ({ before }) => before.inFlight > 0 || (committed !== undefined && BigInt(before.received) > committed),
          );
        if (holding.length === 0) {
          await sleep(10);
          continue;
        }
        victim = holding[Math.floor(random() * holding.length)]!;
      }
      const killed = firstTwo[victim.index]!;
      killed.kill('SIGKILL');
      const killedAt = Date.now();
      const after = await describeGroup();
      expect(await killed.exited, 'ended by SIGKILL').toBeNull();
      const committedAfter = await committedTotal(live.admin, group, input);
      const endAtKill = await topicEnd(live.admin, input);
      say(
        `member ${victim.index + 1} killed with the group ${seenState} (${after.state} right after, ${after.members} members), ` +
          `${killedAt - thirdStarted} ms after the third started, ${killedAt - began} ms into the stream; it had taken ` +
          `${victim.before.received} records (${victim.before.inFlight} in flight, ${victim.before.sent} outputs acknowledged); ` +
          `the group has committed ${committedAfter} of ${endAtKill}; still publishing: ${!published}`,
      );
      // Inside the rebalance, under load, with work the dead member had not finished.
      expect(REBALANCING.has(after.state), `group state right after the kill: ${after.state}`).toBe(true);
      expect(published, 'articles still being published at the kill').toBe(false);
      expect(committedAfter).toBeLessThan(endAtKill);
      if (singlePartition) expect(BigInt(victim.before.received)).toBeGreaterThan(committedAfter);
      else expect(victim.before.inFlight).toBeGreaterThan(0);

      // The survivors go on without the dead member once its session expires.
      const survivors = members.filter((m) => m !== killed);
      await waitUntil(
        async () => {
          const now = await describeGroup();
          return now.state === 'Stable' && now.members === 2;
        },
        120_000,
        'the group stable with the two survivors',
      );
      say(`group stable with the two survivors ${Date.now() - killedAt} ms after the kill`);
      await publishing;
      await waitUntilSettled(live.admin, names, 180_000).catch(async (error: unknown) => {
        throw new Error(
          `${String(error)}; ${await describeProgress(live.admin, names, upstream)}\n` +
            survivors.map((m) => m.output().slice(-2000)).join('\n'),
        );
      });
      const taken = await counters(survivors);
      say(
        `settled ${Date.now() - began} ms into the stream; the survivors took ${taken.map((c) => c.received).join(' and ')} ` +
          `records; warnings here: ${logger.summary()}`,
      );
      for (const m of survivors) {
        m.kill('SIGTERM');
        expect(await m.exited, m.output().slice(-2000)).toBe(0);
      }
    } finally {
      for (const m of members) if (m.running()) m.kill('SIGKILL');
      await upstream.stop();
      await proxy?.close();
    }

    const outcome = await readOutcome(live.es, transport, names);
    say(`disturbed run: ${describeOutcome(outcome)}`);
    expectSameOutcome(outcome, reference);
  } finally {
    await datastore.destroy().catch(() => undefined);
  }
}

describe('S10: a consumer killed while its group rebalances under load', () => {
  afterAll(async () => {
    if (shared) await (await shared).transport.close();
  });
  for (const [n, spec] of CASES.entries()) {
    it(`${spec.stage}: the group recovers without the dead member, and the run ends with exactly the undisturbed contents`, async () => {
      // A generator per case, so that running one case alone draws as in a full run.
      await crashDuringRebalance(spec, seededRandom(SEED + n));
    }, 360_000);
  }
});
