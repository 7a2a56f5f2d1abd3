import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../tenancy/index.js';
import type { Grant } from './access.js';

/** What a route handler answers: a status and a JSON body (or text for `/metrics`). */
export interface RouteAnswer {
  status: number;
  body: unknown;
  contentType?: string;
}

/**
 * One REST route; the table of them drives both Fastify and the OpenAPI document. Who may call it
 * is not here: it is the route's entry in the access table (`ACCESS`, access-table.ts).
 */
export interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  summary: string;
  tag: string;
  /** JSON Schema of the body, for the OpenAPI document (handlers validate with their own messages). */
  body?: Record<string, unknown>;
  /** Query parameters, for the OpenAPI document. */
  query?: Record<string, { type: string; description: string }>;
  /** Header parameters, for the OpenAPI document. */
  headers?: Record<string, { description: string; required: boolean }>;
  /** What the answer is, for the OpenAPI document. */
  responses: Record<string, string>;
  /** The media type of the answers, for the OpenAPI document (default application/json). */
  responseType?: string;
  /**
   * Answers the request of an authorized principal, within what the access table granted it
   * (`grant.owner` narrows it to its own resources); a streaming route takes over `reply` itself
   * and answers null.
   */
  handler: (
    principal: Principal,
    req: FastifyRequest,
    reply: FastifyReply,
    grant: Grant,
  ) => Promise<RouteAnswer | null> | RouteAnswer | null;
}
