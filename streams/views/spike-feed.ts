import { AlertDesk, type AlertBudget } from '../../processors/spikes/alert-desk.js';
import { SpikeBook, type SpikeEvent } from '../../processors/spikes/spike-book.js';
import { SpikeTargets, type SpikeTargetOptions } from '../../processors/spikes/spike-targets.js';
import type { SpikeAlert } from '../../schemas/records.generated.js';
import { stageDecoder } from '../runtime/record-codec.js';
import type { StageLogger } from '../runtime/run-stage.js';
import { StageError } from '../runtime/stage-error.js';
import { tailTopic, type TopicTail } from '../runtime/topic-tail.js';
import type { Transport } from '../runtime/transport.js';

export interface SpikeFeed {
  /** Current and past episodes. */
  readonly book: SpikeBook;
  /** Spiking entities as extraction targets. */
  readonly targets: SpikeTargets;
  /** Stories, ranking, budget and digests over every alert. */
  readonly desk: AlertDesk;
  /** Resolves once every alert on the topic at start has been read. */
  readonly caughtUp: Promise<void>;
  /** Called with every new alert state from now on (never with history); returns an unsubscribe. */
  subscribe(listener: (event: SpikeEvent) => void): () => void;
  /** Resolves when stopped; rejects when following the topic failed for good (see TopicTail.done). */
  readonly done: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Follows `entity.spikes` from its beginning: the spike list of the API, the server-sent-events
 * stream and the extraction targets all read it through here. Any number of processes can follow
 * it; none commits anything. A record seen twice (a redelivered alert) is announced once.
 */
/** Book, targets and subscribers fed with alert states, from a topic or (in tests) by hand. */
export class SpikeHub {
  readonly book = new SpikeBook();
  readonly targets: SpikeTargets;
  readonly desk: AlertDesk;
  private readonly listeners = new Set<(event: SpikeEvent) => void>();

  constructor(targets: Partial<SpikeTargetOptions> = {}, budget: Partial<AlertBudget> = {}) {
    this.targets = new SpikeTargets(targets);
    this.desk = new AlertDesk({ budget });
  }

  apply(alert: SpikeAlert): void {
    this.targets.apply(alert);
    const event = this.book.apply(alert);
    if (event === undefined) return;
    // Only a state seen for the first time reaches the desk: a redelivered one changes nothing.
    const filed = this.desk.apply(alert);
    event.story = filed.story;
    event.delivered = filed.delivered;
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // One failing subscriber (a closed socket) must not starve the others.
      }
    }
  }

  subscribe(listener: (event: SpikeEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

export async function followSpikes(
  transport: Transport,
  topic: string,
  options: { log?: StageLogger; targets?: Partial<SpikeTargetOptions>; budget?: Partial<AlertBudget> } = {},
): Promise<SpikeFeed> {
  const hub = new SpikeHub(options.targets, options.budget);
  const decode = stageDecoder('SpikeAlert');
  const tail: TopicTail = await tailTopic(
    transport,
    topic,
    (record) => {
      let alert: SpikeAlert;
      try {
        alert = decode(record);
      } catch (error) {
        options.log?.('warn', 'unreadable spike alert skipped', {
          topic,
          partition: record.partition,
          offset: record.offset,
          code: error instanceof StageError ? error.code : 'internal',
        });
        return;
      }
      hub.apply(alert);
    },
    { purpose: 'spike-feed' },
  );
  return {
    book: hub.book,
    targets: hub.targets,
    desk: hub.desk,
    caughtUp: tail.caughtUp,
    subscribe: (listener) => hub.subscribe(listener),
    done: tail.done,
    stop: () => tail.stop(),
  };
}

/** A feed over a hub filled by hand (embedded mode, tests). */
export function hubFeed(hub: SpikeHub): SpikeFeed {
  let stopped!: () => void;
  const done = new Promise<void>((resolve) => (stopped = resolve));
  return {
    book: hub.book,
    targets: hub.targets,
    desk: hub.desk,
    caughtUp: Promise.resolve(),
    subscribe: (listener) => hub.subscribe(listener),
    done,
    stop: () => {
      stopped();
      return Promise.resolve();
    },
  };
}
