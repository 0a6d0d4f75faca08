import { describe, expect, it } from 'vitest';
import { ChatModelError } from '../../processors/extract/chat-model.js';
import { TokenBudget } from '../../processors/extract/token-budget.js';

const MINUTE = 60_000;

function refusal(action: () => unknown): ChatModelError {
  try {
    action();
  } catch (error) {
    if (error instanceof ChatModelError) return error;
    throw error;
  }
  throw new Error('expected a ChatModelError');
}

describe('TokenBudget', () => {
  it('refuses, retriably, a request that would exceed the hour, and frees the tokens once they leave the window', () => {
    let now = 0;
    const budget = new TokenBudget(1_000, { now: () => now });
    budget.reserve(600).settle(700);
    expect(budget.used()).toBe(700);

    const spent = refusal(() => budget.reserve(301));
    expect(spent.code).toBe('llm_budget_exhausted');
    expect(spent.retriable).toBe(true);
    budget.reserve(300).settle(300);
    expect(budget.remaining()).toBe(0);

    now = 59 * MINUTE + 59_999;
    expect(refusal(() => budget.reserve(1)).code).toBe('llm_budget_exhausted');
    now = 60 * MINUTE;
    expect(budget.used()).toBe(0);
    expect(() => budget.reserve(1_000)).not.toThrow();
  });

  it('slides: tokens spent later in the hour stay counted after earlier ones leave', () => {
    let now = 0;
    const budget = new TokenBudget(100, { now: () => now });
    budget.reserve(10).settle(60);
    now = 30 * MINUTE;
    budget.reserve(10).settle(40);
    now = 60 * MINUTE;
    expect(budget.used()).toBe(40);
    now = 90 * MINUTE;
    expect(budget.used()).toBe(0);
  });

  it('counts the holds of completions in flight, so concurrent callers cannot overshoot together', () => {
    const budget = new TokenBudget(100, { now: () => 0 });
    const first = budget.reserve(60);
    expect(refusal(() => budget.reserve(60)).code).toBe('llm_budget_exhausted');
    first.cancel();
    expect(budget.used()).toBe(0);
    const second = budget.reserve(60);
    second.cancel();
    second.cancel();
    expect(budget.used()).toBe(0);
  });

  it('charges each settled answer but releases the hold once', () => {
    const budget = new TokenBudget(1_000, { now: () => 0 });
    const hold = budget.reserve(500);
    hold.settle(20);
    hold.settle(30);
    hold.cancel();
    expect(budget.used()).toBe(50);
  });

  it('refuses for good a request whose estimate alone is more than the whole budget', () => {
    const error = refusal(() => new TokenBudget(100).reserve(101));
    expect(error.code).toBe('llm_rejected');
    expect(error.retriable).toBe(false);
  });

  it('rejects a budget that is not a positive integer', () => {
    expect(() => new TokenBudget(0)).toThrow(RangeError);
    expect(() => new TokenBudget(1.5)).toThrow(RangeError);
  });
});
