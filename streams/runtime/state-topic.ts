import { stageDecoder } from './record-codec.js';
import type { RunningStage, StageLogger } from './run-stage.js';
import { StageError } from './stage-error.js';
import { tailTopic, type TopicTail } from './topic-tail.js';
import type { Transport } from './transport.js';
import type { RecordName, RecordTypes } from '../../schemas/records.generated.js';

/**
 * Rebuilds a stage's state from a topic of Avro records (read to its end before this resolves) and
 * keeps applying what arrives later. A record that cannot be read is skipped with a warning: state
 * is a cache of the log, and one bad record must not keep a stage from starting.
 */
export async function followStateTopic<N extends RecordName>(
  transport: Transport,
  topic: string,
  name: N,
  apply: (value: RecordTypes[N]) => void,
  context: { stage: string; purpose: string; log: StageLogger },
): Promise<TopicTail> {
  const decode = stageDecoder(name);
  const tail = await tailTopic(
    transport,
    topic,
    (record) => {
      try {
        apply(decode(record));
      } catch (error) {
        context.log('warn', `unreadable ${name} record skipped while rebuilding state`, {
          stage: context.stage,
          partition: record.partition,
          offset: record.offset,
          code: error instanceof StageError ? error.code : 'internal',
        });
      }
    },
    { purpose: context.purpose },
  );
  await tail.caughtUp;
  return tail;
}

/**
 * A running stage whose state tails stop with it, plus what the stage exposes. A tail that fails
 * (its group or topic denied, say) leaves the state stale, so it stops the stage, and the stage is
 * dead: its `done` rejects with the tail's error, which liveness and `neon pipeline` see.
 */
export function stageWithTails<Extra extends object>(
  stage: RunningStage,
  tails: readonly TopicTail[],
  extra: Extra,
): RunningStage & Extra {
  const stopTails = async (): Promise<void> => {
    await Promise.all(tails.map((tail) => tail.stop()));
  };
  void stage.done.finally(stopTails).catch(() => undefined);
  for (const tail of tails) void tail.done.catch(() => stage.stop()).catch(() => undefined);
  const done = Promise.all([stage.done, ...tails.map((tail) => tail.done)]).then(() => undefined);
  done.catch(() => undefined); // observed by the caller
  return {
    ...extra,
    done,
    stats: () => stage.stats(),
    stop: async (drainMs?: number) => {
      await stage.stop(drainMs);
      await stopTails();
    },
  };
}

/** Runs a processor's pure function; whatever it throws refuses this input for good. */
export function refusedAs<T>(stage: string, subject: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw new StageError(
      'processor_rejected',
      `${stage} refused ${subject}: ${error instanceof Error ? error.message : String(error)}`,
      stage,
    );
  }
}
