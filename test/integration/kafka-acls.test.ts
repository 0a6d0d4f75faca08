import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterTransport } from '../../bin/commands/cluster-transport.js';
import { loadProductConfig } from '../../bin/commands/product-config.js';
import { startProductRuntime, type ProductRuntime } from '../../bin/commands/product-runtime.js';
import { kafkaUserName, KEDA_KAFKA_USER } from '../../infra/kubernetes/cluster-names.js';
import { normalizeArticle } from '../../processors/intake/normalize-article.js';
import type { Query } from '../../schemas/records.generated.js';
import { TransportArticlePublisher } from '../../streams/stages/intake-publisher.js';
import { DLQ_HEADERS } from '../../streams/runtime/dead-letter-writer.js';
import { EmbeddedDatastore } from '../../streams/embedded/embedded-datastore.js';
import { createKafkaTransport } from '../../streams/kafka/kafka-transport.js';
import { topicRecord } from '../../streams/runtime/record-codec.js';
import type { StageProgress } from '../../streams/pipeline/neon-pipeline.js';
import {
  DEPLOYED_PROCESSES,
  STAGE_CATALOG,
  stageDescriptor,
  type StageName,
} from '../../streams/pipeline/stage-catalog.js';
import { stageLag } from '../../streams/telemetry/stage-lag.js';
import { TAIL_GROUP_PREFIX, TOPICS } from '../../streams/pipeline/topics.js';
import type { Transport } from '../../streams/runtime/transport.js';
import { NEWS_STORIES } from '../fixtures/news-stories.js';
import { startSecuredKafka, type SecuredKafka } from '../harness/secured-kafka.js';
import { readRawTopic, readTopicRecords } from '../harness/topic-contents.js';

/**
 * The ACLs generated for each process (k8s/base/generated/kafka-users.yaml, from `processAcls`) on
 * a real broker that enforces them: SASL_SSL with SCRAM-SHA-512 logins and the StandardAuthorizer
 * denying whatever no ACL allows. Every stage runs in its own product runtime as its own Kafka user,
 * connected the product's way (`clusterTransport` reading KAFKA_TLS, KAFKA_CA_FILE and KAFKA_SASL_*),
 * and articles flow through all of them; then real clients check that a login cannot do what its
 * ACLs do not name. A denied operation the product needs, or an ACL broader than the catalog, fails here.
 */

const NOW = Date.UTC(2025, 3, 1);
const QUERY_ID = 'acl-check-question';
const AUTH_PROBLEM = /authori[sz]|sasl|authenticat|acl/i;

let kafka: SecuredKafka;
let hookCalls = 0;
let admin: Transport;
/** What beforeAll started, stopped in reverse order by afterAll (even after a failed start). */
const started: (() => Promise<unknown>)[] = [];
const datastore = new EmbeddedDatastore('neon');
const runtimes = new Map<StageName, ProductRuntime>();
/** Warnings and errors every process logged, with who logged them. */
const logged: string[] = [];
let settled: StageProgress[] = [];
/** What the broker's authorizer denied while the pipeline ran (before the checks below try on purpose). */
let deniedWhileRunning: string[] = [];

function say(line: string): void {
  process.stderr.write(`[kafka-acls] ${line}\n`);
}

/** The process's Kafka transport, built as `neon pipeline` builds it, from its Deployment's environment. */
async function processTransport(name: string): Promise<Transport> {
  const user = kafkaUserName(name);
  const { transport } = await clusterTransport(user, kafka.env(user), []);
  return transport;
}

/** The Kafka error code name of a failure, looking through kafkajs's wrappers (retries, crashes). */
function kafkaErrorType(error: unknown): string | undefined {
  let current = error as { type?: unknown; originalError?: unknown; cause?: unknown } | null | undefined;
  for (let depth = 0; current !== undefined && current !== null && depth < 6; depth++) {
    if (typeof current.type === 'string') return current.type;
    current = (current.originalError ?? current.cause) as typeof current;
  }
  return undefined;
}

/** Tries to consume `topic` in `groupId` as a real consumer; resolves with how it failed and what it got. */
async function tryToConsume(client: Kafka, groupId: string, topic: string): Promise<{ error: unknown; got: number }> {
  const consumer = client.consumer({ groupId, retry: { retries: 2 } });
  let got = 0;
  const crashed = new Promise<unknown>((resolve) =>
    consumer.on(consumer.events.CRASH, (event) => resolve(event.payload.error)),
  );
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      eachMessage: () => {
        got += 1;
        return Promise.resolve();
      },
    });
    const error = await Promise.race([crashed, sleep(30_000).then(() => new Error('no failure within 30 s'))]);
    return { error, got };
  } catch (error) {
    return { error, got };
  } finally {
    await consumer.disconnect().catch(() => undefined);
  }
}

/** The broker's audit line for a denied operation, once the check below has provoked it. */
async function expectDenied(user: string, operation: string, resource: string, request: string): Promise<void> {
  const pattern = `User:${user} is Denied operation = ${operation} from host = 127.0.0.1 on resource = ${resource} for request = ${request} `;
  expect((await kafka.denials()).filter((line) => line.includes(pattern))).not.toEqual([]);
}

function describeFailure(): string {
  return `broker log: ${kafka.logFile}\nprocess logs:\n${logged.slice(-30).join('\n')}`;
}

beforeAll(async () => {
  const begun = Date.now();
  const elapsed = (): string => `${((Date.now() - begun) / 1000).toFixed(1)} s`;
  // Not a skip: without the secured broker this file fails, with the broker's reason.
  kafka = await startSecuredKafka(say);
  started.push(() => kafka.stop());
  say(`secured broker ready after ${elapsed()}`);
  admin = createKafkaTransport(kafka.client('admin'));
  started.push(() => admin.close());

  const hooks: Server = createServer((req, res) =>
    req.resume().on('end', () => {
      hookCalls += 1;
      res.writeHead(204).end();
    }),
  );
  await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
  started.push(() => new Promise((resolve) => hooks.close(resolve)));
  const config = loadProductConfig({
    NEON_EMBEDDER: 'hashing',
    // Sensitive enough that these few days of news raise alerts, so the webhook stage has work too.
    // NEON's rule at its most sensitive (a baseline longer than the 7 days an ended episode stays silent).
    NEON_SPIKE_RULES: 'day',
    NEON_SPIKE_METHOD: 'neon',
    NEON_SPIKE_DAY_MIN: '1',
    NEON_SPIKE_DAY_STD: '0',
    NEON_SPIKE_DAY_WINDOW: '1',
    NEON_SPIKE_DAY_BASELINE: '8',
    NEON_WEBHOOK_URLS: `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/alerts`,
    NEON_WEBHOOK_SECRET: 'a-webhook-secret-of-some-length',
    // The receiver is on loopback, which webhooks may reach only when the operator allows it.
    NEON_FETCH_ALLOW: '127.0.0.1',
  });

  // Downstream first, as the pipeline starts them: one process per stage, each its own Kafka user.
  for (const descriptor of [...STAGE_CATALOG].reverse()) {
    const runtime = await startProductRuntime({
      mode: 'cluster',
      transport: await processTransport(descriptor.name),
      datastore,
      config,
      stages: [descriptor.name],
      // The query Deployment also serves the API; the processors serve nothing.
      api: descriptor.name === 'query' ? { port: 0 } : null,
      metricsPort: null,
      say: () => undefined,
      log: (level, message, fields) => {
        if (level !== 'info') logged.push(`${descriptor.name} ${level}: ${message} ${JSON.stringify(fields ?? {})}`);
      },
    });
    runtimes.set(descriptor.name, runtime);
    started.push(() => runtime.stop());
  }
  say(`${runtimes.size} stage processes running after ${elapsed()}`);

  // As `neon intake` connects: it checks its two topics exist (describing, never creating, them here).
  const intake = (
    await clusterTransport(kafkaUserName('intake'), kafka.env(kafkaUserName('intake')), [
      TOPICS.articles,
      TOPICS.deadLetters,
    ])
  ).transport;
  started.push(() => intake.close());
  // Its readiness probe: the broker answers for the topic it writes.
  await intake.endOffsets(TOPICS.articles);
  const publisher = new TransportArticlePublisher(intake.producer(), { processor: 'intake' });
  // In publication order, each through dedupe before the next: the spike detector's clocks then see
  // the days in order, so the alerts (and the webhook stage's work) do not depend on scheduling.
  const upstream = (['markup', 'chunk', 'dedupe'] as const).map((name) => stageDescriptor(name));
  const published = (input: (typeof NEWS_STORIES)[number]): number => new Date(input.published_at ?? 0).getTime();
  for (const input of [...NEWS_STORIES].sort((a, b) => published(a) - published(b))) {
    await publisher.publish(normalizeArticle(input, NOW));
    const deadline = Date.now() + 30_000;
    for (;;) {
      const lags = await Promise.all(upstream.map((stage) => stageLag(admin, stage)));
      if (lags.every((l) => l.lag === 0 && l.everCommitted)) break;
      if (Date.now() > deadline) throw new Error(`an article did not get through dedupe: ${describeFailure()}`);
      await sleep(100);
    }
  }
  // Intake also dead-letters what it refuses.
  await publisher.reject(Buffer.from('{'), { reason: 'invalid_json', message: 'not JSON' } as never, 'acl-test');

  // A client's question on neon.queries (clients are not deployed processes: admin stands in).
  const question: Query = {
    id: QUERY_ID,
    q: 'harbour bridge',
    t_q: NOW,
    k: 5,
    strategy: 'temporal',
    time_constraint: 'NONE',
    constraint_at: null,
    window_days: 60,
    datastore: 'INTERACTIONS',
    hops: 1,
    as_of_only: true,
  };
  const asker = admin.producer();
  await asker.send(TOPICS.queries, [topicRecord(TOPICS.queries, 'Query', QUERY_ID, question)]);
  await asker.disconnect();

  // Every stage caught up, as the query service's status page sees it (its describe-everything ACLs).
  const query = runtimes.get('query')!;
  // Twice in a row: one look could catch a stage committed before its output reached the next one's view.
  const deadline = Date.now() + 120_000;
  let quiet = 0;
  for (;;) {
    settled = await query.pipeline.progress();
    const interactions = await datastore.count('interactions');
    quiet = settled.every((s) => s.lag === 0) && interactions > 0 ? quiet + 1 : 0;
    if (quiet === 2 || Date.now() > deadline) break;
    await sleep(500);
  }
  say(
    `settled after ${elapsed()}: ${settled.map((s) => `${s.stage} lag ${s.lag}`).join(', ')}; ` +
      `${await datastore.count('interactions')} interactions, ${await datastore.count('chunks')} chunks`,
  );
  deniedWhileRunning = await kafka.denials();
}, 240_000);

afterAll(async () => {
  // Last started, first stopped: intake, the stages upstream first, then the broker (by its pid).
  const failures: unknown[] = [];
  for (const stop of started.reverse()) await stop().catch((error: unknown) => failures.push(error));
  if (failures.length > 0) throw failures[0];
}, 60_000);

describe('every process does its work with exactly its generated ACLs', () => {
  it('articles flowed through every stage: all caught up, interactions indexed, nothing died', async () => {
    expect(
      settled.map((s) => [s.stage, s.lag]),
      describeFailure(),
    ).toEqual(STAGE_CATALOG.map((s) => [s.name, 0]));
    expect(await datastore.count('interactions')).toBeGreaterThan(0);
    expect(await datastore.count('chunks')).toBeGreaterThan(0);
    for (const [name, runtime] of runtimes) {
      expect(runtime.pipeline.ended(), `${name} stopped`).toEqual([]);
      const health = await runtime.health();
      expect(health, `${name} health`).toEqual({ live: true, ready: true, problems: [] });
    }
    // The spike path did its work too: alerts on entity.spikes, delivered to the webhook.
    expect((await readRawTopic(admin, TOPICS.spikes)).length, 'spike alerts').toBeGreaterThan(0);
    expect(hookCalls, 'webhooks delivered').toBeGreaterThan(0);
  });

  it('each process reads its own lag with its own login, as its status and probes do', async () => {
    for (const descriptor of STAGE_CATALOG) {
      const transport = await processTransport(descriptor.name);
      try {
        const { lag, everCommitted } = await stageLag(transport, stageDescriptor(descriptor.name));
        expect([descriptor.name, lag, everCommitted]).toEqual([descriptor.name, 0, true]);
      } finally {
        await transport.close();
      }
    }
  });

  it('the query stage answered on neon.answers', async () => {
    const answers = await readTopicRecords(admin, TOPICS.answers, 'Answer');
    expect(answers.map((a) => a.key)).toContain(QUERY_ID);
  });

  it('nothing was dead-lettered or logged for authorization reasons', async () => {
    const deadLetters = await readRawTopic(admin, TOPICS.deadLetters);
    const problems = deadLetters.filter((d) =>
      AUTH_PROBLEM.test(`${d.headers[DLQ_HEADERS.errorCode]} ${d.headers[DLQ_HEADERS.errorMessage]}`),
    );
    expect(problems.map((d) => d.headers)).toEqual([]);
    // Intake's refusal is there: intake may write the dead-letter topic.
    expect(deadLetters.map((d) => d.headers[DLQ_HEADERS.stage])).toContain('intake');
    expect(logged.filter((line) => AUTH_PROBLEM.test(line))).toEqual([]);
  });

  it('the broker denied nothing while the pipeline ran (not even a request retried or ignored)', () => {
    expect(deniedWhileRunning).toEqual([]);
  });
});

describe('and nothing else', () => {
  it("each login sees exactly the topics its process uses (KEDA: the stages' inputs)", async () => {
    const expected = (user: string): string[] => {
      if (user === KEDA_KAFKA_USER) return STAGE_CATALOG.flatMap((stage) => stage.reads);
      const process = DEPLOYED_PROCESSES.find((p) => kafkaUserName(p.name) === user)!;
      return process.describesAll ? Object.values(TOPICS) : [...process.reads, ...process.follows, ...process.writes];
    };
    for (const user of kafka.users.filter((u) => u !== 'admin')) {
      const client = kafka.client(user).admin();
      await client.connect();
      try {
        expect([user, (await client.listTopics()).sort()]).toEqual([user, [...new Set(expected(user))].sort()]);
      } finally {
        await client.disconnect();
      }
    }
  });

  it('markup cannot consume news.chunks', async () => {
    // A tail group markup may use, so only the topic is in question.
    const { error, got } = await tryToConsume(
      kafka.client(kafkaUserName('markup')),
      `${TAIL_GROUP_PREFIX}acl-check.${randomUUID()}`,
      TOPICS.chunks,
    );
    expect(kafkaErrorType(error), String(error)).toBe('TOPIC_AUTHORIZATION_FAILED');
    expect(got).toBe(0);
    await expectDenied(kafkaUserName('markup'), 'DESCRIBE', `Topic:LITERAL:${TOPICS.chunks}`, 'Metadata');
  });

  it('markup cannot produce to neon.interactions', async () => {
    const transport = await processTransport('markup');
    try {
      const error = await transport
        .producer()
        .send(TOPICS.interactions, [{ key: 'forged', value: Buffer.from('not from extract') }])
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(kafkaErrorType(error), String(error)).toBe('TOPIC_AUTHORIZATION_FAILED');
    } finally {
      await transport.close();
    }
    // And the write really did not land.
    const interactions = await readRawTopic(admin, TOPICS.interactions);
    expect(interactions.filter((r) => r.key === 'forged')).toEqual([]);
    await expectDenied(kafkaUserName('markup'), 'DESCRIBE', `Topic:LITERAL:${TOPICS.interactions}`, 'Metadata');
  });

  it('query may describe news.articles (offsets) but not read its records', async () => {
    const client = kafka.client(kafkaUserName('query'));
    const transport = createKafkaTransport(client);
    const ends = await transport.endOffsets(TOPICS.articles);
    expect(ends.reduce((sum, end) => sum + end, 0n)).toBe(BigInt(NEWS_STORIES.length));
    const { error, got } = await tryToConsume(client, `${TAIL_GROUP_PREFIX}acl-check.${randomUUID()}`, TOPICS.articles);
    expect(kafkaErrorType(error), String(error)).toBe('TOPIC_AUTHORIZATION_FAILED');
    expect(got).toBe(0);
    await expectDenied(kafkaUserName('query'), 'READ', `Topic:LITERAL:${TOPICS.articles}`, 'Fetch');
  });

  it("keda reads a stage group's committed offsets (its lag) but cannot consume", async () => {
    const client = kafka.client(KEDA_KAFKA_USER);
    // What its Kafka scaler reads for every ScaledObject: end offsets and the group's committed ones.
    const transport = createKafkaTransport(client);
    for (const stage of STAGE_CATALOG) {
      const { lag, everCommitted } = await stageLag(transport, stage);
      expect([stage.name, lag, everCommitted]).toEqual([stage.name, 0, true]);
    }
    // Joining the very group whose offsets it reads is refused (it holds no Read on any group or topic).
    const markup = stageDescriptor('markup');
    const { error, got } = await tryToConsume(client, markup.group, TOPICS.articles);
    expect(kafkaErrorType(error), String(error)).toBe('GROUP_AUTHORIZATION_FAILED');
    expect(got).toBe(0);
    await expectDenied(KEDA_KAFKA_USER, 'READ', `Group:LITERAL:${markup.group}`, 'JoinGroup');
  });

  it('a wrong password fails to authenticate', async () => {
    const user = kafkaUserName('markup');
    const { transport } = await clusterTransport(user, kafka.env(user, 'not-the-password'), []);
    const error = await transport.endOffsets(TOPICS.deadLetters).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as Error | undefined)?.name, String(error)).toBe('KafkaJSSASLAuthenticationError');
    expect(String(error)).toMatch(/SCRAM.*authentication failed/i);
  });
});
