// CI check: no circle of imports anywhere in the repository's TypeScript. `import type` and
// `export … from` count: a type cycle still ties the modules' meanings together.
// Usage: node --import tsx .ci/cycles.ts [root]; exit 1 naming each cycle's files, else 0.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from '@babel/parser';

// The folders whose TypeScript is checked, relative to the root.
export const FOLDERS = ['daemon', 'workers', 'schemas', 'ui/src', 'bin', 'bench', 'test'];
const SOURCE = /\.(ts|tsx|mts)$/;

function sources(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : sources(p);
    return e.isFile() && SOURCE.test(e.name) && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

// The file a relative specifier names: as written, a `.js` written for its `.ts`, or with an extension or index added.
function resolve(from: string, spec: string): string | null {
  const base = path.resolve(path.dirname(from), spec);
  const stem = base.replace(/\.(m?js|jsx)$/, '');
  const candidates = [base, `${stem}.ts`, `${stem}.tsx`, `${stem}.mts`, `${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts'), path.join(base, 'index.tsx')];
  return candidates.find((c) => existsSync(c) && statSync(c).isFile() && SOURCE.test(c)) ?? null;
}

// Every module a file names: import and export declarations (`import type` included), `import()`
// and `import('…')` types. A real parser, so that text in strings and comments is not taken for one.
export function specifiers(file: string, text: string): string[] {
  const plugins: ('typescript' | 'jsx')[] = file.endsWith('.tsx') ? ['typescript', 'jsx'] : ['typescript'];
  const ast = parse(text, { sourceType: 'module', plugins, errorRecovery: true });
  const found: string[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!node || typeof node !== 'object') return;
    const n = node as { type?: string; source?: { type?: string; value?: unknown } };
    const named = n.type === 'ImportDeclaration' || n.type === 'ExportNamedDeclaration' || n.type === 'ExportAllDeclaration' || n.type === 'ImportExpression' || n.type === 'TSImportType';
    if (named && n.source?.type === 'StringLiteral' && typeof n.source.value === 'string') found.push(n.source.value);
    for (const [k, v] of Object.entries(node)) if (k !== 'loc' && typeof v === 'object') walk(v);
  };
  walk(ast.program);
  return found;
}

// Every file's relative imports (of any kind), as files.
export function importGraph(root: string): Map<string, string[]> {
  const files = FOLDERS.flatMap((f) => sources(path.join(root, f)));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = specifiers(file, readFileSync(file, 'utf8'))
      .filter((spec) => spec.startsWith('./') || spec.startsWith('../'))
      .map((spec) => resolve(file, spec))
      .filter((t): t is string => t !== null);
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

// The strongly connected components that are cycles (Tarjan): more than one file, or a file importing itself.
export function cycles(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = path.resolve(process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..'));
  const graph = importGraph(root);
  const found = cycles(graph);
  const rel = (f: string) => path.relative(root, f);
  if (found.length > 0) {
    for (const c of found) console.error(`import cycle (${c.length} files): ${c.map(rel).join(', ')}`);
    console.error(`${found.length} import cycle(s): break them (shared types in their own module, or pass functions in)`);
    process.exit(1);
  }
  const edges = [...graph.values()].reduce((n, t) => n + t.length, 0);
  console.log(`no import cycles: ${graph.size} files, ${edges} relative imports`);
}
