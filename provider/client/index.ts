/** The typed client of the Cloud Infrastructure Management API. */
export {
  CloudClient,
  type ApiResponse,
  type CallArgs,
  type CallOptions,
  type CloudClientOptions,
  type ItemOf,
  type ListAllExtra,
  type Page,
  type PagedRouteName,
  type ResultOf,
  type RouteMethods,
} from "./client";
export { Authenticator, cookieHeader, setCookies, type ClientAuth } from "./auth";
export {
  ApiError,
  ClientClosedError,
  JobFailedError,
  JobNotFoundError,
  JobTimeoutError,
  RequestValidationError,
  type ApiErrorInit,
  type JobRecord,
  type RequestIssue,
} from "./errors";
export {
  CodedError,
  errorCatalogue,
  errorCodeOf,
  errorEntry,
  raiseJobTimeout,
  type ErrorCodeName,
  type ErrorEntry,
} from "./error-codes";
export {
  BatchedDeleter,
  batchedDeleterOf,
  type BatchedDeleterOptions,
  type BatchedDeleterStats,
  type BulkOutcome,
  type BulkRow,
} from "./batched-deleter";
export { CallerOperations, callerOperations, Gatherer, type GatherOptions } from "./gather";
export {
  JobWaiter,
  type JobQuery,
  type JobWaiterOptions,
  type JobWaiterStats,
  type TickRecord,
  type WaitOptions,
} from "./job-waiter";
export {
  Pacer,
  RateBudget,
  strictlyLimitedRoutes,
  type BudgetSnapshot,
  type PacingOptions,
  type Permit,
} from "./pacing";
export { Redactor } from "./redact";
export { duration, silentProgressLog, stderrProgressLog, type ProgressContext, type ProgressLog } from "./progress";
export {
  isIdempotent,
  isMutating,
  retryAfterMs,
  type ExchangeInfo,
  type RetryOptions,
  type SettingLabels,
  type TimeoutOptions,
} from "./transport";
