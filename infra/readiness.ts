import { Kafka, logLevel } from 'kafkajs';
import type { KafkaSecurity } from '../schemas/connection-config.js';
import { kafkaSecurityConfig } from '../streams/kafka/kafka-client.js';

/**
 * Readiness probes shared by the launchers, the CLI and the test harness. Both answer "is it
 * usable now?", never throw, and never wait longer than asked.
 */
export async function kafkaClusterReady(
  brokers: string[],
  timeoutMs = 3000,
  security?: KafkaSecurity,
): Promise<{ ready: boolean; detail: string }> {
  const kafka = new Kafka({
    clientId: 'neon-readiness',
    brokers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: timeoutMs,
    requestTimeout: timeoutMs,
    retry: { retries: 0 },
    ...kafkaSecurityConfig(security),
  });
  const admin = kafka.admin();
  const timer = new Promise<never>((_, reject) => {
    const handle = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    handle.unref();
  });
  try {
    const cluster = await Promise.race([
      (async () => {
        await admin.connect();
        return admin.describeCluster();
      })(),
      timer,
    ]);
    if (cluster.brokers.length === 0) return { ready: false, detail: 'no brokers registered yet' };
    return {
      ready: true,
      detail: `cluster ${cluster.clusterId}, ${cluster.brokers.length} broker(s), controller ${cluster.controller}`,
    };
  } catch (error) {
    return { ready: false, detail: (error as Error).message };
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

export interface ClusterHealth {
  status: 'green' | 'yellow' | 'red';
  number_of_nodes: number;
  cluster_name: string;
}

/**
 * `/_cluster/health` rather than `GET /`: the integ-test distribution has no root endpoint, and
 * health is what tells us the node can take writes.
 */
export async function elasticsearchReady(
  url: string,
  timeoutMs = 3000,
  headers: Record<string, string> = {},
): Promise<{ ready: boolean; detail: string; version?: string }> {
  try {
    const response = await fetch(`${url}/_cluster/health`, { headers, signal: AbortSignal.timeout(timeoutMs) });
    if (!response.ok) return { ready: false, detail: `HTTP ${response.status} from /_cluster/health` };
    const health = (await response.json()) as ClusterHealth;
    if (health.status === 'red') return { ready: false, detail: `cluster ${health.cluster_name} is red` };
    return {
      ready: true,
      detail: `cluster ${health.cluster_name} ${health.status}, ${health.number_of_nodes} node(s)`,
    };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    return { ready: false, detail: cause ?? (error as Error).message };
  }
}
