import { existsSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve('src');
const ENTRY = resolve(SRC, 'cli/main.ts');

/** What one source file imports when it loads: type-only and dynamic `import()` are left out. */
function staticImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs: string[] = [];
  for (const m of text.matchAll(
    /(?:^|\n)\s*(?:import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/g,
  )) {
    if (m[1] === undefined) specs.push(m[2]!);
  }
  return specs;
}

/** Every file and package the entry loads before it parses its arguments. */
function loadedAtStart(entry: string): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const spec of staticImports(file)) {
      if (!spec.startsWith('.')) {
        packages.add(spec);
        continue;
      }
      const target = resolve(dirname(file), spec).replace(/\.js$/, '.ts');
      if (!existsSync(target)) throw new Error(`${relative(SRC, file)} imports missing ${spec}`);
      visit(target);
    }
  };
  visit(entry);
  return { files: [...files].map((f) => relative(SRC, f)), packages: [...packages] };
}

describe('what the gatehouse command loads before it runs a command', () => {
  const { files, packages } = loadedAtStart(ENTRY);

  it('finds the command modules it checks', () => {
    expect(files).toContain('cli/program.ts');
    expect(files).toContain('cli/commands/invoke-command.ts');
    expect(files).toContain('cli/commands/serve-command.ts');
    expect(files.length).toBeGreaterThan(12);
  });

  it('loads no server code: no app, storage, http, mcp, sandbox or any part outside cli', () => {
    expect(files.filter((f) => !f.startsWith('cli/'))).toEqual([]);
  });

  it('loads only commander and Node built-ins: no fastify, better-sqlite3, Cedar, ajv or MCP SDK', () => {
    expect(packages.filter((p) => p !== 'commander' && !p.startsWith('node:'))).toEqual([]);
  });

  it('sees through type-only imports and dynamic import(), and follows re-exports', () => {
    expect(staticImports(resolve(SRC, 'cli/commands/serve-command.ts'))).not.toContain(
      '../../app/index.js',
    );
    expect(readFileSync(resolve(SRC, 'cli/commands/serve-command.ts'), 'utf8')).toContain(
      "import('../../app/index.js')",
    );
    expect(staticImports(resolve(SRC, 'app/index.ts'))).toContain('./gateway.js');
    expect(staticImports(resolve(SRC, 'cli/invocation-report.ts'))).not.toContain(
      '../invocation/index.js',
    );
  });
});
