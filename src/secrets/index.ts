export { CredentialBroker } from './credential-broker.js';
export type {
  CredentialBrokerOptions,
  CredentialLease,
  IssuedCredentials,
} from './credential-broker.js';
export {
  SECRET_NAME_PATTERN,
  SECRET_SCOPE_PATTERN,
  credentialNeedSchema,
  credentialNeedsSchema,
  credentialNeedProblems,
  unboundHeaderProblems,
  fillBindingProblems,
  fillOrigin,
  credentialNeedSentences,
  headerOrigin,
  injectionTarget,
} from './credential-need.js';
export type {
  CredentialInjection,
  CredentialNeed,
  CredentialNeedProblem,
} from './credential-need.js';
export { MASTER_KEY_BYTES, MASTER_KEY_ENV, loadMasterKey, masterKeyId } from './master-key.js';
export type { MasterKey, MasterKeyOptions } from './master-key.js';
export { SecretCipher } from './secret-cipher.js';
export type { SealedSecret, SecretBinding } from './secret-cipher.js';
export { MAX_SECRET_BYTES, SecretService } from './secret-service.js';
export type { SecretServiceOptions } from './secret-service.js';
export type {
  SecretMetadata,
  SecretPutOptions,
  SecretStore,
  StoredSecret,
} from './secret-store.js';
export { Redactor, patternRedactor } from './redactor.js';
export { byteTextRedactor } from './byte-text-redactor.js';
export type { BrokeredValue, RedactJsonOptions, RedactorOptions } from './redactor.js';
export type { StreamRedactor } from './stream-redactor.js';
export { RemovalEncoding, RemovalTally, redactionMarker } from './redaction.js';
export type { Removal } from './redaction.js';
