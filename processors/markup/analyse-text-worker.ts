/**
 * A markup worker thread: analyses the texts it is sent, one at a time (see markup-workers.ts).
 */
import { parentPort } from 'node:worker_threads';
import { analyseText } from './analyse-text.js';

interface Job {
  id: number;
  text: string;
  publishedAt: number;
}

const port = parentPort;
if (port === null) throw new Error('analyse-text-worker.ts runs as a worker thread only');
port.on('message', (job: Job) => {
  try {
    port.postMessage({ id: job.id, analysis: analyseText(job.text, job.publishedAt) });
  } catch (error) {
    port.postMessage({ id: job.id, error: error instanceof Error ? error.message : String(error) });
  }
});
port.postMessage({ ready: true });
