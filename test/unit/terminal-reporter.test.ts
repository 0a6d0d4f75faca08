import { describe, expect, it } from 'vitest';
import { createTerminalReporter } from '../../bin/commands/terminal-reporter.js';
import { AlertDesk } from '../../processors/spikes/alert-desk.js';
import { DAY_MS } from '../../processors/spikes/spike-rule.js';
import type { SpikeAlert } from '../../schemas/records.generated.js';
import { DAY0 } from './spike-fixtures.js';

function alert(name: string, state: SpikeAlert['state'], significance: number, articles: string[]): SpikeAlert {
  const id = `e-${name.toLowerCase()}`;
  return {
    id: `spike:${id}:day:2025-01-06`,
    entity_id: id,
    entity_name: name,
    entity_type: 'LOCATION',
    granularity: 'DAY',
    window_start: DAY0,
    window_end: DAY0 + DAY_MS,
    observed: articles.length,
    baseline_mean: 0.4,
    baseline_std: 0.7,
    threshold: 3,
    score: significance,
    article_ids: articles,
    urls: [],
    detected_at: DAY0,
    state,
    episode_start: DAY0,
    rule: 'rule',
    baseline_buckets: 28,
    counts: [],
    first_interactions: [],
    method: 'surprise',
    significance,
    articles: articles.length,
  };
}

describe('the terminal reporter', () => {
  it('prints the stories the desk delivers, with the names folded in, and their end; nothing else', () => {
    const lines: string[] = [];
    const out = { isTTY: false, write: (text: string) => lines.push(text.trimEnd()) } as unknown as NodeJS.WriteStream;
    const reporter = createTerminalReporter({ out });
    const desk = new AlertDesk();
    const show = (a: SpikeAlert): void => reporter.alert(a, desk.apply(a));
    show(alert('Goma', 'STARTED', 0.8, ['g1', 'g2', 'g3'])); // listed, not pushed
    show(alert('M23', 'STARTED', 1.2, ['g1', 'g2', 'g3']));
    show({ ...alert('Goma', 'ONGOING', 2.4, ['g1', 'g2', 'g3', 'g4', 'g5']), observed: 5 }); // grown past the push bar
    show(alert('Goma', 'ENDED', 0, []));
    show(alert('Ltd', 'STARTED', 9, ['x1', 'x2', 'x3'])); // a generic word: never pushed
    expect(lines).toEqual([
      'spike ongoing  Goma (LOCATION): 5 articles to 2025-01-06, expected 0.4 (significance 2.4) + M23',
      'spike ended    Goma (day, 2025-01-06)',
    ]);
  });

  it('prints control characters in news data as visible escapes, so a name cannot rewrite the terminal', () => {
    const lines: string[] = [];
    const out = { isTTY: false, write: (text: string) => lines.push(text) } as unknown as NodeJS.WriteStream;
    const reporter = createTerminalReporter({ out });
    reporter.alert(alert('Goma\r\u001b[2Kspike STARTED  Fake', 'ENDED', 0, []));
    expect(lines).toEqual(['spike ended    Goma\\u000d\\u001b[2Kspike STARTED  Fake (day, 2025-01-06)\n']);
  });
});
