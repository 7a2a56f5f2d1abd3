import { StringDecoder } from 'node:string_decoder';
import { deserializeMessage } from '@modelcontextprotocol/client';
import type { JSONRPCMessage } from '@modelcontextprotocol/client';

/** A stdio upstream's message grew past the connection's bound before its newline came. */
export class LineOverBound extends Error {
  constructor(readonly maxBytes: number) {
    super(`a stdio message grew past ${maxBytes} bytes before its end`);
    this.name = 'LineOverBound';
  }
}

/**
 * The messages of a stdio upstream: newline-delimited JSON-RPC, as the SDK frames it. Each chunk
 * is decoded as it comes and the pieces joined once per message, and only the new chunk is searched
 * for its end, so a message of n bytes costs O(n) memory and time, on the JavaScript heap (the
 * SDK's ReadBuffer joins the whole pending buffer on every chunk: O(n²/c) bytes copied for chunks
 * of c, tens of megabytes of native memory for one 2 MB answer, which the allocator keeps). A line
 * that is not JSON is skipped, as the SDK does (a server's stray print); one that is JSON but not a
 * JSON-RPC message is an error.
 */
export class MessageLines {
  private pieces: string[] = [];
  private decoder = new StringDecoder('utf8');
  private pending = 0;

  constructor(private readonly maxBytes: number) {}

  /**
   * The messages that `chunk` completes, in order.
   * @throws LineOverBound when the message in progress passes the bound (what was held is dropped)
   * @throws the schema's error for a JSON line that is not a JSON-RPC message
   */
  append(chunk: Buffer): JSONRPCMessage[] {
    const out: JSONRPCMessage[] = [];
    let start = 0;
    for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10, start)) {
      this.hold(chunk.subarray(start, end));
      const line = this.take();
      start = end + 1;
      const message = parse(line);
      if (message) out.push(message);
    }
    if (start < chunk.length) this.hold(chunk.subarray(start));
    return out;
  }

  private hold(part: Buffer): void {
    this.pending += part.length;
    if (this.pending > this.maxBytes) {
      this.clear();
      throw new LineOverBound(this.maxBytes);
    }
    this.pieces.push(this.decoder.write(part));
  }

  clear(): void {
    this.pieces = [];
    this.decoder = new StringDecoder('utf8');
    this.pending = 0;
  }

  /** The line held so far, without a trailing carriage return; the holding is emptied. */
  private take(): string {
    // A newline byte never falls inside a character, so the decoder holds nothing half-read here
    // but a broken sequence, which end() turns into a replacement character as toString would.
    this.pieces.push(this.decoder.end());
    const line = this.pieces.join('');
    this.clear();
    return line.endsWith('\r') ? line.slice(0, -1) : line;
  }
}

function parse(line: string): JSONRPCMessage | null {
  try {
    return deserializeMessage(line);
  } catch (err) {
    if (err instanceof SyntaxError) return null;
    throw err;
  }
}
