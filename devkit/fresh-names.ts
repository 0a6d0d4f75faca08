import { randomBytes } from 'node:crypto';

/** One id per test process, so parallel or repeated runs against a shared cluster never collide. */
const RUN_ID = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
let counter = 0;

/** A topic name no other test (or earlier run) has used. */
export function freshTopic(label: string): string {
  counter += 1;
  return `test.${label}.${RUN_ID}.${counter}`;
}

/** An index name no other test has used; Elasticsearch wants lower case and no dots at the start. */
export function freshIndex(label: string): string {
  counter += 1;
  return `test-${label}-${RUN_ID}-${counter}`.toLowerCase();
}
