const STDERR_TAIL = 4096;

/** The end of what a stdio server wrote to stderr, kept to explain its failures. */
export class StderrTail {
  private tail = '';
  /** True once the tail dropped the start of stderr (so its first line is partial). */
  private cut = false;

  /** Adds a chunk the server wrote; only the last 4096 characters are kept. */
  append(chunk: Buffer): void {
    const tail = this.tail + chunk.toString('utf8');
    this.cut ||= tail.length > STDERR_TAIL;
    this.tail = tail.slice(-STDERR_TAIL);
  }

  /**
   * What the server said on stderr: its first line naming an error, else its last lines, passed
   * through `redact` (servers echo a rejected token in exactly such lines, and the note reaches
   * errors, state reasons and the audit). ` (stderr: …)` to append to a message, or ''.
   */
  note(redact: (text: string) => string): string {
    // A line cut by the tail could hold the end of a secret no pattern recognizes any more.
    let tail = this.tail;
    if (this.cut) tail = tail.includes('\n') ? tail.slice(tail.indexOf('\n') + 1) : '';
    const lines = tail
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && l !== '^' && l !== '}' && l !== '{');
    const telling = lines.find((l) => /\b(error|exception|fatal|cannot|denied)\b/i.test(l));
    const shown = telling ? [telling] : lines.slice(-3);
    const text = redact(shown.join(' | '));
    return text ? ` (stderr: ${text.slice(0, 500)})` : '';
  }
}
