import { ErrorCode, GatehouseError } from '../../core/index.js';
import { MAX_EVIDENCE_JSON, boundedJsonMember, objectBody } from '../request-parsing.js';
import type { Route } from '../route.js';
import type { GatewayServices } from '../services.js';

/** Uncertain effects: list and resolve. */
export function uncertainRoutes(s: GatewayServices): Route[] {
  return [
    {
      method: 'GET',
      url: '/v1/uncertain',
      tag: 'uncertain',
      summary: 'Invocations whose effect is Uncertain and not yet resolved',
      responses: { '200': '{invocations: [...]}' },
      handler: async (principal) => ({
        status: 200,
        body: { invocations: await s.uncertain.list(principal.tenant) },
      }),
    },
    {
      method: 'POST',
      url: '/v1/invocations/:id/resolve',
      tag: 'uncertain',
      summary: 'Confirm or deny an Uncertain effect, with evidence (operators)',
      body: {
        type: 'object',
        required: ['effect', 'evidence'],
        properties: {
          effect: { enum: ['confirmed', 'denied'] },
          evidence: { description: `at most ${MAX_EVIDENCE_JSON} characters as JSON` },
        },
      },
      responses: {
        '200': 'the invocation record',
        '404': 'no such invocation',
        '409': 'not uncertain',
      },
      handler: async (principal, req) => {
        const body = objectBody(req.body, 'POST /v1/invocations/:id/resolve');
        if (body.effect !== 'confirmed' && body.effect !== 'denied') {
          throw new GatehouseError(
            ErrorCode.INVALID_INPUT,
            '/effect must be "confirmed" (it happened) or "denied" (it did not).',
            { details: { pointer: '/effect' } },
          );
        }
        const record = await s.uncertain.resolve(
          principal,
          (req.params as { id: string }).id,
          body.effect,
          boundedJsonMember(body, 'evidence', MAX_EVIDENCE_JSON),
        );
        return { status: 200, body: record };
      },
    },
  ];
}
