/** One published version of a tool or an agent, and its state when it has one. */
export interface KnownVersion {
  version: string;
  state?: string;
}

/**
 * The sentence a refusal of an unknown `id@version` ends with, so the caller can correct it:
 * `versions of demo/echo: 1.0.0 (active), 1.1.0 (deprecated)`, or `no version of demo/x is
 * published`.
 */
export function knownVersionsText(id: string, versions: readonly KnownVersion[]): string {
  if (versions.length === 0) return `no version of ${id} is published`;
  const list = versions.map((v) => (v.state ? `${v.version} (${v.state})` : v.version));
  return `versions of ${id}: ${list.join(', ')}`;
}
