import { describe, expect, it } from 'vitest';
import { loadProductConfig } from '../../bin/commands/product-config.js';
import { ConfigError } from '../../schemas/local-infra-config.js';
import { DEFAULT_ALERT_BUDGET } from '../../processors/spikes/alert-desk.js';

describe('product configuration', () => {
  it('has working defaults: the local model, no LLM, both spike rules, no webhooks', () => {
    const config = loadProductConfig({});
    expect(config.embedder.kind).toBe('local');
    expect(config.llm.kind).toBe('none');
    expect(config.webhooks).toEqual([]);
    expect(config.apiKeys).toEqual([]);
  });

  it('carries the alert budget to the running product, defaults when unset', () => {
    expect(loadProductConfig({}).alertBudget).toEqual(DEFAULT_ALERT_BUDGET);
    const budget = loadProductConfig({
      NEON_SPIKE_BUDGET_DAY: '3',
      NEON_SPIKE_BUDGET_PUSH_SIGNIFICANCE: '3',
    }).alertBudget;
    expect(budget).toEqual({ ...DEFAULT_ALERT_BUDGET, perDay: 3, pushSignificance: 3 });
    expect(() => loadProductConfig({ NEON_SPIKE_BUDGET_DAY: 'many' })).toThrow(ConfigError);
  });

  it('lists every problem of every part at once', () => {
    let error: unknown;
    try {
      loadProductConfig({
        NEON_EMBEDDER: 'magic',
        NEON_LLM_URL: 'not a url',
        NEON_EXTRACT_VARIANTS: 'M3',
        NEON_SPIKE_RULES: 'week',
        NEON_WEBHOOK_URLS: 'https://hooks.example/a',
        NEON_TOPIC_PREFIX: 'bad prefix!',
        NEON_RETENTION_DAYS: '10',
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const variables = (error as ConfigError).problems.map((p) => p.split(':')[0]);
    expect(variables).toEqual(
      expect.arrayContaining([
        'NEON_EMBEDDER',
        'NEON_LLM_URL',
        'NEON_EXTRACT_VARIANTS',
        'NEON_SPIKE_RULES',
        'NEON_WEBHOOK_SECRET',
        'NEON_TOPIC_PREFIX',
        'NEON_RETENTION_DAYS',
      ]),
    );
  });

  it('reads API keys and intake tokens as lists', () => {
    const config = loadProductConfig({ NEON_API_KEYS: 'a, b,,', NEON_INTAKE_TOKENS: 't1' });
    expect(config.apiKeys).toEqual(['a', 'b']);
    expect(config.intakeTokens).toEqual(['t1']);
  });
});
