/**
 * The layer check: reads the imports of every TypeScript file of the project and fails, with a list,
 * when a module imports a layer above its own, when two folders import each other (directly or round
 * a longer loop), or when a file outside the connector folders imports a network or model client.
 * Module-level import cycles are listed too. It also holds package.json to what the product runs:
 * a package the product imports at run time must be a `dependency` (else an install without
 * development dependencies — the image — breaks), and every `dependency` must be imported by the
 * product (else the image carries a package it never runs). A lazy `import('x')` of a development
 * dependency is allowed: that code path is for development (starting containers) and says so when
 * the package is absent.
 *
 * Layers, lowest first: schemas ← processors (pure stage logic) ← streams (Kafka, Elasticsearch, HTTP
 * clients, the stage runtime) ← service and bin. infra (the local Kafka and Elasticsearch launchers)
 * stands beside streams: it may use schemas and processors, never service or bin. Above the product
 * sit devkit (what tests, benchmarks and evaluations share: infrastructure, fakes, development data)
 * and, on it, test, bench and eval, which may import devkit and the product but never one another,
 * so each can change without breaking the others; test may also import scripts (it tests them).
 * scripts may import anything, and so may the remaining folders and root files (samples, configs).
 *
 * The TypeScript compiler (already a dependency) parses the files, so an import is seen exactly as
 * the compiler sees it: static, `export … from`, `import type`, `import('…')` in types and code, and
 * `require` / `require.resolve` (how a worker finds a native package). Type-only imports count for
 * layers and folders: a layer that names a higher layer's types still depends on it. A module cycle
 * fails the check only when every step of it is a run-time import (ES modules then meet a binding
 * before it is initialised, depending on which module loads first); loops that pass through a
 * type-only import are erased by the compiler and only listed.
 *
 * Usage: `npm run check:layers` (exit 1 on any finding, 0 when clean).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

type Layer =
  | 'schemas'
  | 'processors'
  | 'streams'
  | 'infra'
  | 'service'
  | 'bin'
  | 'devkit'
  | 'test'
  | 'bench'
  | 'eval'
  | 'scripts'
  | 'top';

/** The product: what devkit, test, bench and eval may all import. */
const product: readonly Layer[] = ['schemas', 'processors', 'streams', 'infra', 'service', 'bin'];

/**
 * What each layer may import besides itself; `top` may import anything. streams and infra stand on
 * one level, so either may use the other, but not both ways round (that is a folder cycle). scripts
 * may import anything too, but as a layer of its own, so that a loop with test is seen.
 */
const mayImport: Record<Exclude<Layer, 'top'>, readonly Layer[]> = {
  schemas: [],
  processors: ['schemas'],
  streams: ['schemas', 'processors', 'infra'],
  infra: ['schemas', 'processors', 'streams'],
  service: ['schemas', 'processors', 'streams', 'infra'],
  bin: ['schemas', 'processors', 'streams', 'infra', 'service'],
  devkit: product,
  test: [...product, 'devkit', 'scripts'],
  bench: [...product, 'devkit'],
  eval: [...product, 'devkit'],
  scripts: [...product, 'devkit', 'test', 'bench', 'eval', 'top'],
};

/** Clients of networks and models: only connector code may import them. */
const clientPackages = ['kafkajs', '@elastic/elasticsearch', 'openai', 'onnxruntime-node', 'fastify'] as const;
type ClientPackage = (typeof clientPackages)[number];

/**
 * The connector folders and the clients each may import; the development folders start and drive
 * the real servers, so they may import every client.
 */
const connectorClients: Partial<Record<Layer, readonly ClientPackage[]>> = {
  streams: clientPackages,
  infra: clientPackages,
  service: ['fastify'],
  devkit: clientPackages,
  test: clientPackages,
  bench: clientPackages,
  eval: clientPackages,
  scripts: clientPackages,
};

/**
 * Known exceptions, each with the reason it stands. An exception that no longer matches anything
 * is itself a finding, so the list can only shrink.
 */
interface Exception {
  from: string;
  /** A project file (path from the root) or a client package name. */
  to: string;
  reason: string;
}
const exceptions: readonly Exception[] = [];

const skippedFolders = new Set(['node_modules', 'dist', '.git', 'coverage', 'test-artifacts']);

export interface ImportEdge {
  from: string;
  /** A project file (path from the root, '/'-separated) or a package name. */
  to: string;
  kind: 'file' | 'package';
  /** Every import of this target from this file is `import type` (erased at run time). */
  typeOnly: boolean;
  /** Every import of this target from this file is a call (`import('x')`, `require('x')`), loaded when used. */
  lazy: boolean;
}

function layerOf(file: string): Layer {
  const folder = file.includes('/') ? file.slice(0, file.indexOf('/')) : '';
  return folder in mayImport ? (folder as Layer) : 'top';
}

function folderOf(file: string): string {
  return file.includes('/') ? file.slice(0, file.indexOf('/')) : '.';
}

function listTypeScriptFiles(root: string, folder = root): string[] {
  const files: string[] = [];
  for (const name of readdirSync(folder)) {
    if (skippedFolders.has(name)) continue;
    const path = join(folder, name);
    if (statSync(path).isDirectory()) files.push(...listTypeScriptFiles(root, path));
    else if (/\.(c|m)?ts$/.test(name)) files.push(relative(root, path).split(sep).join('/'));
  }
  return files.sort();
}

interface Specifier {
  lazy?: boolean;
  text: string;
  typeOnly: boolean;
}

/** `import type {…}`, `import {type a, type b}`, `export type {…} from`: erased by the compiler. */
function isTypeOnly(node: ts.ImportDeclaration | ts.ExportDeclaration): boolean {
  if (ts.isExportDeclaration(node)) {
    if (node.isTypeOnly) return true;
    const clause = node.exportClause;
    return (
      clause !== undefined &&
      ts.isNamedExports(clause) &&
      clause.elements.length > 0 &&
      clause.elements.every((element) => element.isTypeOnly)
    );
  }
  const clause = node.importClause;
  if (clause === undefined) return false;
  if (clause.phaseModifier === ts.SyntaxKind.TypeKeyword) return true;
  const bindings = clause.namedBindings;
  return (
    clause.name === undefined &&
    bindings !== undefined &&
    ts.isNamedImports(bindings) &&
    bindings.elements.length > 0 &&
    bindings.elements.every((element) => element.isTypeOnly)
  );
}

/** Every module specifier a file names, as the compiler parses it. */
function specifiersOf(path: string): Specifier[] {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: Specifier[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier))
        found.push({ text: node.moduleSpecifier.text, typeOnly: isTypeOnly(node) });
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const expression = node.moduleReference.expression;
      if (ts.isStringLiteral(expression)) found.push({ text: expression.text, typeOnly: node.isTypeOnly });
    } else if (ts.isImportTypeNode(node)) {
      const argument = node.argument;
      if (ts.isLiteralTypeNode(argument) && ts.isStringLiteral(argument.literal)) {
        found.push({ text: argument.literal.text, typeOnly: true });
      }
    } else if (ts.isCallExpression(node) && node.arguments.length >= 1) {
      const first = node.arguments[0];
      if (first && ts.isStringLiteralLike(first) && isModuleLoad(node.expression)) {
        found.push({ text: first.text, typeOnly: false, lazy: true });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** `import('x')`, `require('x')`, `require.resolve('x')`, `createRequire(…).resolve('x')`. */
function isModuleLoad(callee: ts.Expression): boolean {
  if (callee.kind === ts.SyntaxKind.ImportKeyword) return true;
  if (ts.isIdentifier(callee)) return callee.text === 'require';
  if (ts.isPropertyAccessExpression(callee) && callee.name.text === 'resolve') {
    return /require/i.test(callee.expression.getText());
  }
  return false;
}

/** A relative specifier as the file it names (NodeNext: `./x.js` is `./x.ts`), or undefined. */
function resolveRelative(root: string, from: string, specifier: string): string | undefined {
  const base = resolve(root, dirname(from), specifier);
  const candidates = [
    base.replace(/\.js$/, '.ts'),
    base.replace(/\.mjs$/, '.mts'),
    base.replace(/\.cjs$/, '.cts'),
    base,
    `${base}.ts`,
    join(base, 'index.ts'),
  ];
  const hit = candidates.find((candidate) => existsSync(candidate) && statSync(candidate).isFile());
  return hit === undefined ? undefined : relative(root, hit).split(sep).join('/');
}

function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

export function collectEdges(root: string): { files: string[]; edges: ImportEdge[] } {
  const files = listTypeScriptFiles(root);
  const edges: ImportEdge[] = [];
  for (const from of files) {
    const targets = new Map<string, ImportEdge>();
    for (const { text, typeOnly, lazy = false } of specifiersOf(join(root, from))) {
      let target: Omit<ImportEdge, 'typeOnly' | 'lazy'> | undefined;
      if (text.startsWith('.')) {
        const to = resolveRelative(root, from, text);
        if (to !== undefined && to !== from) target = { from, to, kind: 'file' };
      } else if (!text.startsWith('node:')) {
        target = { from, to: packageName(text), kind: 'package' };
      }
      if (target === undefined) continue;
      const seen = targets.get(target.to);
      targets.set(target.to, {
        ...target,
        typeOnly: typeOnly && (seen?.typeOnly ?? true),
        // A type-only import is erased, so only the run-time imports decide whether loading is lazy.
        lazy: (typeOnly || lazy) && (seen?.lazy ?? true),
      });
    }
    edges.push(...targets.values());
  }
  return { files, edges };
}

/** Tarjan's strongly connected components; only those of two or more nodes are returned. */
function cycles(nodes: readonly string[], next: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let counter = 0;
  const connect = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const target of next.get(node) ?? []) {
      if (!index.has(target)) {
        connect(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of nodes) if (!index.has(node)) connect(node);
  return found.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** One loop through a component, as a readable path `a → b → … → a`. */
function loopThrough(component: readonly string[], next: ReadonlyMap<string, readonly string[]>): string[] {
  const members = new Set(component);
  const start = component[0]!;
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const target of next.get(node) ?? []) {
      if (!members.has(target)) continue;
      if (target === start) {
        const path = [start];
        for (let at = node; at !== start; at = previous.get(at)!) path.splice(1, 0, at);
        return [...path, start];
      }
      if (!previous.has(target)) {
        previous.set(target, node);
        queue.push(target);
      }
    }
  }
  return [...component, start];
}

export interface LayerReport {
  files: number;
  imports: number;
  upward: string[];
  folderCycles: string[];
  clientImports: string[];
  moduleCycles: string[];
  typeOnlyModuleCycles: string[];
  exceptionsUsed: string[];
  staleExceptions: string[];
  /** Product imports of packages package.json does not list as dependencies (none checked without a package.json). */
  undeclaredDependencies: string[];
  /** `dependencies` no product file imports. */
  unusedDependencies: string[];
}

interface PackageManifest {
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

/** What package.json promises against what the product's files import. */
function checkDependencies(
  root: string,
  edges: readonly ImportEdge[],
): Pick<LayerReport, 'undeclaredDependencies' | 'unusedDependencies'> {
  const manifestPath = join(root, 'package.json');
  if (!existsSync(manifestPath)) return { undeclaredDependencies: [], unusedDependencies: [] };
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as PackageManifest;
  const runtime = new Set(Object.keys(manifest.dependencies ?? {}));
  const development = new Set(Object.keys(manifest.devDependencies ?? {}));
  const builtins = new Set(builtinModules);
  const undeclared: string[] = [];
  const imported = new Set<string>();
  for (const edge of edges) {
    if (edge.kind !== 'package' || edge.typeOnly || builtins.has(edge.to)) continue;
    if (!product.includes(layerOf(edge.from))) continue;
    imported.add(edge.to);
    if (runtime.has(edge.to) || (edge.lazy && development.has(edge.to))) continue;
    undeclared.push(
      development.has(edge.to)
        ? `${edge.from} imports ${edge.to}, a development dependency, at run time (declare it in dependencies)`
        : `${edge.from} imports ${edge.to}, which package.json does not declare`,
    );
  }
  const unused = [...runtime]
    .filter((name) => !imported.has(name))
    .map((name) => `${name} (no product file imports it: move it to devDependencies or remove it)`);
  return { undeclaredDependencies: undeclared, unusedDependencies: unused };
}

export function checkLayers(root: string): LayerReport {
  const { files, edges } = collectEdges(root);
  const used = new Set<Exception>();
  const excepted = (edge: ImportEdge): boolean => {
    const exception = exceptions.find((candidate) => candidate.from === edge.from && candidate.to === edge.to);
    if (exception) used.add(exception);
    return exception !== undefined;
  };

  const upward: string[] = [];
  const clientImports: string[] = [];
  const folderEdges = new Map<string, string[]>();
  const folderWitness = new Map<string, ImportEdge>();
  const moduleNext = new Map<string, string[]>();
  const runtimeNext = new Map<string, string[]>();
  for (const edge of edges) {
    const fromLayer = layerOf(edge.from);
    if (edge.kind === 'package') {
      const client = clientPackages.find((name) => name === edge.to);
      if (client && fromLayer !== 'top' && !(connectorClients[fromLayer] ?? []).includes(client) && !excepted(edge)) {
        clientImports.push(`${edge.from} imports ${client} (${fromLayer}/ is not a connector folder for it)`);
      }
      continue;
    }
    moduleNext.set(edge.from, [...(moduleNext.get(edge.from) ?? []), edge.to]);
    if (!edge.typeOnly) runtimeNext.set(edge.from, [...(runtimeNext.get(edge.from) ?? []), edge.to]);
    const toLayer = layerOf(edge.to);
    if (fromLayer !== 'top' && toLayer !== fromLayer && !mayImport[fromLayer].includes(toLayer) && !excepted(edge)) {
      upward.push(
        `${edge.from} → ${edge.to} (${fromLayer}/ may not import ${toLayer === 'top' ? folderOf(edge.to) : toLayer}/)`,
      );
    }
    // The top layer may import anything, so loops among its folders (samples, the root files) are not layering.
    const [fromFolder, toFolder] = [folderOf(edge.from), folderOf(edge.to)];
    if (fromFolder !== toFolder && fromLayer !== 'top') {
      const targets = folderEdges.get(fromFolder) ?? [];
      if (!targets.includes(toFolder)) folderEdges.set(fromFolder, [...targets, toFolder]);
      if (!folderWitness.has(`${fromFolder}→${toFolder}`)) folderWitness.set(`${fromFolder}→${toFolder}`, edge);
    }
  }

  const witness = (from: string, to: string): string => {
    const edge = folderWitness.get(`${from}→${to}`)!;
    return `${edge.from} → ${edge.to}`;
  };
  // One entry per group of folders that reach one another: its members, one loop through them, and
  // each pair of folders that import each other directly.
  const folderCycles = cycles([...folderEdges.keys()].sort(), folderEdges).map((component) => {
    const loop = loopThrough(component, folderEdges);
    const pairs = component.flatMap((a) =>
      component
        .filter((b) => a < b && folderEdges.get(a)?.includes(b) && folderEdges.get(b)?.includes(a))
        .map((b) => `\n      ${a} ⇄ ${b}: ${witness(a, b)}; ${witness(b, a)}`),
    );
    const steps = loop.slice(1).map((to, at) => witness(loop[at]!, to));
    return `${component.join(', ')}: ${loop.join(' → ')} (${steps.join('; ')})${pairs.join('')}`;
  });
  const describeCycle =
    (next: ReadonlyMap<string, readonly string[]>) =>
    (component: readonly string[]): string =>
      `${loopThrough(component, next).join(' → ')}  (${component.length} modules in the loop)`;
  const moduleCycles = cycles(files, runtimeNext).map(describeCycle(runtimeNext));
  const runtimeCycleMembers = new Set(cycles(files, runtimeNext).flat());
  const typeOnlyModuleCycles = cycles(files, moduleNext)
    .filter((component) => !component.every((member) => runtimeCycleMembers.has(member)))
    .map(describeCycle(moduleNext));

  const describe = (exception: Exception): string => `${exception.from} → ${exception.to}: ${exception.reason}`;
  return {
    files: files.length,
    imports: edges.length,
    upward,
    folderCycles,
    clientImports,
    moduleCycles,
    typeOnlyModuleCycles,
    exceptionsUsed: [...used].map(describe),
    staleExceptions: exceptions.filter((exception) => !used.has(exception)).map(describe),
    ...checkDependencies(root, edges),
  };
}

export function formatReport(report: LayerReport): { text: string; failed: boolean } {
  const sections: [string, string[]][] = [
    ['Imports a layer may not make (upward, or between test, bench and eval)', report.upward],
    ['Import cycles between folders', report.folderCycles],
    ['Clients imported outside the connector folders', report.clientImports],
    ['Import cycles between modules (run-time imports)', report.moduleCycles],
    ['Exceptions that match nothing any more (remove them)', report.staleExceptions],
    ['Packages the product imports that are not its dependencies', report.undeclaredDependencies],
    ['Dependencies the product never imports', report.unusedDependencies],
  ];
  const lines = [`Layer check: ${report.files} TypeScript files, ${report.imports} imports.`];
  for (const [title, items] of sections) {
    lines.push(`${title}: ${items.length}`, ...items.map((item) => `  ${item}`));
  }
  lines.push(
    `Module cycles through a type-only import (erased, listed only): ${report.typeOnlyModuleCycles.length}`,
    ...report.typeOnlyModuleCycles.map((item) => `  ${item}`),
  );
  lines.push(`Known exceptions: ${report.exceptionsUsed.length}`, ...report.exceptionsUsed.map((item) => `  ${item}`));
  const failed = sections.some(([, items]) => items.length > 0);
  lines.push(failed ? 'Layer check FAILED.' : 'Layer check passed.');
  return { text: lines.join('\n'), failed };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const { text, failed } = formatReport(checkLayers(root));
  console.log(text);
  process.exitCode = failed ? 1 : 0;
}
