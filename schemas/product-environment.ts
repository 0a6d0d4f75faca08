/**
 * Every environment variable neon-stream reads, declared once. Tests hold the code to this list (a
 * variable read but not declared, or declared but read nowhere, fails) and the Kubernetes
 * manifests to it (they may set only `deployment` variables, secrets only from Secrets, and each
 * Deployment's settings must pass the product's own configuration check).
 */
export type EnvironmentScope =
  /** Read by the deployed processes (`neon pipeline`, `neon intake`): what a Deployment may set. */
  | 'deployment'
  /** Local set-up only: `neon infra`, `neon start`, the cache and data directories' defaults. */
  | 'local'
  /** The command-line client talking to a running service. */
  | 'client';

export interface EnvironmentVariable {
  name: string;
  scope: EnvironmentScope;
  /** A credential: comes from a Secret on Kubernetes, never from a ConfigMap or a literal. */
  secret: boolean;
  what: string;
}

const deployment = (name: string, what: string, secret = false): EnvironmentVariable => ({
  name,
  scope: 'deployment',
  secret,
  what,
});
const local = (name: string, what: string): EnvironmentVariable => ({ name, scope: 'local', secret: false, what });
const client = (name: string, what: string, secret = false): EnvironmentVariable => ({
  name,
  scope: 'client',
  secret,
  what,
});

const spikeRuleVariables = (['DAY', 'HOUR'] as const).flatMap((rule) => [
  deployment(`NEON_SPIKE_${rule}_STD`, `${rule.toLowerCase()} rule: k in mean + k·std`),
  deployment(`NEON_SPIKE_${rule}_MIN`, `${rule.toLowerCase()} rule: minimum chunks in the rolling window`),
  deployment(`NEON_SPIKE_${rule}_WINDOW`, `${rule.toLowerCase()} rule: buckets in the rolling window`),
  deployment(`NEON_SPIKE_${rule}_BASELINE`, `${rule.toLowerCase()} rule: trailing rolling sums in the baseline`),
  deployment(`NEON_SPIKE_${rule}_LATENESS_HOURS`, `${rule.toLowerCase()} rule: how late a mention still counts`),
  deployment(`NEON_SPIKE_${rule}_METHOD`, `${rule.toLowerCase()} rule: surprise (count model) or neon`),
  deployment(`NEON_SPIKE_${rule}_SIGNIFICANCE`, `${rule.toLowerCase()} rule: −log10 p at which an episode starts`),
  deployment(`NEON_SPIKE_${rule}_END_SIGNIFICANCE`, `${rule.toLowerCase()} rule: −log10 p below which it ends`),
  deployment(`NEON_SPIKE_${rule}_MIN_ARTICLES`, `${rule.toLowerCase()} rule: minimum distinct articles`),
  deployment(`NEON_SPIKE_${rule}_OVERDISPERSION`, `${rule.toLowerCase()} rule: φ of the count model`),
  deployment(
    `NEON_SPIKE_${rule}_VOLUME_PRIOR`,
    `${rule.toLowerCase()} rule: pseudo-mentions a bucket's feed volume is read through (0: as counted)`,
  ),
  deployment(
    `NEON_SPIKE_${rule}_OVERDISPERSION_PRIOR_WEIGHT`,
    `${rule.toLowerCase()} rule: weight of the shared φ against an entity's own estimate (pseudo-observations), or fixed (one φ for all)`,
  ),
]);

export const PRODUCT_ENVIRONMENT: readonly EnvironmentVariable[] = [
  // Where Kafka and Elasticsearch are, and how to authenticate.
  deployment('KAFKA_BROKERS', 'Kafka bootstrap servers, host:port,…'),
  deployment('KAFKA_TLS', 'true: TLS to the brokers (implied by KAFKA_CA_FILE)'),
  deployment('KAFKA_CA_FILE', 'PEM file of the CA that signed the brokers’ certificates'),
  deployment('KAFKA_SASL_MECHANISM', 'plain, scram-sha-256 or scram-sha-512'),
  deployment('KAFKA_SASL_USERNAME', 'SASL user (the processor’s KafkaUser)'),
  deployment('KAFKA_SASL_PASSWORD', 'SASL password', true),
  deployment('ES_URL', 'Elasticsearch URL'),
  deployment('ES_CA_FILE', 'PEM file of the CA that signed Elasticsearch’s HTTP certificate'),
  deployment('ES_API_KEY', 'Elasticsearch API key (base64 id:key)', true),
  deployment('ES_USERNAME', 'Elasticsearch user (with ES_PASSWORD), instead of an API key'),
  deployment('ES_PASSWORD', 'Elasticsearch password', true),
  deployment('NEON_TOPIC_PREFIX', 'prefix of every topic and consumer group'),
  deployment('NEON_INDEX_PREFIX', 'prefix of the datastores’ indices and aliases (default neon)'),
  deployment('NEON_RETENTION_DAYS', 'days of news kept in the datastores (whole months dropped)'),
  deployment('NEON_CACHE_DIR', 'embedding model and other downloads'),
  deployment('NEON_DATA_DIR', 'state kept on disk (intake feed state, run records)'),
  deployment(
    'NEON_LOG_LEVEL',
    'log level of the JSON lines on stderr: trace, debug, info, warn, error, fatal, silent (default info)',
  ),
  // Markup.
  deployment('NEON_MARKUP_WORKERS', 'worker threads tagging article text (0: on the stage’s own thread)'),
  // Embeddings.
  deployment('NEON_EMBEDDER', 'local, openai or hashing'),
  deployment('NEON_EMBEDDINGS_URL', 'OpenAI-compatible embeddings endpoint'),
  deployment('NEON_EMBEDDINGS_KEY', 'bearer key of the embeddings endpoint', true),
  deployment(
    'NEON_EMBEDDINGS_MODEL',
    'local model (all-MiniLM-L6-v2, bge-small-en-v1.5, their -q int8 forms) or the model name at the endpoint',
  ),
  deployment('NEON_EMBEDDINGS_DIMENSIONS', 'vector dimensions'),
  deployment('NEON_EMBEDDINGS_BATCH_SIZE', 'texts per embeddings request'),
  deployment('NEON_EMBEDDINGS_CONCURRENCY', 'embeddings requests in flight'),
  deployment('NEON_EMBEDDINGS_ATTEMPTS', 'attempts per embeddings request'),
  deployment('NEON_EMBEDDINGS_TIMEOUT_S', 'timeout per embeddings request'),
  deployment('NEON_EMBEDDINGS_THREADS', 'threads of the local model'),
  deployment('OPENAI_API_KEY', 'fallback bearer key for the LLM and embeddings endpoints', true),
  // The LLM (extraction and written answers).
  deployment('NEON_LLM_URL', 'OpenAI-compatible chat endpoint; unset: the offline extractor'),
  deployment('NEON_LLM_KEY', 'bearer key of the chat endpoint', true),
  deployment('NEON_LLM_MODEL', 'chat model'),
  deployment('NEON_LLM_AZURE_DEPLOYMENT', 'Azure OpenAI deployment'),
  deployment('NEON_LLM_AZURE_API_VERSION', 'Azure OpenAI API version'),
  deployment('NEON_LLM_CONCURRENCY', 'LLM calls in flight'),
  deployment('NEON_LLM_MAX_QUEUED', 'LLM calls waiting before back-pressure'),
  deployment('NEON_LLM_MAX_ATTEMPTS', 'attempts per LLM call'),
  deployment('NEON_LLM_TIMEOUT_MS', 'timeout per LLM call'),
  deployment('NEON_LLM_TOKENS_PER_HOUR', 'hourly token budget'),
  deployment('NEON_LLM_PRICE_IN_PER_1K', 'price of 1k prompt tokens, for the cost estimate'),
  deployment('NEON_LLM_PRICE_OUT_PER_1K', 'price of 1k completion tokens, for the cost estimate'),
  deployment('NEON_LLM_MAX_TOKENS_FIELD', 'max_tokens or max_completion_tokens'),
  deployment('NEON_LLM_CACHE_DIR', 'replies cached by prompt'),
  // Extraction.
  deployment('NEON_EXTRACT_TARGETS', 'gated (spiking and configured entities) or all'),
  deployment('NEON_EXTRACT_SUBJECTS', 'entities always extracted'),
  deployment('NEON_EXTRACT_VARIANTS', 'M1, M2 or both'),
  deployment('NEON_EXTRACT_M2_K', 'M2: objects per batch'),
  deployment('NEON_EXTRACT_M2_OBJECTS', 'M2: objects per subject'),
  deployment('NEON_EXTRACT_M2_MIN_COOCCURRENCES', 'M2: co-occurrences before a pair is asked'),
  deployment('NEON_EXTRACT_M2_WINDOW_DAYS', 'M2: co-occurrence window'),
  deployment('NEON_EXTRACT_M2_LINGER_MS', 'M2: how long a batch waits to fill'),
  deployment('NEON_EXTRACT_BACKFILL_DAYS', 'back-fill on spikes: days of earlier chunks kept (default 3, 0: off)'),
  deployment('NEON_EXTRACT_BACKFILL_MAX_CHUNKS', 'back-fill on spikes: chunks per entity and episode (default 50)'),
  deployment('NEON_EXTRACT_BACKFILL_CONCURRENCY', 'back-fill on spikes: calls at once (default 2)'),
  // Spike detection and alerts.
  deployment('NEON_SPIKE_RULES', 'day, hour or both'),
  deployment('NEON_SPIKE_BUDGET_DAY', 'new spike stories delivered per day (default 10)'),
  deployment('NEON_SPIKE_BUDGET_HOUR', 'new stories of hourly alerts delivered per hour (default 3)'),
  deployment('NEON_SPIKE_BUDGET_SIGNIFICANCE', 'significance a story needs to be listed in a digest (default 0.5)'),
  deployment('NEON_SPIKE_BUDGET_PUSH_SIGNIFICANCE', 'significance a story needs to be pushed (default 2)'),
  deployment('NEON_SPIKE_METHOD', 'surprise (the count model, default) or neon (NEON’s rolling-sum rule)'),
  ...spikeRuleVariables,
  deployment('NEON_WEBHOOK_URLS', 'where spike alerts are POSTed (URLs may carry tokens)', true),
  deployment('NEON_WEBHOOK_SECRET', 'HMAC key signing webhook bodies', true),
  deployment('NEON_WEBHOOK_STATES', 'alert states sent (OPEN, UPDATE, CLOSED)'),
  deployment('NEON_WEBHOOK_GRANULARITIES', 'granularities sent (DAY, HOUR)'),
  deployment(
    'NEON_FETCH_ALLOW',
    'internal hosts, .domains, addresses and CIDR ranges feeds, their pages and webhooks may reach (refused by default)',
  ),
  // Access to the API and intake.
  deployment('NEON_API_KEYS', 'API keys accepted by the query service', true),
  deployment('NEON_INTAKE_TOKENS', 'bearer tokens accepted by POST /v1/articles', true),
  // Local set-up.
  local('NEON_FEEDS', 'feed list of neon start'),
  local('NEON_KAFKA_PORT', 'local Kafka port'),
  local('NEON_KAFKA_CONTROLLER_PORT', 'local Kafka controller port'),
  local('NEON_KAFKA_HEAP', 'local Kafka heap'),
  local('NEON_ES_PORT', 'local Elasticsearch HTTP port'),
  local('NEON_ES_TRANSPORT_PORT', 'local Elasticsearch transport port'),
  local('NEON_ES_HEAP', 'local Elasticsearch heap'),
  local('NEON_ES_USER', 'system user running the local Elasticsearch'),
  local('NEON_INFRA_READY_TIMEOUT_S', 'how long neon infra up waits'),
  local('NEON_MVN', 'the mvn executable'),
  local('NEON_MAVEN_REPOSITORY', 'Maven repository for downloads'),
  local('JAVA_HOME', 'the JDK for local Kafka (and Elasticsearch when it is 21–25)'),
  local('ES_JAVA_HOME', 'the JDK for local Elasticsearch (default: a JDK 21–25 if one is installed)'),
  local('NEON_GO', 'the go executable that builds the manifest validators (default go)'),
  local('NEON_PYTHON', 'the python executable that fetches the Kubernetes schemas (default python3)'),
  local('XDG_CACHE_HOME', 'default parent of the cache directory'),
  local('XDG_STATE_HOME', 'default parent of the data directory'),
  local('HOME', 'default parent of the cache and data directories'),
  local('PATH', 'where mvn and java are found'),
  // The command-line client.
  client('NEON_API_URL', 'the service neon ask / spikes / entities talk to'),
  client('NEON_API_KEY', 'the key those commands send', true),
  client('NEON_INTAKE_TOKEN', 'the token neon ingest sends', true),
];

export function environmentVariable(name: string): EnvironmentVariable | undefined {
  return PRODUCT_ENVIRONMENT.find((variable) => variable.name === name);
}
