import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkLayers, formatReport } from '../../scripts/check-layers.js';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A throwaway project tree: path → source. */
function project(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'layers-'));
  roots.push(root);
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), source);
  }
  return root;
}

describe('checkLayers', () => {
  it('passes imports that go down or stay in their layer, and anything from the top layer', () => {
    const report = checkLayers(
      project({
        'schemas/record.ts': 'export type Record = { id: string };',
        'processors/chunk.ts':
          "import type { Record } from '../schemas/record.js';\nexport const f = (r: Record) => r;",
        'streams/stage.ts':
          "import { f } from '../processors/chunk.js';\nimport { Kafka } from 'kafkajs';\nexport { f, Kafka };",
        'service/api.ts':
          "import Fastify from 'fastify';\nimport { f } from '../streams/stage.js';\nexport { f, Fastify };",
        'test/unit/a.test.ts':
          "import { Kafka } from 'kafkajs';\nimport { f } from '../../service/api.js';\nexport { f, Kafka };",
      }),
    );
    expect(formatReport(report).failed).toBe(false);
    expect(report.files).toBe(5);
  });

  it('holds package.json to what the product loads: run-time imports are dependencies, and each dependency is used', () => {
    const manifest = {
      dependencies: { kafkajs: '^2', rxjs: '^7', 'left-pad': '^1' },
      devDependencies: { prettier: '^3', testcontainers: '^11' },
    };
    const report = checkLayers(
      project({
        'package.json': JSON.stringify(manifest),
        'streams/stage.ts':
          "import { Kafka } from 'kafkajs';\nimport { map } from 'rxjs/operators';\nexport { Kafka, map };",
        // A development dependency loaded lazily (and named in types) is allowed: that path is for development.
        'infra/containers.ts':
          "import type { GenericContainer } from 'testcontainers';\nexport const load = (): Promise<{ GenericContainer: typeof GenericContainer }> => import('testcontainers');",
        'schemas/generate.ts':
          "import { format } from 'prettier';\nimport { readFileSync } from 'fs';\nexport { format, readFileSync };",
        'processors/pad.ts': "import type { Pad } from 'left-pad';\nexport type P = Pad;",
        'bin/cli.ts': "import { z } from 'zod';\nexport { z };",
        // Tests may use whatever the development install has.
        'test/unit/a.test.ts': "import { format } from 'prettier';\nexport { format };",
      }),
    );
    expect(report.undeclaredDependencies).toEqual([
      'bin/cli.ts imports zod, which package.json does not declare',
      'schemas/generate.ts imports prettier, a development dependency, at run time (declare it in dependencies)',
    ]);
    // Named only in a type: erased, so the image would carry it for nothing.
    expect(report.unusedDependencies).toEqual([
      'left-pad (no product file imports it: move it to devDependencies or remove it)',
    ]);
    expect(formatReport(report).failed).toBe(true);
  });

  it('lists an upward import, type-only ones included, and the folder loop it closes', () => {
    const report = checkLayers(
      project({
        'processors/metrics.ts': "import type { Meter } from '../streams/meter.js';\nexport type M = Meter;",
        'streams/meter.ts': "import type { M } from '../processors/metrics.js';\nexport type Meter = { m?: M };",
      }),
    );
    expect(report.upward).toEqual(['processors/metrics.ts → streams/meter.ts (processors/ may not import streams/)']);
    expect(report.folderCycles).toHaveLength(1);
    expect(report.folderCycles[0]).toContain('processors ⇄ streams');
    expect(formatReport(report).failed).toBe(true);
  });

  it('lets test, bench and eval import devkit and the product but not one another, and devkit none of them', () => {
    const report = checkLayers(
      project({
        'streams/transport.ts': 'export const transport = 1;',
        'devkit/fresh-names.ts':
          "import { transport } from '../streams/transport.js';\nexport const fresh = () => transport;",
        'devkit/reach-back.ts': "import { judge } from '../eval/judge.js';\nexport const r = judge;",
        'test/unit/a.test.ts':
          "import { fresh } from '../../devkit/fresh-names.js';\nimport { layers } from '../../scripts/layers.js';\nexport { fresh, layers };",
        'test/harness/helper.ts': 'export const helper = 1;',
        'bench/query.ts':
          "import { fresh } from '../devkit/fresh-names.js';\nimport { helper } from '../test/harness/helper.js';\nexport { fresh, helper };",
        'eval/judge.ts': "import { query } from '../bench/query.js';\nexport const judge = query;",
        'scripts/layers.ts': 'export const layers = 1;',
        'processors/uses-devkit.ts': "import { fresh } from '../devkit/fresh-names.js';\nexport const u = fresh;",
      }),
    );
    expect(report.upward).toEqual([
      'bench/query.ts → test/harness/helper.ts (bench/ may not import test/)',
      'devkit/reach-back.ts → eval/judge.ts (devkit/ may not import eval/)',
      'eval/judge.ts → bench/query.ts (eval/ may not import bench/)',
      'processors/uses-devkit.ts → devkit/fresh-names.ts (processors/ may not import devkit/)',
    ]);
    expect(report.folderCycles).toHaveLength(1);
    expect(report.folderCycles[0]).toMatch(/^bench, devkit, eval, test: /);
    expect(formatReport(report).failed).toBe(true);
  });

  it('lists clients imported outside their connector folders, through require.resolve too', () => {
    const report = checkLayers(
      project({
        'processors/embed.ts': "import OpenAI from 'openai/index.js';\nexport default OpenAI;",
        'processors/pool.ts':
          "import { createRequire } from 'node:module';\nexport const p = createRequire(import.meta.url).resolve('onnxruntime-node');",
        'service/es.ts': "export { Client } from '@elastic/elasticsearch';",
      }),
    );
    expect(report.clientImports).toEqual([
      'processors/embed.ts imports openai (processors/ is not a connector folder for it)',
      'processors/pool.ts imports onnxruntime-node (processors/ is not a connector folder for it)',
      'service/es.ts imports @elastic/elasticsearch (service/ is not a connector folder for it)',
    ]);
  });

  it('fails on a run-time module loop but only lists one that passes through a type-only import', () => {
    const runtime = checkLayers(
      project({
        'processors/a.ts': "import { b } from './b.js';\nexport const a = () => b;",
        'processors/b.ts': "import { a } from './a.js';\nexport const b = () => a;",
      }),
    );
    expect(runtime.moduleCycles).toEqual([
      'processors/a.ts → processors/b.ts → processors/a.ts  (2 modules in the loop)',
    ]);
    expect(formatReport(runtime).failed).toBe(true);

    const typeOnly = checkLayers(
      project({
        'processors/a.ts': "import { type B } from './b.js';\nexport type A = { b?: B };",
        'processors/b.ts':
          "import { a } from './c.js';\nimport type { A } from './a.js';\nexport type B = { a?: A };\nexport { a };",
        'processors/c.ts': 'export const a = 1;',
      }),
    );
    expect(typeOnly.moduleCycles).toEqual([]);
    expect(typeOnly.typeOnlyModuleCycles).toHaveLength(1);
    expect(formatReport(typeOnly).failed).toBe(false);
  });
});
