import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal, Role } from '../tenancy/index.js';

/** What a route handler answers: a status and a JSON body (or text for `/metrics`). */
export interface RouteAnswer {
  status: number;
  body: unknown;
  contentType?: string;
}

/** One REST route; the table of them drives both Fastify and the OpenAPI document. */
export interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  summary: string;
  tag: string;
  /** Roles allowed; `public` routes need no token. */
  roles: readonly Role[] | 'public';
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
  /** Answers the request; a streaming route takes over `reply` itself and answers null. */
  handler: (
    principal: Principal,
    req: FastifyRequest,
    reply: FastifyReply,
  ) => Promise<RouteAnswer | null> | RouteAnswer | null;
}
