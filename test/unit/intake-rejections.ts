import { IntakeRejection } from '../../processors/intake/article-input.js';

/** The IntakeRejection `fn` throws, or undefined when it returns; any other error propagates. */
export function rejectionOf(fn: () => unknown): IntakeRejection | undefined {
  try {
    fn();
  } catch (error) {
    if (error instanceof IntakeRejection) return error;
    throw error;
  }
  return undefined;
}

/** The reason of the IntakeRejection `fn` throws, or undefined when it returns. */
export function reasonOf(fn: () => unknown): string | undefined {
  return rejectionOf(fn)?.reason;
}

/** The IntakeRejection `fn` must throw. */
export function expectRejection(fn: () => unknown): IntakeRejection {
  const rejection = rejectionOf(fn);
  if (rejection === undefined) throw new Error('expected an IntakeRejection');
  return rejection;
}
