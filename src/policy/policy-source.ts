import type { DetailedError, PolicyJson } from '@cedar-policy/cedar-wasm/nodejs';
import type { Cedar } from './cedar-instance.js';

/** One policy of a policy text, with the id people see. */
export interface ParsedPolicy {
  /** The `@id("…")` annotation when there is one, else Cedar's default id (`policy0`, …). */
  id: string;
  /** Cedar's default id for it: `policy<N>`, N its position in the text. */
  cedarId: string;
  json: PolicyJson;
}

/** A policy text split into its policies, or why it could not be. */
type ParsedPolicySource =
  { ok: true; policies: ParsedPolicy[] } | { ok: false; errors: DetailedError[] };

/**
 * Splits a Cedar policy text into its policies and gives each the id people see: its `@id`
 * annotation, or Cedar's default `policy<N>`. Templates are refused (Gatehouse links none).
 * Pure; throws only what `cedar` throws (a WebAssembly trap on a text nesting too deep).
 */
export function parsePolicySource(cedar: Cedar, text: string): ParsedPolicySource {
  const parts = cedar.policySetTextToParts(text);
  if (parts.type === 'failure') return { ok: false, errors: parts.errors };
  if (parts.policy_templates.length > 0) {
    return {
      ok: false,
      errors: [plainError('policy templates (with ?principal or ?resource) are not supported')],
    };
  }
  // policySetTextToParts returns policies sorted by their default id (policy0, policy1, policy10,
  // policy2, …), not in text order; sorting the default ids the same way pairs them up again.
  const cedarIds = parts.policies.map((_, i) => `policy${i}`).sort(compareBytes);
  const policies: ParsedPolicy[] = [];
  const errors: DetailedError[] = [];
  parts.policies.forEach((policyText, i) => {
    const json = cedar.policyToJson(policyText);
    const cedarId = cedarIds[i] ?? `policy${i}`;
    if (json.type === 'failure') {
      errors.push(...json.errors);
      return;
    }
    policies.push({ id: json.json.annotations?.['id'] ?? cedarId, cedarId, json: json.json });
  });
  if (errors.length > 0) return { ok: false, errors };
  policies.sort((a, b) => textIndex(a.cedarId) - textIndex(b.cedarId));
  return { ok: true, policies };
}

function textIndex(cedarId: string): number {
  return Number(cedarId.slice('policy'.length));
}

function compareBytes(a: string, b: string): number {
  if (a === b) return 0;
  return a < b ? -1 : 1;
}

function plainError(message: string): DetailedError {
  return { message, help: null, code: null, url: null, severity: null };
}
