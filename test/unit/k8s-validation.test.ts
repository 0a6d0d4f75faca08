import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InfraError } from '../../infra/errors.js';
import { pathExists, publishAtomically } from '../../infra/k8s-validation/cache-layout.js';
import { convertCrdVersionSchema, convertNode, crdSchemaFiles } from '../../infra/k8s-validation/crd-to-json-schema.js';
import { verifyGoModuleDownload } from '../../infra/k8s-validation/go-modules.js';
import { localizeSchema } from '../../infra/k8s-validation/kubernetes-schemas.js';
import { listOverlays } from '../../infra/k8s-validation/overlays.js';
import { requirePinnedSha256 } from '../../infra/k8s-validation/pinned-hash.js';
import type { CrdModulePin } from '../../infra/k8s-validation/pins.js';
import { parseKubeconformReport, tidyMessage } from '../../infra/k8s-validation/validate.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'neon-k8s-unit-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function rejectionOf(promise: Promise<unknown>): Promise<InfraError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InfraError);
  return error as InfraError;
}

describe('convertNode (CRD OpenAPI schema → strict JSON Schema)', () => {
  it('closes every object that lists its properties, at every depth', () => {
    const converted = convertNode({
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: { list: { type: 'array', items: { type: 'object', properties: { a: { type: 'string' } } } } },
        },
      },
    });
    expect(converted).toEqual({
      type: 'object',
      additionalProperties: false,
      properties: {
        spec: {
          type: 'object',
          additionalProperties: false,
          properties: {
            list: {
              type: 'array',
              items: { type: 'object', additionalProperties: false, properties: { a: { type: 'string' } } },
            },
          },
        },
      },
    });
  });

  it('leaves open what keeps unknown fields, says what else it takes, or lists nothing', () => {
    const preserved = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { a: {} } };
    expect(convertNode(preserved)).toEqual(preserved);
    const map = { type: 'object', properties: { a: {} }, additionalProperties: { type: 'string' } };
    expect(convertNode(map)).toEqual(map);
    expect(convertNode({ type: 'object' })).toEqual({ type: 'object' });
  });

  it('does not close the branches of allOf/anyOf/oneOf/not, which only constrain their parent', () => {
    const converted = convertNode({
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'string' } },
      oneOf: [{ properties: { a: { type: 'string' } }, required: ['a'] }, { required: ['b'] }],
      not: { properties: { a: { enum: ['x'] } } },
    }) as Record<string, unknown>;
    expect(converted.additionalProperties).toBe(false);
    expect(converted.oneOf).toEqual([{ properties: { a: { type: 'string' } }, required: ['a'] }, { required: ['b'] }]);
    expect(converted.not).toEqual({ properties: { a: { enum: ['x'] } } });
  });

  it("turns OpenAPI's nullable into a null type and a null value", () => {
    expect(convertNode({ type: 'string', nullable: true, enum: ['a'] })).toEqual({
      type: ['string', 'null'],
      enum: ['a', null],
    });
    expect(convertNode({ type: 'string', nullable: false })).toEqual({ type: 'string' });
  });

  it('lets an embedded resource carry apiVersion, kind and metadata', () => {
    const converted = convertNode({
      type: 'object',
      'x-kubernetes-embedded-resource': true,
      properties: { spec: { type: 'object' } },
    }) as { properties: Record<string, unknown> };
    expect(Object.keys(converted.properties).sort()).toEqual(['apiVersion', 'kind', 'metadata', 'spec']);
  });

  it("checks a resource's metadata against Kubernetes' ObjectMeta as well as the CRD's own rules", () => {
    const schema = convertCrdVersionSchema(
      {
        type: 'object',
        properties: { metadata: { type: 'object', properties: { name: { maxLength: 10 } } } },
      },
      { objectMetaRef: '../defs.json#/ObjectMeta' },
    );
    expect(schema.properties).toEqual({
      metadata: {
        allOf: [{ $ref: '../defs.json#/ObjectMeta' }, { type: 'object', properties: { name: { maxLength: 10 } } }],
      },
    });
  });
});

describe('crdSchemaFiles', () => {
  const crd = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {size: {type: integer}}}}}}
    - name: v1alpha1
      served: false
      storage: false
      schema: {openAPIV3Schema: {type: object}}
`;

  it("names each served version's schema the way kubeconform's template asks for it", () => {
    const files = crdSchemaFiles(crd, 'widgets.yaml');
    expect(files.map((f) => f.relativePath)).toEqual(['example.com/widget_v1.json']);
    expect(files[0]).toMatchObject({ group: 'example.com', kind: 'Widget', version: 'v1' });
    expect(files[0]!.schema).toMatchObject({ additionalProperties: false });
  });

  it('refuses anything but v1 CustomResourceDefinitions, and a version without a schema', () => {
    expect(() => crdSchemaFiles('apiVersion: v1\nkind: ConfigMap\n', 'x.yaml')).toThrow(/x.yaml: expected/);
    expect(() => crdSchemaFiles(crd.replace('schema: {openAPIV3Schema: {type: object}}', ''), 'w.yaml')).not.toThrow();
    const noSchema = crd.replace(/schema: \{openAPIV3Schema: \{type: object, properties.*\n/, '\n');
    expect(() => crdSchemaFiles(noSchema, 'w.yaml')).toThrow(/Widget v1 has no openAPIV3Schema/);
  });
});

describe('localizeSchema (kubernetes-validate files made resolvable offline)', () => {
  it('drops the $id and points the shared definitions at the file next door', () => {
    const schema = {
      $id: 'https://kubernetes.io/api/deployment/apps/v1',
      properties: { spec: { $ref: '/api/_definitions.json#/$defs/io.k8s.api.apps.v1.DeploymentSpec' } },
    };
    expect(localizeSchema(schema, false)).toEqual({
      properties: { spec: { $ref: '_definitions.json#/$defs/io.k8s.api.apps.v1.DeploymentSpec' } },
    });
    expect(localizeSchema({ $defs: { a: { $ref: '/api/_definitions.json#/$defs/b' } } }, true)).toEqual({
      $defs: { a: { $ref: '#/$defs/b' } },
    });
  });

  it('refuses a reference it could only resolve over the network', () => {
    expect(() => localizeSchema({ $ref: 'https://example.com/x.json' }, false)).toThrow(/unexpected \$ref/);
  });
});

describe("reading kubeconform's report", () => {
  const report = JSON.stringify({
    resources: [
      {
        filename: 'stdin',
        kind: 'Deployment',
        name: 'intake',
        version: 'apps/v1',
        status: 'statusInvalid',
        msg: "problem validating schema. Check JSON formatting: jsonschema validation failed with 'file:///cache/deployment-apps-v1.json#' - at '/spec': validation failed   - at '/spec/template/spec/containers/0/ports/0/containerPort': got string, want integer   - at '/spec': additional properties 'replica' not allowed",
      },
      {
        filename: 'stdin',
        kind: 'Widget',
        name: 'w',
        version: 'example.com/v1',
        status: 'statusError',
        msg: 'could not find schema for Widget',
      },
    ],
    summary: { valid: 3, invalid: 1, errors: 1, skipped: 0 },
  });

  it('keeps the causes and drops the wrappers', () => {
    expect(tidyMessage('could not find schema for Widget')).toBe('could not find schema for Widget');
    expect(
      tidyMessage("x - at '/metadata': allOf failed   - at '/metadata': additional properties 'lables' not allowed"),
    ).toBe("at '/metadata': additional properties 'lables' not allowed");
  });

  it('lists every resource that is not valid, labelled with its source, in a stable order', () => {
    const parsed = parseKubeconformReport(report, 'overlays/prod');
    expect(parsed.ok).toBe(false);
    expect(parsed.resources).toBe(5);
    expect(parsed.problems).toEqual([
      {
        source: 'overlays/prod',
        kind: 'Deployment',
        name: 'intake',
        apiVersion: 'apps/v1',
        message:
          "at '/spec/template/spec/containers/0/ports/0/containerPort': got string, want integer; at '/spec': additional properties 'replica' not allowed",
      },
      {
        source: 'overlays/prod',
        kind: 'Widget',
        name: 'w',
        apiVersion: 'example.com/v1',
        message: 'could not find schema for Widget',
      },
    ]);
  });
});

describe('pinned hashes', () => {
  const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

  it('accepts the pinned file and refuses any other, loudly', async () => {
    const file = join(dir, 'thing.whl');
    await writeFile(file, 'the pinned release');
    await expect(requirePinnedSha256(file, sha256('the pinned release'), 'PyPI')).resolves.toBeUndefined();
    const error = await rejectionOf(requirePinnedSha256(file, sha256('another release'), 'PyPI'));
    expect(error.code).toBe('checksum_mismatch');
    expect(error.message).toContain('thing.whl failed verification');
  });

  it("checks a Go module's h1: hash and zip SHA-256 against its pin", async () => {
    const zip = join(dir, 'module.zip');
    await writeFile(zip, 'zip bytes');
    const pin: CrdModulePin = {
      operator: 'test',
      module: 'example.com/op',
      version: 'v1.0.0',
      moduleSum: 'h1:abc=',
      zipSha256: sha256('zip bytes'),
      crdPaths: [],
    };
    const answer = { Dir: join(dir, 'tree'), Zip: zip, Sum: 'h1:abc=' };
    expect(await verifyGoModuleDownload(answer, pin)).toBe(join(dir, 'tree'));
    expect((await rejectionOf(verifyGoModuleDownload({ ...answer, Sum: 'h1:other=' }, pin))).code).toBe(
      'checksum_mismatch',
    );
    const otherZip = { ...pin, zipSha256: sha256('other bytes') };
    expect((await rejectionOf(verifyGoModuleDownload(answer, otherZip))).code).toBe('checksum_mismatch');
    expect((await rejectionOf(verifyGoModuleDownload({ Error: 'not found' }, pin))).code).toBe('download_failed');
  });
});

describe('publishAtomically', () => {
  it('shows an entry only once it is complete, and leaves nothing behind when filling fails', async () => {
    const target = join(dir, 'cache', 'entry');
    await expect(
      publishAtomically(target, async (scratch) => {
        await writeFile(join(scratch, 'half'), 'x');
        throw new Error('download interrupted');
      }),
    ).rejects.toThrow('download interrupted');
    expect(await pathExists(target)).toBe(false);
    expect(await readdir(join(dir, 'cache'))).toEqual([]);

    await publishAtomically(target, async (scratch) => {
      await mkdir(join(scratch, 'out'));
      await writeFile(join(scratch, 'out', 'file'), 'x');
      return join(scratch, 'out');
    });
    expect(await readdir(target)).toEqual(['file']);
    expect(await readdir(join(dir, 'cache'))).toEqual(['entry']);
  });

  it('keeps the entry another process finished first', async () => {
    const target = join(dir, 'entry');
    await mkdir(target);
    await writeFile(join(target, 'theirs'), 'x');
    await publishAtomically(target, async (scratch) => {
      await mkdir(join(scratch, 'out'));
      await writeFile(join(scratch, 'out', 'ours'), 'x');
      return join(scratch, 'out');
    });
    expect(await readdir(target)).toEqual(['theirs']);
  });
  it('clears scratch left by a killed run, but not that of a live one', async () => {
    const target = join(dir, 'entry');
    await mkdir(join(dir, 'entry.partial-999999999-1'), { recursive: true });
    await mkdir(join(dir, `entry.partial-${process.pid}-1`), { recursive: true });
    await publishAtomically(target, async (scratch) => {
      await mkdir(join(scratch, 'out'));
      return join(scratch, 'out');
    });
    expect((await readdir(dir)).sort()).toEqual(['entry', `entry.partial-${process.pid}-1`]);
  });
});

describe('listOverlays', () => {
  it('finds the directories with a kustomization, in order, and nothing where there is no folder', async () => {
    for (const [name, file] of [
      ['prod', 'kustomization.yaml'],
      ['notes', 'README.md'],
      ['dev', 'kustomization.yml'],
    ] as const) {
      await mkdir(join(dir, 'overlays', name), { recursive: true });
      await writeFile(join(dir, 'overlays', name, file), '');
    }
    expect(await listOverlays(join(dir, 'overlays'))).toEqual([join(dir, 'overlays/dev'), join(dir, 'overlays/prod')]);
    expect(await listOverlays(join(dir, 'missing'))).toEqual([]);
  });
});
