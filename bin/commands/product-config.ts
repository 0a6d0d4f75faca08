import { embedderConfigFromEnv, type EmbedderConfig } from '../../processors/embed/embedder-config.js';
import { extractConfigFromEnv, type ExtractConfig } from '../../processors/extract/extract-config.js';
import { llmConfigFromEnv, type LlmSetting } from '../../processors/extract/llm-config.js';
import { webhookEnvSchema, type WebhookEndpoint } from '../../processors/spikes/deliver-webhook.js';
import { alertBudgetFromEnv, spikeConfigFromEnv, type SpikeConfig } from '../../processors/spikes/spike-config.js';
import type { AlertBudget } from '../../processors/spikes/alert-desk.js';
import { availableParallelism } from 'node:os';
import { ConfigError } from '../../schemas/local-infra-config.js';
import { parseFetchAllowList, type FetchAllowList } from '../../schemas/outbound-address-policy.js';
import { TOPIC_PREFIX_PATTERN } from '../../streams/pipeline/topics.js';

/** Everything the processing reads from the environment, validated together. */
export interface ProductConfig {
  embedder: EmbedderConfig;
  llm: LlmSetting;
  extract: ExtractConfig;
  spikes: SpikeConfig;
  /** How many spike stories a day and an hour are delivered, and the significance bars (NEON_SPIKE_BUDGET_*). */
  alertBudget: AlertBudget;
  webhooks: WebhookEndpoint[];
  /** Internal hosts and ranges feeds, their pages and webhooks may reach anyway (`NEON_FETCH_ALLOW`). */
  fetchAllow: FetchAllowList;
  apiKeys: string[];
  intakeTokens: string[];
  /** Keep this many days of news in the datastores (whole months are dropped); undefined: keep all. */
  retentionDays: number | undefined;
  /** Worker threads of the markup stage's text analysis; 0: on the stage's own thread. */
  markupWorkers: number;
}

/**
 * Two markup workers, or one on a single core: the stage's thread stays free for the consumer and
 * the API, a long article holds up one worker rather than every article behind it, and the tagging
 * can use a second core when one is idle.
 */
export const DEFAULT_MARKUP_WORKERS = Math.min(2, availableParallelism());
const MAX_MARKUP_WORKERS = 32;

function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/**
 * Reads the product's settings (NEON_EMBEDDER/NEON_EMBEDDINGS_*, NEON_LLM_*, NEON_EXTRACT_*,
 * NEON_SPIKE_*, NEON_WEBHOOK_*, NEON_API_KEYS, NEON_INTAKE_TOKENS, NEON_RETENTION_DAYS,
 * NEON_TOPIC_PREFIX, NEON_MARKUP_WORKERS, NEON_FETCH_ALLOW) once at start-up and throws one
 * ConfigError that lists every problem of every part, so a misconfigured deployment is fixed in one
 * round rather than one variable at a time.
 */
export function loadProductConfig(env: Readonly<Record<string, string | undefined>>): ProductConfig {
  const problems: string[] = [];
  const attempt = <T>(read: () => T): T | undefined => {
    try {
      return read();
    } catch (error) {
      if (error instanceof ConfigError) {
        problems.push(...error.problems);
        return undefined;
      }
      throw error;
    }
  };
  const embedder = attempt(() => embedderConfigFromEnv(env));
  const llm = attempt(() => llmConfigFromEnv(env));
  const extract = extractConfigFromEnv(env);
  if (!extract.ok) problems.push(...extract.problems);
  const spikes = spikeConfigFromEnv({ ...env });
  if (!spikes.ok) problems.push(...spikes.problems);
  const budget = alertBudgetFromEnv({ ...env });
  if (!budget.ok) problems.push(...budget.problems);
  const topicPrefix = env.NEON_TOPIC_PREFIX ?? '';
  if (!TOPIC_PREFIX_PATTERN.test(topicPrefix)) {
    problems.push(`NEON_TOPIC_PREFIX: letters, digits, '.', '_' and '-' only, at most 100 (got "${topicPrefix}")`);
  }
  const retention = env.NEON_RETENTION_DAYS?.trim();
  const retentionDays = retention === undefined || retention === '' ? undefined : Number(retention);
  if (retentionDays !== undefined && !(Number.isInteger(retentionDays) && retentionDays >= 31)) {
    problems.push(
      `NEON_RETENTION_DAYS: a whole number of days, at least 31 (months are dropped whole), got "${retention}"`,
    );
  }
  const workers = env.NEON_MARKUP_WORKERS?.trim();
  const markupWorkers = workers === undefined || workers === '' ? DEFAULT_MARKUP_WORKERS : Number(workers);
  if (!(Number.isInteger(markupWorkers) && markupWorkers >= 0 && markupWorkers <= MAX_MARKUP_WORKERS)) {
    problems.push(
      `NEON_MARKUP_WORKERS: a whole number from 0 (tag on the stage's own thread) to ${MAX_MARKUP_WORKERS}, got "${workers}"`,
    );
  }
  const fetchAllow = attempt(() => parseFetchAllowList(env.NEON_FETCH_ALLOW));
  const webhooks = webhookEnvSchema.safeParse(env);
  if (!webhooks.success) {
    problems.push(...webhooks.error.issues.map((i) => `${String(i.path[0] ?? '')}: ${i.message}`));
  }
  if (
    problems.length > 0 ||
    !embedder ||
    !llm ||
    !extract.ok ||
    !spikes.ok ||
    !budget.ok ||
    !webhooks.success ||
    !fetchAllow
  ) {
    throw new ConfigError(problems);
  }
  return {
    embedder,
    llm,
    extract: extract.config,
    spikes: spikes.config,
    alertBudget: budget.budget,
    webhooks: webhooks.data,
    fetchAllow,
    apiKeys: list(env.NEON_API_KEYS),
    intakeTokens: list(env.NEON_INTAKE_TOKENS),
    retentionDays,
    markupWorkers,
  };
}
