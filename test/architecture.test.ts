import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve('src');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The part a file belongs to: its first folder under src/. */
function partOf(file: string): string {
  return relative(SRC, file).split(sep)[0]!;
}

interface Edge {
  from: string;
  to: string;
  spec: string;
}

/** Static `import … from` / `export … from`, and dynamic `import(…)` of a relative path. */
const IMPORT =
  /(?:^|\n)\s*(?:import|export)[^'"]*?from\s+['"](\.[^'"]+)['"]|\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/g;

function imports(): Edge[] {
  const edges: Edge[] = [];
  for (const file of files(SRC)) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(IMPORT)) {
      const spec = (m[1] ?? m[2])!;
      edges.push({ from: file, to: resolve(dirname(file), spec), spec });
    }
  }
  return edges;
}

describe('architecture', () => {
  const edges = imports();

  it('finds the imports it checks', () => {
    expect(edges.length).toBeGreaterThan(100);
  });

  it('core imports nothing of ours outside core', () => {
    const bad = edges.filter((e) => partOf(e.from) === 'core' && partOf(e.to) !== 'core');
    expect(bad.map((e) => `${relative(SRC, e.from)} → ${e.spec}`)).toEqual([]);
  });

  it("a part imports another part only through that part's index.ts", () => {
    const bad = edges.filter((e) => {
      const from = partOf(e.from);
      const to = partOf(e.to);
      return from !== to && relative(SRC, e.to) !== join(to, 'index.js');
    });
    expect(bad.map((e) => `${relative(SRC, e.from)} → ${e.spec}`)).toEqual([]);
  });

  it('finds dynamic imports too', () => {
    expect(edges.some((e) => e.spec.endsWith('/app/index.js') && partOf(e.from) === 'cli')).toBe(
      true,
    );
  });

  it('only app (the composition root) imports storage', () => {
    const bad = edges.filter(
      (e) => partOf(e.to) === 'storage' && !['storage', 'app'].includes(partOf(e.from)),
    );
    expect(bad.map((e) => `${relative(SRC, e.from)} → ${e.spec}`)).toEqual([]);
  });

  it('every part is named in the lint rules', () => {
    const parts = readdirSync(SRC, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    const config = readFileSync(resolve('eslint.config.js'), 'utf8');
    const listed = /const parts = \[([^\]]*)\]/.exec(config)?.[1] ?? '';
    const named = [...listed.matchAll(/'([a-z-]+)'/g)].map((m) => m[1]);
    expect(named.sort()).toEqual(parts.sort());
  });

  it('parts import each other without cycles', () => {
    const graph = new Map<string, Set<string>>();
    for (const e of edges) {
      const from = partOf(e.from);
      const to = partOf(e.to);
      if (from === to) continue;
      if (!graph.has(from)) graph.set(from, new Set());
      graph.get(from)!.add(to);
    }
    const cycles: string[] = [];
    const visit = (node: string, path: string[]) => {
      if (path.includes(node)) {
        cycles.push([...path.slice(path.indexOf(node)), node].join(' → '));
        return;
      }
      for (const next of graph.get(node) ?? []) visit(next, [...path, node]);
    };
    for (const node of graph.keys()) visit(node, []);
    expect(cycles).toEqual([]);
  });

  it('names configuration settings only in app and cli (the config layer), besides the places listed to move', () => {
    const configLayer = (file: string) => ['app', 'cli'].includes(partOf(file));
    /** Code without its comments (a comment may name a setting; a message or a read may not). */
    const code = (file: string) =>
      readFileSync(file, 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '');
    // The settings: those the config layer names, and those the configuration reference lists.
    const settings = new Set([
      ...files(SRC)
        .filter(configLayer)
        .flatMap((f) => [...code(f).matchAll(/['"`](GATEHOUSE_[A-Z0-9_]+)\b/g)].map((m) => m[1]!)),
      ...[
        ...readFileSync(resolve('docs/configuration.md'), 'utf8').matchAll(
          /`(GATEHOUSE_[A-Z0-9_]+)/g,
        ),
      ].map((m) => m[1]!),
    ]);
    expect(settings.has('GATEHOUSE_MASTER_KEY')).toBe(true);
    expect(settings.has('GATEHOUSE_MCP_MAX_MESSAGE_BYTES')).toBe(true);
    const named = files(SRC)
      .filter((f) => !configLayer(f))
      .flatMap((f) =>
        [...code(f).matchAll(/GATEHOUSE_[A-Z0-9_]+/g)]
          .map((m) => m[0])
          .filter((name) => settings.has(name))
          .map((name) => `${relative(SRC, f)}: ${name}`),
      );
    // Still to move behind what app passes (as GatewayEgress's source and the MCP message
    // bound's setting are); nothing may join them.
    const toMove = [
      'audit/shared-signing-keys.ts: GATEHOUSE_MASTER_KEY',
      'http/mcp-endpoint/guards.ts: GATEHOUSE_ALLOWED_HOSTS',
      'http/mcp-endpoint/guards.ts: GATEHOUSE_ALLOWED_ORIGINS',
      'http/mcp-endpoint/guards.ts: GATEHOUSE_PUBLIC_URL',
      'http/routes/oauth-routes.ts: GATEHOUSE_OAUTH_ISSUER',
      'secrets/master-key.ts: GATEHOUSE_MASTER_KEY',
    ];
    expect([...new Set(named)].sort()).toEqual(toMove);
  });
});
