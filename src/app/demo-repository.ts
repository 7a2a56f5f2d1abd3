import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * The demo's git repository (`DATA/repos/demo`), made once with a few commits, so
 * `demo/git-log` has history to show in its worktree.
 */
export async function ensureDemoRepository(dir: string): Promise<string> {
  if (existsSync(join(dir, '.git'))) return dir;
  await mkdir(dir, { recursive: true });
  const git = (...args: string[]) =>
    run('git', [
      '-C',
      dir,
      '-c',
      'user.name=Gatehouse Demo',
      '-c',
      'user.email=demo@gatehouse.invalid',
      ...args,
    ]);
  await git('init', '-q', '-b', 'main');
  const commits: [string, string, string][] = [
    ['README.md', '# Demo service\n', 'Start the demo service'],
    ['src/app.txt', 'hello\n', 'Add the app'],
    ['src/app.txt', 'hello, world\n', 'Greet the whole world'],
  ];
  for (const [file, content, message] of commits) {
    await mkdir(join(dir, file, '..'), { recursive: true });
    await writeFile(join(dir, file), content);
    await git('add', file);
    await git('commit', '-q', '-m', message);
  }
  return dir;
}
