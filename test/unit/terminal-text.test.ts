import { describe, expect, it } from 'vitest';
import { printable } from '../../bin/commands/terminal-text.js';

describe('printable', () => {
  it('shows control characters as escapes and keeps line breaks, tabs and ordinary text', () => {
    expect(printable('a\u001b[31mred\u0007\r\nb\tc\u0085d\u2028e')).toBe(
      'a\\u001b[31mred\\u0007\\u000d\nb\tc\\u0085d\\u2028e',
    );
    expect(printable('Zürich, 東京 — “quoted”')).toBe('Zürich, 東京 — “quoted”');
  });
});
