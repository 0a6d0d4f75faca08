import type { Mention } from '../../schemas/records.generated.js';
import { DAY_MS, HOUR_MS } from '../../processors/spikes/spike-rule.js';

/** Day 0 of the spike tests: a Monday, 00:00 UTC. */
export const DAY0 = Date.UTC(2025, 0, 6);

/** Far after every test's event times, so no mention looks like it comes from the future. */
export const TEST_NOW = Date.UTC(2026, 0, 1);

let serial = 0;

/** A mention of `entity` on day `day` (from DAY0) at `hour` (default 12:00; null: day-only 00:00). */
export function mentionOf(
  entity: string,
  day: number,
  options: { hour?: number | null; chunk?: string; article?: string; minute?: number } = {},
): Mention {
  serial += 1;
  const hour = options.hour === undefined ? 12 : options.hour;
  const t = DAY0 + day * DAY_MS + (hour === null ? 0 : hour * HOUR_MS + (options.minute ?? 0) * 60_000);
  const article = options.article ?? `art-${entity}-${day}-${serial}`;
  return {
    entity_id: entity,
    name: entity.replace(/^e-/, '').replace(/-/g, ' '),
    entity_type: 'PERSON',
    t,
    chunk_id: options.chunk ?? `${article}:v1:0`,
    article_id: article,
    url: `https://news.example/${article}`,
  };
}

/** `count` distinct chunks mentioning `entity` on `day`, spread over the day from 08:00. */
export function mentionsOn(entity: string, day: number, count: number): Mention[] {
  return Array.from({ length: count }, (_, i) => mentionOf(entity, day, { hour: 8 + (i % 12), minute: i % 60 }));
}
