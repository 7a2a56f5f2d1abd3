export { leafHash, nodeHash, emptyRoot } from './merkle-hash.js';
export { appendSiblings, completedSubtrees, rangeSubtrees } from './merkle-subtree.js';
export type { SubtreeHash, SubtreeRef } from './merkle-subtree.js';
export { treeRoot, proveInclusion, proveConsistency } from './merkle-proof.js';
export type { SubtreeSource } from './merkle-proof.js';
export { verifyInclusion, verifyConsistency } from './merkle-verify.js';
export { MerkleFrontier } from './merkle-frontier.js';
export type { KeyedSignature, Signer } from './signer.js';
export { jwkThumbprint } from './jwk-thumbprint.js';
export { verifyWithJwks, findJwk } from './jwks.js';
export type { Jwk, JwkSet } from './jwks.js';
export { SigningKeyring, readPublishedKeys } from './signing-keys.js';
export { recentJwks } from './recent-jwks.js';
export type { Keyring, PublishedKey } from './signing-keys.js';
export { SharedSigningKeyring } from './shared-signing-keys.js';
export { jwkOf } from './signing-key-material.js';
export type { SharedSigningKeyringOptions } from './shared-signing-keys.js';
export type {
  KeySealer,
  SealedKey,
  SigningKeyStore,
  StoredSigningKey,
} from './signing-key-store.js';
export { writeFileAtomic } from './atomic-write.js';
export { pae, signEnvelope, verifyEnvelope } from './dsse.js';
export type { DsseEnvelope, DsseVerification } from './dsse.js';
export {
  RECEIPT_PAYLOAD_TYPE,
  STATEMENT_TYPE,
  RECEIPT_PREDICATE_TYPE,
  buildReceiptStatement,
  signReceipt,
  verifyReceipt,
} from './receipt.js';
export type { ReceiptPredicate, ReceiptStatement, ReceiptVerification } from './receipt.js';
export { signCheckpoint, verifyCheckpoint } from './checkpoint.js';
export type { Checkpoint, TreeHead } from './checkpoint.js';
export type { ArtifactStore, ArtifactWriter } from './artifact-store.js';
export type { AuditStore, SizeRange, StoredAuditRecord } from './audit-store.js';
export { AuditLog } from './audit-log.js';
export type { InclusionAnswer, ConsistencyAnswer } from './audit-log.js';
export { verifyAuditLog } from './verify-log.js';
export type { LogVerification } from './verify-log.js';
