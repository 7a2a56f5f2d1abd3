// npm run setup: everything a fresh Debian machine needs before `npm start` or `npm test`.
// Installs the missing Debian packages of scripts/system-packages.json (as root, with apt-get;
// otherwise it prints the command to run and exits 1), then runs `npm ci`. Runs on plain Node.js
// (no dependencies), since node_modules does not exist yet.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, readFileSync, readdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = new Set(process.argv.slice(2));
const out = (line) => process.stdout.write(`${line}\n`);
const err = (line) => process.stderr.write(`${line}\n`);

/** True when `file` exists and can be executed. */
function executable(file) {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** True when `pattern` (an absolute path; `*` stands for one directory name) names a file. */
function pathExists(pattern) {
  const parts = pattern.split('/').filter((p) => p !== '');
  let found = ['/'];
  for (const part of parts) {
    const next = [];
    for (const dir of found) {
      if (part !== '*') next.push(join(dir, part));
      else {
        try {
          for (const name of readdirSync(dir)) next.push(join(dir, name));
        } catch {
          // Not a directory: no match below it.
        }
      }
    }
    found = next;
  }
  return found.some(executable);
}

/** True when what `provides` names is on this machine. */
function present(provides) {
  if (provides.command) {
    return (process.env.PATH ?? '')
      .split(delimiter)
      .some((dir) => dir !== '' && executable(join(dir, provides.command)));
  }
  if (provides.file) return pathExists(provides.file);
  if (provides.python) {
    return (
      spawnSync('/usr/bin/python3', ['-c', `import ${provides.python}`], { stdio: 'ignore' })
        .status === 0
    );
  }
  throw new Error(`scripts/system-packages.json: unknown check ${JSON.stringify(provides)}`);
}

function run(command, argv, env = process.env) {
  out(`$ ${[command, ...argv].join(' ')}`);
  const r = spawnSync(command, argv, { stdio: 'inherit', env, cwd: root });
  if (r.status !== 0) {
    err(`setup: ${command} ${argv[0] ?? ''} failed (exit ${r.status ?? r.signal}).`);
    process.exit(1);
  }
}

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 19)) {
  err(`setup: Gatehouse needs Node.js 20.19 or later; this is ${process.versions.node}.`);
  process.exit(1);
}

// GATEHOUSE_SETUP_PACKAGES names another list: the setup's own tests use it.
const listFile =
  process.env.GATEHOUSE_SETUP_PACKAGES ?? join(root, 'scripts', 'system-packages.json');
const list = JSON.parse(readFileSync(listFile, 'utf8'));
const missing = () => list.packages.filter((p) => !present(p.provides));
const needed = missing();
if (needed.length === 0) {
  out(`setup: the ${list.packages.length} system packages are present.`);
} else {
  const names = needed.map((p) => p.package);
  for (const p of needed) out(`setup: missing ${p.package} (${p.for})`);
  const install = `apt-get install -y ${names.join(' ')}`;
  if (!executable('/usr/bin/apt-get')) {
    err(`setup: this is not a Debian-like system (no apt-get); install the packages above with`);
    err(`your package manager, then run npm run setup again.`);
    process.exit(1);
  }
  if (process.getuid?.() !== 0) {
    err('setup: installing Debian packages needs root. Run this, then npm run setup again:');
    err(`  sudo apt-get update && sudo ${install}`);
    process.exit(1);
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  run('apt-get', ['update', '-qq'], env);
  run('apt-get', ['install', '-y', '-qq', ...names], env);
  const still = missing();
  if (still.length > 0) {
    err(`setup: still missing after apt-get: ${still.map((p) => p.package).join(', ')}.`);
    process.exit(1);
  }
}

if (args.has('--system-only')) process.exit(0);
run('npm', ['ci']);
out('setup: done. Next: npm start (the demo) or npm test.');
