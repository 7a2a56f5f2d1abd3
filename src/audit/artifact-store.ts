/** Content-addressed storage of whole outputs that were cut for size. */
export interface ArtifactStore {
  /** Stores the bytes under their SHA-256 (hex) and returns it. Safe to repeat. */
  put(bytes: Uint8Array): Promise<string>;
  /** The bytes stored under a digest, or undefined. */
  get(sha256: string): Promise<Buffer | undefined>;
}
