export { HttpExecutor, type HttpExecutorOptions } from './http-executor.js';
export {
  DEFAULT_FAILURE_STATUSES,
  HttpMethod,
  httpExecutionProblem,
  templateVariables,
  type HttpExecution,
} from './http-execution.js';
export { planHttpRequest, upstreamIdempotencyKey, type HttpRequestPlan } from './http-request.js';
export { SAFE_RESPONSE_HEADERS, type HttpOutput } from './http-response.js';
export { dereferenceOpenApi } from './openapi-document.js';
export {
  importEvents,
  importOpenApi,
  kebabCase,
  type AssetReleaseEvent,
  type OpenApiImport,
  type OpenApiImportOptions,
} from './openapi-import.js';
