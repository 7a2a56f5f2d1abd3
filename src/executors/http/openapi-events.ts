import { canonicalDigest } from '../../core/index.js';
import type { ToolDescriptor } from '../../tools/index.js';

/** An `AssetReleasePublished` event, as `POST /v1/events` takes it. */
export interface AssetReleaseEvent {
  id: string;
  type: 'AssetReleasePublished';
  data: { assetId: string; version: string; descriptor: ToolDescriptor };
}

/**
 * The release events that publish imported descriptors. Each event id is named by the
 * descriptor's content (`openapi:ID@VERSION:DIGEST`), so the same import sent twice is duplicates,
 * not conflicts, while a different descriptor for a published version is refused as a conflict.
 */
export function importEvents(descriptors: ToolDescriptor[]): AssetReleaseEvent[] {
  return descriptors.map((descriptor) => ({
    id: eventId(descriptor),
    type: 'AssetReleasePublished',
    data: { assetId: descriptor.id, version: descriptor.version, descriptor },
  }));
}

/** `openapi:ID@VERSION:DIGEST16`, or `openapi:DIGEST` where that is past an event id's 200 characters. */
function eventId(descriptor: ToolDescriptor): string {
  const digest = canonicalDigest(descriptor);
  const named = `openapi:${descriptor.id}@${descriptor.version}:${digest.slice(0, 16)}`;
  return named.length <= 200 ? named : `openapi:${digest}`;
}
