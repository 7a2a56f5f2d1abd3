import { createHash } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import { utf8Prefix } from '../core/index.js';
import type { ArtifactStore, ArtifactWriter } from '../audit/index.js';
import type { Removal } from '../secrets/index.js';

/** A redactor over a stream of text; holds back a bounded tail to catch split secrets. */
export interface StreamRedaction {
  push(chunk: string): string;
  end(): string;
  /** What was removed so far (kinds and counts). */
  removals(): Removal[];
}

/** One captured stream: bounded, already redacted text, and the whole stream as an artifact. */
export interface CapturedStream {
  text: string;
  /** Bytes the (redacted) stream had in all. */
  bytes: number;
  truncated: boolean;
  /** SHA-256 of the artifact holding the redacted stream (whole, or its first bytes), when cut. */
  artifact?: string;
  /** Bytes the artifact holds, when it could not hold the whole stream (its bound was reached). */
  artifactBytes?: number;
  /**
   * The stream as the tool wrote it, before redaction, for the full output's digest only (never
   * stored): its text while it fits the bound, else the SHA-256 and size of its bytes.
   */
  raw: string | { sha256: string; bytes: number };
}

/** How a cut output is described in the tool's output: its size and where it is kept whole. */
export interface CutNote {
  /** Bytes the (redacted) output had in all. */
  bytes: number;
  /** SHA-256 of the artifact holding it (whole, or its first `artifactBytes`). */
  artifact?: string;
  /** Bytes the artifact holds, when a flood outgrew the artifact's bound too. */
  artifactBytes?: number;
}

/**
 * The note of a cut stream, one shape for every executor (shell streams, an HTTP body, an MCP
 * answer), so an agent finds a cut output's artifact the same way whatever tool it called.
 */
export function cutNote(s: CapturedStream): CutNote {
  return {
    bytes: s.bytes,
    ...(s.artifact !== undefined ? { artifact: s.artifact } : {}),
    ...(s.artifactBytes !== undefined ? { artifactBytes: s.artifactBytes } : {}),
  };
}

/**
 * Captures one output stream of a tool: every chunk is redacted first, the first `maxBytes` are
 * kept in memory, and up to `maxArtifactBytes` are spooled to an artifact so a cut output stays on
 * disk, whole unless it floods past that bound. Memory and disk stay bounded however much the
 * tool writes.
 */
export class OutputCapture {
  private readonly decoder = new StringDecoder('utf8');
  private kept = '';
  private keptBytes = 0;
  private bytes = 0;
  private writer: ArtifactWriter | undefined;
  private spooled = 0;
  private readonly rawHash = createHash('sha256');
  private rawBytes = 0;
  /** The raw text while it is within the bound; undefined once it outgrew it. */
  private rawText: string | undefined = '';

  constructor(
    private readonly artifacts: ArtifactStore,
    private readonly redaction: StreamRedaction,
    private readonly maxBytes: number,
    private readonly maxArtifactBytes = Number.POSITIVE_INFINITY,
  ) {}

  /** Takes one chunk as the tool wrote it. */
  write(chunk: Buffer): void {
    this.rawHash.update(chunk);
    this.rawBytes += chunk.length;
    this.take(this.redaction.push(this.keepRaw(this.decoder.write(chunk))));
  }

  /** Flushes and returns what was captured. */
  async end(): Promise<CapturedStream> {
    this.take(this.redaction.push(this.keepRaw(this.decoder.end())) + this.redaction.end());
    const raw = this.rawText ?? { sha256: this.rawHash.digest('hex'), bytes: this.rawBytes };
    const truncated = this.bytes > this.keptBytes;
    if (!truncated) {
      await this.writer?.abort();
      return { text: this.kept, bytes: this.bytes, truncated: false, raw };
    }
    const artifact = await this.writer!.finish();
    return {
      text: this.kept,
      bytes: this.bytes,
      truncated: true,
      artifact,
      ...(this.spooled < this.bytes ? { artifactBytes: this.spooled } : {}),
      raw,
    };
  }

  /** What the redaction removed from this stream. */
  removals(): Removal[] {
    return this.redaction.removals();
  }

  /** Drops the spool (the call failed before its output mattered). */
  async abort(): Promise<void> {
    await this.writer?.abort();
  }

  private keepRaw(text: string): string {
    if (this.rawText !== undefined)
      this.rawText = this.rawBytes <= this.maxBytes ? this.rawText + text : undefined;
    return text;
  }

  private take(text: string): void {
    if (text === '') return;
    const buf = Buffer.from(text, 'utf8');
    this.bytes += buf.length;
    const room = this.maxBytes - this.keptBytes;
    if (this.writer === undefined && buf.length <= room) {
      this.kept += text;
      this.keptBytes += buf.length;
      return;
    }
    // The stream outgrew the bound: spool all of it (what was kept, then the rest) to an artifact.
    if (this.writer === undefined) {
      this.writer = this.artifacts.writer();
      this.spool(Buffer.from(this.kept, 'utf8'));
    }
    this.spool(buf);
    if (room <= 0) return;
    this.kept += utf8Prefix(text, room);
    this.keptBytes += room;
  }

  /** Appends to the artifact up to its bound; the rest of a flood is counted, not kept. */
  private spool(buf: Buffer): void {
    const room = this.maxArtifactBytes - this.spooled;
    if (room <= 0) return;
    const part = buf.length <= room ? buf : buf.subarray(0, room);
    this.writer!.write(part);
    this.spooled += part.length;
  }
}
