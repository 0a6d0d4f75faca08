/**
 * Rebuilds the bundled offline feed of `npm start` (`wikipedia-current-events-2025q1/articles.jsonl`)
 * from the redistributable Wikipedia "Portal:Current events" pages of 2025 Q1 in the development
 * data: one JSONL line per event summary, in the replay format (`id`, `url`, `title`, `text`,
 * `published_at`, `source`, `language`), in date and page order. The text is Wikipedia's, so the
 * file is CC BY-SA 4.0 like its source (see the folder's README.md and LICENSE).
 *
 *   npx tsx samples/build-current-events-sample.ts [path to wikipedia-current-events-2025q1]
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { devDataPath, missingDevDataMessage } from '../devkit/dev-data.js';
import {
  currentEventArticleInput,
  loadWikipediaCurrentEvents,
} from '../streams/archives/load-wikipedia-current-events.js';

const SOURCE = 'samples/wikipedia-current-events-2025q1';
const source = process.argv[2] ?? devDataPath(SOURCE);
if (source === undefined) {
  console.error(missingDevDataMessage(SOURCE));
  process.exit(0);
}
const items = loadWikipediaCurrentEvents(join(source, 'daily_markdown'));
const lines = items.map((item) => JSON.stringify(currentEventArticleInput(item)));
const target = fileURLToPath(new URL('./wikipedia-current-events-2025q1/articles.jsonl', import.meta.url));
writeFileSync(target, `${lines.join('\n')}\n`);
console.log(`${items.length} items from ${source} → ${target}`);
