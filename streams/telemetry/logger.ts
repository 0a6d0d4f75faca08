/**
 * The product's log: JSON lines on stderr through pino, one line per event, e.g.
 *
 *   {"level":"warn","time":"2026-01-05T10:00:00.000Z","stage":"index","message":"dead-lettered","code":"mapping_error",…}
 *
 * The field names are the ones the hand-written loggers used before (`level` as a word, `time` in
 * ISO 8601, `message`), so whatever reads these lines keeps working. The level comes from
 * `NEON_LOG_LEVEL` (trace, debug, info, warn, error, fatal, silent; default info).
 *
 * Secrets never reach a line: authorization and cookie headers, passwords, API keys, tokens and
 * secrets (as fields, in `headers`, or one level down) print as `<redacted>`, and every URL in a
 * string field or the message loses its userinfo and credential parameters
 * (schemas/connection-config's redactUrl). Record bodies are not logged at all: callers pass
 * coordinates and error codes only.
 */
import { pino, type DestinationStream, type Logger } from 'pino';
import { redactUrlsIn } from '../../schemas/connection-config.js';

export type LogLevel = 'info' | 'warn' | 'error';

/** How stages and sources log: a level, a message, and fields (a `stage` field picks that stage's child logger). */
export type StageLogger = (level: LogLevel, message: string, fields?: Record<string, unknown>) => void;

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogThreshold = (typeof LOG_LEVELS)[number];

const REDACTED = '<redacted>';

/** Field names whose values are credentials, wherever they sit in the first two levels of a line. */
const SECRET_FIELDS = [
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'password',
  'passwd',
  'apiKey',
  'api_key',
  'apikey',
  'token',
  'accessToken',
  'access_token',
  'refreshToken',
  'refresh_token',
  'secret',
  'clientSecret',
  'client_secret',
];

const REDACT_PATHS = SECRET_FIELDS.flatMap((field) => {
  const key = /^[A-Za-z_$][\w$]*$/.test(field) ? field : `["${field}"]`;
  const at = (prefix: string): string => (key.startsWith('[') ? `${prefix}${key}` : `${prefix}.${key}`);
  return [key, at('*'), at('headers'), at('*.headers')];
});

/** `NEON_LOG_LEVEL`, checked: an unknown level is a configuration error, not a silent default. */
export function logLevelFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): LogThreshold {
  const value = env.NEON_LOG_LEVEL?.trim().toLowerCase();
  if (value === undefined || value === '') return 'info';
  if ((LOG_LEVELS as readonly string[]).includes(value)) return value as LogThreshold;
  throw new RangeError(`NEON_LOG_LEVEL: must be one of ${LOG_LEVELS.join(', ')} (got "${env.NEON_LOG_LEVEL}")`);
}

/** Strings lose URL credentials; nested objects and arrays are walked (bounded, and cycles stop it). */
function redactUrlsDeep(value: unknown, depth: number, seen: WeakSet<object>): unknown {
  if (typeof value === 'string') return redactUrlsIn(value);
  if (value === null || typeof value !== 'object' || depth > 4 || seen.has(value)) return value;
  if (value instanceof Error) return value;
  seen.add(value);
  if (Array.isArray(value)) return value.map((item) => redactUrlsDeep(item, depth + 1, seen));
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) copy[key] = redactUrlsDeep(item, depth + 1, seen);
  return copy;
}

export interface LoggerOptions {
  level?: LogThreshold;
  /** Where lines go; default stderr, written synchronously so nothing is lost when a process exits. */
  destination?: DestinationStream;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? logLevelFromEnv(),
      messageKey: 'message',
      // No pid or hostname on every line: the orchestrator labels the stream with both.
      base: null,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        log: (fields) => redactUrlsDeep(fields, 0, new WeakSet()) as Record<string, unknown>,
      },
      hooks: {
        // The message too may quote a URL (a client's error text).
        logMethod(args, method) {
          const redacted = args.map((arg) => (typeof arg === 'string' ? redactUrlsIn(arg) : arg));
          method.apply(this, redacted as Parameters<typeof method>);
        },
      },
      redact: { paths: REDACT_PATHS, censor: REDACTED },
    },
    options.destination ?? pino.destination({ fd: 2, sync: true }),
  );
}

let root: Logger | undefined;

/**
 * The process's logger, made on first use (so `NEON_LOG_LEVEL` is read once the environment is set).
 * A level it cannot read is said once, on the log itself; logging never throws.
 */
export function rootLogger(): Logger {
  if (root === undefined) {
    try {
      root = createLogger();
    } catch (error) {
      root = createLogger({ level: 'info' });
      root.warn(`${error instanceof Error ? error.message : String(error)}; logging at info`);
    }
  }
  return root;
}

/**
 * A StageLogger writing through `logger`: fields naming a `stage` go through that stage's child
 * logger (`{ stage }` bound once), so each line carries the stage exactly once.
 */
export function stageLoggerFrom(logger: Logger): StageLogger {
  const children = new Map<string, Logger>();
  const childFor = (stage: string): Logger => {
    let child = children.get(stage);
    if (child === undefined) {
      child = logger.child({ stage });
      children.set(stage, child);
    }
    return child;
  };
  return (level, message, fields = {}) => {
    const { stage, ...rest } = fields;
    const target = typeof stage === 'string' ? childFor(stage) : logger;
    const payload = typeof stage === 'string' || stage === undefined ? rest : fields;
    target[level](payload, message);
  };
}

/** The one stage logger a process shares unless a caller passes its own. */
export const defaultStageLogger: StageLogger = (level, message, fields) => sharedStageLogger()(level, message, fields);

let shared: StageLogger | undefined;
function sharedStageLogger(): StageLogger {
  shared ??= stageLoggerFrom(rootLogger());
  return shared;
}

/** A logger bound to one stage: every line carries `{ stage }`. */
export function stageLogger(stage: string, logger: Logger = rootLogger()): StageLogger {
  const child = logger.child({ stage });
  return (level, message, fields = {}) => {
    // The child already names the stage: a `stage` field would print the key twice.
    const rest = { ...fields };
    delete rest.stage;
    child[level](rest, message);
  };
}
