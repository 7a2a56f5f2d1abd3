/** Writes one artifact in pieces; the digest is known once it is finished. */
export interface ArtifactWriter {
  /** Appends bytes (synchronously, so memory stays bounded however large the artifact). */
  write(bytes: Uint8Array): void;
  /** Stores the artifact under its SHA-256 (hex) and returns it. */
  finish(): Promise<string>;
  /** Drops what was written. Safe after finish. */
  abort(): Promise<void>;
}

/** Content-addressed storage of whole outputs that were cut for size. */
export interface ArtifactStore {
  /** Stores the bytes under their SHA-256 (hex) and returns it. Safe to repeat. */
  put(bytes: Uint8Array): Promise<string>;
  /** A writer for an artifact too large to hold in memory. */
  writer(): ArtifactWriter;
  /** The bytes stored under a digest, or undefined. */
  get(sha256: string): Promise<Buffer | undefined>;
}
