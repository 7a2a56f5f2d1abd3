/**
 * The floor server, run as a child process: a bare Fastify route that durably inserts one row per
 * request into SQLite (better-sqlite3, WAL, synchronous=FULL) and answers.
 *
 *   node bare-server.js <single|group> <sqlite file>
 *
 * `single` commits each insert on its own (one fsync per request). `group` batches the inserts
 * queued in one turn of the event loop into one transaction, as SqliteDatabase.write does.
 * Prints `listening <url>` once it listens.
 */
import Database from 'better-sqlite3';
import Fastify from 'fastify';

const [mode, file] = process.argv.slice(2);
if ((mode !== 'single' && mode !== 'group') || !file) {
  process.stderr.write('usage: bare-server.js <single|group> <sqlite file>\n');
  process.exit(2);
}

const db = new Database(file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec(
  'CREATE TABLE IF NOT EXISTS calls (id INTEGER PRIMARY KEY, idempotency_key TEXT NOT NULL, body TEXT NOT NULL)',
);
const insert = db.prepare('INSERT INTO calls (idempotency_key, body) VALUES (?, ?)');

type Insert = () => number;
let queue: { fn: Insert; resolve: (id: number) => void; reject: (e: unknown) => void }[] = [];
let scheduled = false;

function flush(): void {
  scheduled = false;
  const batch = queue;
  queue = [];
  try {
    const ids = db.transaction(() => batch.map((w) => w.fn()))();
    batch.forEach((w, i) => w.resolve(ids[i]!));
  } catch (err) {
    for (const w of batch) w.reject(err);
  }
}

function write(fn: Insert): Promise<number> {
  if (mode === 'single') return Promise.resolve(fn());
  return new Promise((resolve, reject) => {
    queue.push({ fn, resolve, reject });
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  });
}

const app = Fastify({ logger: false });
app.post('/v1/invocations', async (req) => {
  const key = String(req.headers['idempotency-key']);
  const body = JSON.stringify(req.body);
  const id = await write(() => Number(insert.run(key, body).lastInsertRowid));
  return { id, status: 'observed' };
});

const url = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`listening ${url}\n`);
const stop = (): void => {
  void app.close().then(() => {
    if (queue.length > 0) flush();
    db.close();
    process.exit(0);
  });
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
