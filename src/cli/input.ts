import { readFile } from 'node:fs/promises';
import { usageError } from './cli-error.js';

/**
 * Reads a file, or standard input for `-`.
 * @throws CliError (usage) naming the file when it cannot be read.
 */
export async function readInput(file: string): Promise<string> {
  if (file !== '-') {
    try {
      return await readFile(file, 'utf8');
    } catch (err) {
      throw usageError(`cannot read ${file}: ${(err as Error).message}`, err);
    }
  }
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Parses JSON a person gave as the gateway reads it (I-JSON, bounded depth), so what it would
 * refuse is refused here, before anything is sent. The parser is loaded on first use, so a command
 * that parses no JSON loads nothing outside `cli/`.
 * @throws CliError (usage) naming `what` and where the JSON breaks.
 */
export async function parseJson(text: string, what: string): Promise<unknown> {
  const { parseJsonText } = await import('../core/index.js');
  try {
    return parseJsonText(text, what);
  } catch (err) {
    throw usageError((err as Error).message, err);
  }
}

/** Reads and parses a JSON file, or standard input for `-`. @throws CliError (usage). */
export async function readJson(file: string): Promise<unknown> {
  return parseJson(await readInput(file), file === '-' ? 'standard input' : file);
}
