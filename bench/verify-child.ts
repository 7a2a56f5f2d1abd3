/**
 * What `gatehouse audit verify --data DIR` runs (verifyDataDirectory), in a process of its own so
 * a benchmark can read its time and peak memory: prints one JSON line with the verdicts and this
 * process's resource usage; exits 1 when a log fails.
 *
 *   node verify-child.js DATA_DIR
 */
import { verifyDataDirectory } from '../src/app/index.js';

const dir = process.argv[2];
if (dir === undefined) throw new Error('usage: verify-child.js DATA_DIR');
const results = await verifyDataDirectory(dir);
process.stdout.write(`${JSON.stringify({ results, usage: process.resourceUsage() })}\n`);
if (results.some((r) => !r.ok)) process.exitCode = 1;
