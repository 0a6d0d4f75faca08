import { entityIdFor } from '../../processors/markup/entity-id.js';
import { stripMarkup } from '../../processors/markup/render-markup.js';
import type { Chunk, EntityType } from '../../schemas/records.generated.js';

export const T0 = Date.UTC(2023, 4, 2, 14, 0);
export const DAY = 86_400_000;

/** A unique chunk as dedupe writes it: `entities` are canonical names (ids derived as markup does). */
export function chunkOf(
  marked: string,
  entities: readonly (string | [string, EntityType])[],
  options: { t?: number; id?: string; article?: string; syndicatedBy?: string } = {},
): Chunk {
  const article = options.article ?? `art-${entityIdFor(marked.slice(0, 40)).slice(2, 14)}`;
  const t = options.t ?? T0;
  const list = entities.map((e): { name: string; type: EntityType } =>
    typeof e === 'string' ? { name: e, type: 'OTHER' } : { name: e[0], type: e[1] },
  );
  return {
    id: options.id ?? `${article}:v1:0`,
    article_id: article,
    index: 0,
    text: stripMarkup(marked),
    title: '',
    marked_text: marked,
    entity_ids: list.map((e) => entityIdFor(e.name)),
    entities: list.map((e) => ({ id: entityIdFor(e.name), name: e.name, type: e.type })),
    t,
    provenance: [
      { article_id: article, url: `https://news.example.org/${article}`, source: 'news.example.org', published_at: t },
      ...(options.syndicatedBy
        ? [
            {
              article_id: options.syndicatedBy,
              url: `https://wire.example.org/${options.syndicatedBy}`,
              source: 'wire.example.org',
              published_at: t + 60_000,
            },
          ]
        : []),
    ],
  };
}

export const DOJA_CAT_CHUNK = chunkOf(
  "Stepping out at the <e>Met Gala</e> 2023 (her first ever!), <e>Doja Cat</e> instantly delivered one of the evening's most " +
    "Internet-breaking moments by channeling the one and only <e>Choupette</e>, <e>Karl Lagerfeld</e>'s beloved cat. " +
    '"It makes no sense for anyone to go as <e>Karl</e>\'s cat more than <e>Doja Cat</e>," says <e>Brett Alan Nelson</e>, ' +
    'her creative director and stylist.',
  [
    ['Doja Cat', 'PERSON'],
    ['Met Gala', 'EVENT'],
    ['Choupette', 'OTHER'],
    ['Karl Lagerfeld', 'PERSON'],
    ['Brett Alan Nelson', 'PERSON'],
  ],
  { article: 'art-doja-met-gala', syndicatedBy: 'art-wire-copy' },
);
