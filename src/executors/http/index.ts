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
  importOpenApi,
  kebabCase,
  type OpenApiImport,
  type OpenApiImportOptions,
} from './openapi-import.js';
export { importEvents, type AssetReleaseEvent } from './openapi-events.js';
