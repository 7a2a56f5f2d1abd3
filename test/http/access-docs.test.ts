import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ACCESS, Owned } from '../../src/http/index.js';
import type { RouteAccess } from '../../src/http/index.js';
import { ROLES } from '../../src/tenancy/index.js';

/**
 * The rights docs/api.md shows are the access table's (ACCESS), cell by cell: the table of its
 * section "Who may call what" must be exactly the rows this test derives from ACCESS. On a
 * mismatch the test prints the whole table to paste (then `npm run format`).
 */

const DOC = fileURLToPath(new URL('../../docs/api.md', import.meta.url));
const SECTION = '## Who may call what';

/** One row of the documented matrix, derived from the table: route, a cell per role, notes. */
function row(key: string, access: RouteAccess): string[] {
  const cells = ROLES.map((role) => {
    if (access.roles === 'public') return 'no token';
    const reach = access.roles[role];
    return reach === 'tenant' ? 'yes' : reach === 'own' ? 'own' : '—';
  });
  const notes = [access.owns ? `own: ${Owned[access.owns]}` : '', access.why ?? ''].filter(
    (n) => n !== '',
  );
  return [`\`${key}\``, ...cells, notes.join('; ').replaceAll('|', '\\|')];
}

function expectedRows(): string[][] {
  return Object.entries(ACCESS).map(([key, access]) => row(key, access));
}

/** The rows of the first table in the section, each split into trimmed cells. */
function documentedRows(): string[][] {
  const text = readFileSync(DOC, 'utf8');
  const section = text.split(SECTION)[1]?.split(/^## /m)[0] ?? '';
  const lines = section.split('\n').filter((l) => l.startsWith('|'));
  return lines
    .slice(2) // the header and its separator
    .map((l) =>
      l
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((c) => c.trim()),
    );
}

function markdown(): string {
  const header = ['route', ...ROLES, 'notes'];
  return [header, header.map(() => '---'), ...expectedRows()]
    .map((cells) => `| ${cells.join(' | ')} |`)
    .join('\n');
}

describe('docs/api.md shows the access table', () => {
  it('its "Who may call what" matrix is the table, route by route and role by role', () => {
    const documented = documentedRows();
    expect(documented.length, `${SECTION} was found with its table`).toBeGreaterThan(0);
    expect(documented, `paste this under ${SECTION} in docs/api.md:\n\n${markdown()}\n`).toEqual(
      expectedRows(),
    );
  });

  it('names the roles in the order the matrix has them', () => {
    expect([...ROLES]).toEqual(['agent', 'reviewer', 'operator', 'maintainer', 'admin']);
    const header = readFileSync(DOC, 'utf8')
      .split(SECTION)[1]!
      .split('\n')
      .find((l) => l.startsWith('|'))!;
    expect(
      header
        .split('|')
        .map((c) => c.trim())
        .filter((c) => c !== ''),
    ).toEqual(['route', ...ROLES, 'notes']);
  });
});
