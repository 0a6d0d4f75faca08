/** Polls `condition` every 10 ms until it holds; throws naming `what` after `timeoutMs` (default 10 s). */
export async function waitUntil(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  for (let waited = 0; !condition(); waited += 10) {
    if (waited > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
