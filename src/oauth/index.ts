export { AccessTokenVerifier } from './access-token-verifier.js';
export type { AccessTokenVerifierOptions, ProvedToken } from './access-token-verifier.js';
export { DEFAULT_CLAIMS, principalOf } from './claims.js';
export type { ClaimNames } from './claims.js';
export {
  PROTECTED_RESOURCE_PATH,
  bearerChallenge,
  protectedResourceMetadata,
} from './protected-resource.js';
