// Typed errors of the Kubernetes API: `ApiError` for a `Status` answer (reason drives policy), `ConnectionError`
// when the API server could not be reached at all.

export type ApiErrorReason =
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Invalid'
  | 'Gone'
  | 'Forbidden'
  | 'Unauthorized'
  | 'BadRequest'
  | 'TooManyRequests'
  | 'ServerTimeout'
  | 'InternalError'
  | 'Timeout'
  | 'Unavailable'
  | 'Unknown';

/** One entry of `Status.details.causes` (for `Invalid`: which field was rejected and why). */
export interface StatusCause {
  readonly reason?: string;
  readonly message?: string;
  readonly field?: string;
}

/** The `meta/v1 Status` body the API server sends with an error (and in watch `ERROR` events). */
export interface Status {
  readonly kind?: string;
  readonly status?: string;
  readonly message?: string;
  readonly reason?: string;
  readonly code?: number;
  readonly details?: {
    readonly name?: string;
    readonly group?: string;
    readonly kind?: string;
    readonly uid?: string;
    readonly causes?: readonly StatusCause[];
    readonly retryAfterSeconds?: number;
  };
}

/** Server reasons that are ours verbatim; the others are mapped below. */
const KNOWN_REASONS: ReadonlySet<string> = new Set<ApiErrorReason>([
  'NotFound',
  'AlreadyExists',
  'Conflict',
  'Invalid',
  'Gone',
  'Forbidden',
  'Unauthorized',
  'BadRequest',
  'TooManyRequests',
  'ServerTimeout',
  'InternalError',
  'Timeout',
]);

const REASON_BY_CODE: ReadonlyMap<number, ApiErrorReason> = new Map<number, ApiErrorReason>([
  [400, 'BadRequest'],
  [401, 'Unauthorized'],
  [403, 'Forbidden'],
  [404, 'NotFound'],
  [409, 'Conflict'],
  [410, 'Gone'],
  [422, 'Invalid'],
  [429, 'TooManyRequests'],
  [500, 'InternalError'],
  [503, 'Unavailable'],
  [504, 'Timeout'],
]);

function reasonOf(code: number, serverReason: string | undefined): ApiErrorReason {
  if (serverReason !== undefined && KNOWN_REASONS.has(serverReason)) return serverReason as ApiErrorReason;
  if (serverReason === 'Expired') return 'Gone'; // "too old resource version" / expired continue token
  if (serverReason === 'ServiceUnavailable') return 'Unavailable';
  return REASON_BY_CODE.get(code) ?? 'Unknown';
}

export interface ApiErrorContext {
  /** e.g. "PATCH /api/v1/namespaces/ns/pods/p" — makes log lines self-explanatory. */
  readonly request?: string;
}

export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly reason: ApiErrorReason;
  /** HTTP status code (or `Status.code` of a watch ERROR event). */
  readonly code: number;
  /** The Status body as received (undefined when the body was not a Status). */
  readonly status?: Status;
  /** The server's own reason string, e.g. "Expired" (mapped to `Gone` in `reason`). */
  readonly serverReason?: string;
  readonly causes: readonly StatusCause[];
  readonly retryAfterSeconds?: number;

  constructor(code: number, status: Status | undefined, message: string, context: ApiErrorContext = {}) {
    super(context.request === undefined ? message : `${context.request}: ${message}`);
    this.code = code;
    this.reason = reasonOf(code, status?.reason);
    if (status !== undefined) this.status = status;
    if (status?.reason !== undefined) this.serverReason = status.reason;
    this.causes = status?.details?.causes ?? [];
    const retry = status?.details?.retryAfterSeconds;
    if (retry !== undefined) this.retryAfterSeconds = retry;
  }

  /** What the work queue honours (controller.ts `retryAfterMsOf`) when a reconcile fails with this error. */
  get retryAfterMs(): number | undefined {
    return this.retryAfterSeconds === undefined ? undefined : this.retryAfterSeconds * 1000;
  }
}

function isStatus(v: unknown): v is Status {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Builds an ApiError from a Status-shaped value (watch ERROR event object, parsed error body). */
export function apiErrorFromStatus(value: unknown, fallbackCode: number, context: ApiErrorContext = {}): ApiError {
  const status = isStatus(value) ? value : undefined;
  const code = typeof status?.code === 'number' && status.code > 0 ? status.code : fallbackCode;
  const message = typeof status?.message === 'string' && status.message !== '' ? status.message : `HTTP ${code}`;
  return new ApiError(code, status, message, context);
}

/** Builds an ApiError from a non-2xx HTTP response body (JSON Status, or plain text from a proxy). */
export function apiErrorFromResponse(code: number, body: string, context: ApiErrorContext = {}): ApiError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    const text = body.trim().slice(0, 500);
    return new ApiError(code, undefined, text === '' ? `HTTP ${code}` : `HTTP ${code}: ${text}`, context);
  }
  return apiErrorFromStatus(parsed, code, context);
}

function hasReason(e: unknown, reason: ApiErrorReason): boolean {
  return e instanceof ApiError && e.reason === reason;
}

export const isNotFound = (e: unknown): boolean => hasReason(e, 'NotFound');
export const isAlreadyExists = (e: unknown): boolean => hasReason(e, 'AlreadyExists');
export const isConflict = (e: unknown): boolean => hasReason(e, 'Conflict');
export const isInvalid = (e: unknown): boolean => hasReason(e, 'Invalid');
/** 410: a watch or continue token whose resourceVersion was compacted away ("Expired"/"Gone"). */
export const isGone = (e: unknown): boolean => hasReason(e, 'Gone');

/**
 * Network-level failure (connection refused, reset, DNS, TLS, timeout): no answer from the API server.
 * Retryable; the message says where we tried to connect and to check that the API server is reachable.
 */
export class ConnectionError extends Error {
  override readonly name = 'ConnectionError';
  readonly server: string;
  /** The request certainly never reached the server (refused, DNS): even a POST may be retried. */
  readonly notReceived: boolean;

  constructor(server: string, request: string, cause: unknown, notReceived = false) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    super(
      `cannot reach the Kubernetes API server at ${server} (${request}): ${detail}; ` +
        'check that the API server is running and reachable (kubeconfig server address, network, proxy)',
      { cause },
    );
    this.server = server;
    this.notReceived = notReceived;
  }
}

/**
 * The request was cancelled by its signal (typically: this replica lost its leader lease, so it must not
 * write any more). The socket was destroyed; a write in flight may or may not have been applied.
 */
export class RequestAbortedError extends Error {
  override readonly name = 'AbortError';

  constructor(request: string) {
    super(`${request}: request cancelled (this replica is stopping or lost its leader lease)`);
  }
}

/**
 * The leader lease could expire before this request reaches the API server (the fence deadline, leader-election.ts
 * `fenceRemainingMs`, passed while it waited for a token, the auth hook, a socket or the answer): it was not sent,
 * or its socket was destroyed before an answer. A kind of RequestAbortedError: not a failure of the CloneSet.
 */
export class FenceDeadlineError extends RequestAbortedError {
  constructor(request: string, sent: boolean) {
    super(request);
    this.message = sent
      ? `${request}: cut at the leader lease's fence deadline before an answer (it may or may not have been applied)`
      : `${request}: not sent — the leader lease's fence deadline passed before it could go on the wire`;
  }
}

/**
 * The request may or may not have been applied: the connection dropped after it was sent (no answer), or the
 * server answered 504, which says it "may still be processing the request". Only a read can tell.
 */
export function isOutcomeUnknown(e: unknown): boolean {
  return (e instanceof ConnectionError && !e.notReceived) || (e instanceof ApiError && e.code === 504);
}

/** The message of a thrown value, for logs, events and conditions. */
export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
