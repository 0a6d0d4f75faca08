import { describe, expect, it } from 'vitest';
import { parseStageList, STAGE_CATALOG, STAGE_NAMES } from '../../streams/pipeline/stage-catalog.js';
import { TOPICS } from '../../streams/pipeline/topics.js';

describe('stage catalog', () => {
  it('names every stage once, each in its own consumer group', () => {
    expect(STAGE_CATALOG.map((s) => s.name)).toEqual([...STAGE_NAMES]);
    expect(new Set(STAGE_CATALOG.map((s) => s.group)).size).toBe(STAGE_CATALOG.length);
    for (const stage of STAGE_CATALOG) expect(stage.group).toBe(`neon.${stage.name}`);
  });

  it('uses only the product’s topics, and every topic is written by a stage or by intake and read by one', () => {
    const known = new Set<string>(Object.values(TOPICS));
    for (const stage of STAGE_CATALOG) {
      for (const topic of [...stage.reads, ...stage.follows, ...stage.writes]) expect(known).toContain(topic);
      expect(stage.writes).toContain(TOPICS.deadLetters);
    }
    const read = new Set(STAGE_CATALOG.flatMap((s) => [...s.reads, ...s.follows]));
    const written = new Set([TOPICS.articles, TOPICS.queries, ...STAGE_CATALOG.flatMap((s) => s.writes)]);
    for (const topic of Object.values(TOPICS)) {
      expect(written, `${topic} is written`).toContain(topic);
      // The dead-letter topic and the answers are read by operators and clients, not by a stage.
      if (topic !== TOPICS.deadLetters && topic !== TOPICS.answers) expect(read, `${topic} is read`).toContain(topic);
    }
  });

  it('parses --stages, listing every unknown name', () => {
    expect(parseStageList('all')).toEqual({ ok: true, stages: [...STAGE_NAMES] });
    expect(parseStageList('')).toEqual({ ok: true, stages: [...STAGE_NAMES] });
    expect(parseStageList('markup, chunk,markup')).toEqual({ ok: true, stages: ['markup', 'chunk'] });
    const bad = parseStageList('markup,embed,spike');
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.problem).toMatch(/unknown stage\(s\) embed, spike; known: markup, chunk/);
  });
});
