/**
 * Typed client of the jupyter_sched REST API (`{base_url}api/sched/...`).
 *
 * Every request and answer type comes from `schema.ts`, which openapi-typescript generates from
 * `jupyter_sched/extension/openapi.yaml` (`jlpm openapi:generate`; `jlpm openapi:check` fails when
 * the two drift). {@link ROUTES} names one method and path per operation of the document and is
 * checked against it at compile time: an operation added, removed, moved or retyped in the
 * document breaks `tsc` here until the client follows.
 *
 * The client talks through a small {@link Transport} so that it runs unchanged in JupyterLab
 * (`ServerConnection.makeRequest` adds the token and XSRF headers) and in unit tests.
 */
import { clockText, serverText, shownText } from './format';
import type { components, operations, paths } from './schema';

/** The document's component schemas (`Schemas['Job']`, `Schemas['IdlePolicy']`, ...). */
export type Schemas = components['schemas'];

/** Minimal request interface; the JupyterLab implementation wraps `ServerConnection.makeRequest`. */
export interface Transport {
  /**
   * Send a request to `path` (relative to the server's base URL, e.g. `api/sched/jobs`).
   * Resolves with the response whatever its status; rejects on network failure.
   */
  request(path: string, init?: RequestInit): Promise<Response>;
}

/** The API root, relative to the server base URL. */
export const API_ROOT = 'api/sched';

type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'patch';

/** One operation's method and path template, as in openapi.yaml. */
interface IRoute {
  readonly method: HttpMethod;
  readonly path: keyof paths;
}

/** Method and path of every operation of openapi.yaml (compile-time checked, see below). */
export const ROUTES = {
  getConfig: { method: 'get', path: '/config' },
  getMe: { method: 'get', path: '/me' },
  getInventory: { method: 'get', path: '/inventory' },
  listJobs: { method: 'get', path: '/jobs' },
  submitJob: { method: 'post', path: '/jobs' },
  getJob: { method: 'get', path: '/jobs/{job_id}' },
  cancelJob: { method: 'delete', path: '/jobs/{job_id}' },
  updateJob: { method: 'patch', path: '/jobs/{job_id}' },
  cancelJobs: { method: 'post', path: '/jobs/cancel' },
  getJobLogs: { method: 'get', path: '/jobs/{job_id}/logs' },
  reportJobProgress: { method: 'post', path: '/jobs/{job_id}/progress' },
  dryrunJob: { method: 'post', path: '/dryrun' },
  listLeases: { method: 'get', path: '/leases' },
  requestLease: { method: 'post', path: '/leases' },
  getLease: { method: 'get', path: '/leases/{lease_id}' },
  releaseLease: { method: 'delete', path: '/leases/{lease_id}' },
  keepaliveLease: { method: 'post', path: '/leases/{lease_id}/keepalive' },
  leaseHeartbeat: { method: 'post', path: '/leases/{lease_id}/heartbeat' },
  getQueue: { method: 'get', path: '/queue' },
  getQuotas: { method: 'get', path: '/quotas' },
  setQuotas: { method: 'put', path: '/quotas' },
  getIdlePolicy: { method: 'get', path: '/idle-policy' },
  setIdlePolicy: { method: 'put', path: '/idle-policy' },
  listProfiles: { method: 'get', path: '/profiles' },
  getZoneLabels: { method: 'get', path: '/zone-labels' },
  streamEvents: { method: 'get', path: '/events' },
  getTelemetry: { method: 'get', path: '/telemetry' },
  getTelemetryHistory: { method: 'get', path: '/telemetry/history' },
  getIdle: { method: 'get', path: '/idle' },
  getAudit: { method: 'get', path: '/audit' },
  getQuotaWhatIf: { method: 'get', path: '/quotas/what-if' },
  moveTeam: { method: 'post', path: '/teams/{team}/move' },
  renameUser: { method: 'post', path: '/users/{user}/rename' },
  cordonNode: { method: 'post', path: '/nodes/{node}/cordon' },
  uncordonNode: { method: 'post', path: '/nodes/{node}/uncordon' },
  getEtaAccuracy: { method: 'get', path: '/eta-accuracy' },
  getUsage: { method: 'get', path: '/usage' },
  getUsageReport: { method: 'get', path: '/usage/report' },
  getUsageWaste: { method: 'get', path: '/usage/waste' },
  // admins' corrections of ends claimed while the service was down (red33 R3's old rows): routes of the API the panel
  // does not call yet — listed so the route table stays the whole openapi.yaml
  listClaimedEnds: { method: 'get', path: '/usage/claimed-ends' },
  correctJobEnd: { method: 'post', path: '/jobs/{job_id}/end' },
  getMetrics: { method: 'get', path: '/metrics' },
  listDefinitions: { method: 'get', path: '/definitions' },
  createDefinition: { method: 'post', path: '/definitions' },
  previewSchedule: { method: 'post', path: '/definitions/preview' },
  getDefinition: { method: 'get', path: '/definitions/{definition_id}' },
  updateDefinition: { method: 'patch', path: '/definitions/{definition_id}' },
  deleteDefinition: { method: 'delete', path: '/definitions/{definition_id}' },
  pauseOrResumeDefinition: { method: 'post', path: '/definitions/{definition_id}/{action}' },
  listDefinitionRuns: { method: 'get', path: '/definitions/{definition_id}/runs' },
  runDefinitionNow: { method: 'post', path: '/definitions/{definition_id}/runs' },
  getExecutedNotebook: { method: 'get', path: '/jobs/{job_id}/notebook' },
  openExecutedNotebook: { method: 'post', path: '/jobs/{job_id}/notebook/open' }
} as const satisfies { readonly [K in keyof operations]: IRoute };

export type OperationId = keyof typeof ROUTES;

type RouteOperation<K extends OperationId> = paths[(typeof ROUTES)[K]['path']][(typeof ROUTES)[K]['method']];

/** Operation ids whose ROUTES entry does not lead to that operation in the document. */
type MisroutedOperations = {
  [K in OperationId]: RouteOperation<K> extends operations[K] ? (operations[K] extends RouteOperation<K> ? never : K) : K;
}[OperationId];

/**
 * Compile-time proof that {@link ROUTES} matches openapi.yaml: when an entry points at the wrong
 * path or method, the type on the left becomes that operation's id and `true` no longer fits.
 */
export const ROUTES_MATCH_DOCUMENT: [MisroutedOperations] extends [never] ? true : MisroutedOperations = true;

/** Path parameters of an operation (`{job_id: string}`), or never. */
export type PathParams<K extends OperationId> = operations[K]['parameters'] extends { path: infer P } ? P : never;
/** Query parameters of an operation. */
export type QueryParams<K extends OperationId> = operations[K]['parameters'] extends { query?: infer Q } ? NonNullable<Q> : never;
/** JSON request body of an operation. */
export type RequestBody<K extends OperationId> = operations[K] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
/** JSON answer of an operation (its 200 or 201 response). */
export type Answer<K extends OperationId> = operations[K]['responses'] extends { 200: { content: { 'application/json': infer R } } }
  ? R
  : operations[K]['responses'] extends { 201: { content: { 'application/json': infer R } } }
    ? R
    : unknown;

/** The server's error object, `ErrorResponse.error`. */
export type ErrorBody = Schemas['ErrorResponse']['error'];

/** An error answer from the scheduler API (4xx/5xx), carrying the server's code/field/hint. */
export class SchedApiError extends Error {
  /**
   * `status`, `body`: the answer. `lastAnswerAt`: for an answer that says the scheduler behind the server did not
   * answer ({@link schedulerUnanswered}), when this client last had an answer of the scheduler (null: never).
   */
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
    readonly lastAnswerAt: Date | null = null
  ) {
    super(body.message);
    this.name = 'SchedApiError';
  }

  get code(): string {
    return this.body.code;
  }

  get field(): string | null {
    return this.body.field ?? null;
  }

  get hint(): string | null {
    return this.body.hint ?? null;
  }
}

/** The command that enables the server extension; shown when the API answers 404. */
export const ENABLE_FIX = 'jupyter server extension enable jupyter_sched';

/**
 * The server answered 404 without our error body: the jupyter_sched server extension is not
 * loaded. The panel shows this with {@link ENABLE_FIX} instead of a blank view.
 */
export class ServerExtensionMissingError extends Error {
  constructor(readonly url: string) {
    super(
      `The jupyter_sched server extension is not enabled on this server (404 from ${url}). ` +
        `Fix: run "${ENABLE_FIX}" and restart JupyterLab.`
    );
    this.name = 'ServerExtensionMissingError';
  }
}

/**
 * The server did not answer at all (the browser's fetch failed: Chrome's "Failed to fetch",
 * Firefox's "NetworkError when attempting to fetch resource.", Safari's "Load failed"), as while a
 * `jupyter lab` restarts (new user 25, N13: the panel showed the raw "Failed to fetch").
 * `lastAnswerAt`: when this client last had an answer (null: never), which the panel still shows.
 */
export class ServerNotAnsweringError extends Error {
  constructor(
    readonly lastAnswerAt: Date | null,
    readonly failure: unknown
  ) {
    super('the server is not answering (restarting?)');
    this.name = 'ServerNotAnsweringError';
  }
}

/**
 * Whether an answer of `status` with error body `error` (undefined: not ours) says that the scheduler behind the user's
 * server did not answer: the hub forwarder's 502 `hub_service_unreachable`, or a 502/503/504 of a proxy on the way
 * (no error body of ours). Newuser33 N3: with the hub's central service hung, the panel took such answers for a
 * section's own refusal, kept "LIVE", and showed the forwarder's first "attempt 1, next in 1 s" for 90 s.
 */
export function gatewayUnanswered(status: number, error: ErrorBody | undefined): boolean {
  return (error?.code === 'hub_service_unreachable' || (!error && [502, 503, 504].includes(status)));
}

/** Whether `err` is an answer that the scheduler behind the server did not answer ({@link gatewayUnanswered}). */
export function schedulerUnanswered(err: unknown): err is SchedApiError {
  return err instanceof SchedApiError && (err.code === 'hub_service_unreachable' || (/^HTTP50[234]$/.test(err.code) && [502, 503, 504].includes(err.status)));
}

/** A browser's words for a fetch that got no answer (Chrome, Firefox, Safari; Node's undici). */
const NO_ANSWER_WORDS = /^(Failed to fetch|NetworkError when attempting to fetch resource\.?|Load failed|fetch failed)$/;

/**
 * Whether `err` is a fetch that got no answer: what `fetch` (and JupyterLab's
 * `ServerConnection.NetworkError`, a TypeError) throws then; not an abort the caller asked for.
 * `transport`: thrown by the transport itself (any TypeError), else only with a browser's words.
 */
function noAnswer(err: unknown, transport = false): boolean {
  return err instanceof TypeError && (transport || NO_ANSWER_WORDS.test(err.message));
}

type QueryValue = string | number | boolean | null | undefined;

/** Query string from `params`, skipping undefined, null and empty values (`?a=1&b=x`). */
export function query(params: Record<string, QueryValue> | undefined): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(params ?? {})) {
    if (value === undefined || value === null || value === '') {
      continue;
    }
    parts.push(`${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`);
  }
  return parts.length ? `?${parts.join('&')}` : '';
}

/** `/jobs/{job_id}/logs` + `{job_id: 'a b'}` → `jobs/a%20b/logs`. Throws when a parameter is missing. */
export function fillPath(template: string, params: Record<string, string> | undefined): string {
  return template.replace(/^\//, '').replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = params?.[name];
    if (typeof value !== 'string' || !value) {
      throw new Error(`missing path parameter ${name} for ${template}`);
    }
    return encodeURIComponent(value);
  });
}

/** What a request may carry besides the operation id. */
export interface IRequestOptions<K extends OperationId> {
  path?: PathParams<K>;
  query?: QueryParams<K>;
  body?: RequestBody<K>;
  signal?: AbortSignal;
}

/** GET answers a {@link SchedClient} keeps for revalidation at most (least recently asked dropped first). */
export const REVALIDATED_ANSWERS = 64;

/**
 * Pages {@link SchedClient.requestAll} reads at most (100 rows each by default: 10,000 rows); a
 * list longer than that is answered with what was read, as the CLI bounds its own paging.
 */
export const MAX_PAGES = 100;

/**
 * The cursor of an RFC 8288 `Link: <definitions?limit=100&cursor=…>; rel="next"` header (the
 * server's paging of `GET jobs`, `leases`, `queue` and `definitions`); null when there is no next page.
 */
export function nextCursor(link: string | null | undefined): string | null {
  for (const part of (link ?? '').split(',')) {
    const match = /<([^>]*)>\s*;(?:[^;]*;)*\s*rel="?next"?/i.exec(part);
    if (match) {
      const search = match[1].includes('?') ? match[1].slice(match[1].indexOf('?') + 1) : '';
      const cursor = new URLSearchParams(search).get('cursor');
      if (cursor) {
        return cursor;
      }
    }
  }
  return null;
}

/** Operations answered with a list that a `Link: rel="next"` header pages (`cursor` in their query). */
type PagedOperation = {
  [K in OperationId]: Answer<K> extends unknown[] ? (QueryParams<K> extends { cursor?: unknown } ? K : never) : never;
}[OperationId];

/** Typed client of the scheduler REST API. */
export class SchedClient {
  constructor(readonly transport: Transport) {}

  /**
   * The last 200 answer of each GET path that carried an ETag, with it: the next GET of that path
   * sends `If-None-Match`, and a `304 Not Modified` (no body) is answered with the kept text
   * (issue 17: the panel polls me, jobs and queue every few seconds and most polls find them
   * unchanged; the server then writes no body). The ETag is the SHA-1 of the body the server
   * would send this caller, so a 304 means exactly that body.
   */
  private readonly _validated = new Map<string, { etag: string; text: string; link: string | null }>();

  /** When the scheduler last answered a request of this client (any status but {@link gatewayUnanswered}); null: not yet. */
  private _lastAnswerAt: Date | null = null;

  /** When the scheduler last answered a request of this client (see {@link _lastAnswerAt}); null: not yet. */
  get lastAnswerAt(): Date | null {
    return this._lastAnswerAt;
  }

  /**
   * Send operation `op` of openapi.yaml; JSON in, JSON out.
   *
   * Throws {@link SchedApiError} for error answers (the server's code/field/hint),
   * {@link ServerExtensionMissingError} for a 404 that is not ours, and the transport's error on
   * network failure.
   */
  async request<K extends OperationId>(op: K, options: IRequestOptions<K> = {}): Promise<Answer<K>> {
    return (await this.send(op, options)).answer;
  }

  /**
   * Every page of a paged list (`GET definitions`, `jobs`, `leases`, `queue`): `op` with `options`,
   * then again with the `cursor` of each answer's `Link: rel="next"` header, the rows joined in the
   * server's order; at most {@link MAX_PAGES} pages (red28 R6 paged `GET definitions` at 100 rows:
   * the panel read the first page only). Throws as {@link request} does, for any page.
   */
  async requestAll<K extends PagedOperation>(op: K, options: IRequestOptions<K> = {}): Promise<Answer<K>> {
    const rows: unknown[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < MAX_PAGES; page++) {
      const ask = cursor === null ? options : { ...options, query: { ...(options.query ?? {}), cursor } as unknown as QueryParams<K> };
      const { answer, link } = await this.send(op, ask);
      rows.push(...((Array.isArray(answer) ? answer : []) as unknown[]));
      cursor = nextCursor(link);
      if (cursor === null) {
        break;
      }
    }
    return rows as Answer<K>;
  }

  /** {@link request}, with the answer's `Link` header (null: none). */
  private async send<K extends OperationId>(op: K, options: IRequestOptions<K>): Promise<{ answer: Answer<K>; link: string | null }> {
    const route: IRoute = ROUTES[op];
    const path = `${API_ROOT}/${fillPath(route.path, options.path as Record<string, string> | undefined)}${query(
      options.query as Record<string, QueryValue> | undefined
    )}`;
    const method = route.method.toUpperCase();
    const init: RequestInit = { method };
    if (options.signal) {
      init.signal = options.signal;
    }
    if (options.body !== undefined) {
      init.body = JSON.stringify(options.body);
      init.headers = { 'Content-Type': 'application/json' };
    }
    const kept = method === 'GET' ? this._validated.get(path) : undefined;
    if (kept) {
      init.headers = { 'If-None-Match': kept.etag };
    }
    let response: Response;
    try {
      response = await this.transport.request(path, init);
    } catch (err) {
      throw noAnswer(err, true) ? new ServerNotAnsweringError(this._lastAnswerAt, err) : err;
    }
    const answeredAt = new Date();
    const text = response.status === 304 && kept ? kept.text : await response.text();
    if (method === 'GET') {
      this._keep(path, response, text);
    }
    let payload: unknown = null;
    if (text) {
      try {
        payload = JSON.parse(text);
      } catch {
        payload = null;
      }
    }
    const error = errorBodyOf(payload);
    const unanswered = !response.ok && gatewayUnanswered(response.status, error);
    if (!unanswered) {
      this._lastAnswerAt = answeredAt; // a forwarder's "no answer" is not the scheduler's answer (newuser33 N3)
    }
    if (response.ok || (response.status === 304 && kept)) {
      // the document is the contract for this shape (schema.ts is generated from it)
      const link = response.status === 304 && kept ? kept.link : (response.headers?.get('Link') ?? null);
      return { answer: payload as Answer<K>, link };
    }
    if (response.status === 404 && !error) {
      // Jupyter's own 404 page, not ours: no route under api/sched at all.
      throw new ServerExtensionMissingError(path);
    }
    throw new SchedApiError(
      response.status,
      error ?? {
        code: `HTTP${response.status}`,
        message: `${method} ${path} failed: ${response.status} ${response.statusText || text.slice(0, 200)}`,
        field: null,
        hint: null
      },
      unanswered ? this._lastAnswerAt : null
    );
  }

  /** Keep (or forget) the answer of a GET of `path` for the next one's `If-None-Match`. */
  private _keep(path: string, response: Response, text: string): void {
    const before = this._validated.get(path);
    const etag = response.status === 304 ? before?.etag : response.headers?.get('ETag');
    // a 304 carries no Link: the kept answer's is still its next page
    const link = response.status === 304 ? (before?.link ?? null) : (response.headers?.get('Link') ?? null);
    this._validated.delete(path);
    if (etag && (response.ok || response.status === 304)) {
      this._validated.set(path, { etag, text, link });
      if (this._validated.size > REVALIDATED_ANSWERS) {
        this._validated.delete(this._validated.keys().next().value as string);
      }
    }
  }

  config(): Promise<Answer<'getConfig'>> {
    return this.request('getConfig');
  }

  me(): Promise<Answer<'getMe'>> {
    return this.request('getMe');
  }

  inventory(): Promise<Answer<'getInventory'>> {
    return this.request('getInventory');
  }

  jobs(filter: QueryParams<'listJobs'> = {}): Promise<Answer<'listJobs'>> {
    return this.request('listJobs', { query: filter });
  }

  job(id: string): Promise<Answer<'getJob'>> {
    return this.request('getJob', { path: { job_id: id } });
  }

  /**
   * `POST jobs`. `idempotencyKey`: the client's key of this submit (sent again with the same body, the server answers
   * with the job it made, never a second one); `signal`: aborts the wait (the job may still be made).
   */
  submit(body: RequestBody<'submitJob'>, options: { idempotencyKey?: string; signal?: AbortSignal } = {}): Promise<Answer<'submitJob'>> {
    return this.request('submitJob', { body, query: options.idempotencyKey ? { idempotency_key: options.idempotencyKey } : undefined, signal: options.signal });
  }

  cancel(id: string): Promise<Answer<'cancelJob'>> {
    return this.request('cancelJob', { path: { job_id: id } });
  }

  /** `PATCH jobs/{id}`: hold or release a pending job (`{ held }`), change its time limit or class, or top it. */
  update(id: string, body: RequestBody<'updateJob'>): Promise<Answer<'updateJob'>> {
    return this.request('updateJob', { path: { job_id: id }, body });
  }

  /**
   * A slice of a job's log from byte `offset`. With `follow`, the server long-polls (up to 25 s)
   * until new text exists or the job finished; loop with `offset = next_offset`.
   */
  logs(id: string, params: QueryParams<'getJobLogs'> = {}, signal?: AbortSignal): Promise<Answer<'getJobLogs'>> {
    return this.request('getJobLogs', { path: { job_id: id }, query: params, signal });
  }

  dryrun(body: RequestBody<'dryrunJob'>): Promise<Answer<'dryrunJob'>> {
    return this.request('dryrunJob', { body });
  }

  leases(filter: QueryParams<'listLeases'> = {}): Promise<Answer<'listLeases'>> {
    return this.request('listLeases', { query: filter });
  }

  releaseLease(id: string): Promise<Answer<'releaseLease'>> {
    return this.request('releaseLease', { path: { lease_id: id } });
  }

  keepalive(id: string, body: RequestBody<'keepaliveLease'> = {}): Promise<Answer<'keepaliveLease'>> {
    return this.request('keepaliveLease', { path: { lease_id: id }, body });
  }

  queue(): Promise<Answer<'getQueue'>> {
    return this.request('getQueue');
  }

  quotas(): Promise<Answer<'getQuotas'>> {
    return this.request('getQuotas');
  }

  setQuotas(body: RequestBody<'setQuotas'>): Promise<Answer<'setQuotas'>> {
    return this.request('setQuotas', { body });
  }

  idlePolicy(): Promise<Answer<'getIdlePolicy'>> {
    return this.request('getIdlePolicy');
  }

  setIdlePolicy(body: RequestBody<'setIdlePolicy'>): Promise<Answer<'setIdlePolicy'>> {
    return this.request('setIdlePolicy', { body });
  }

  profiles(): Promise<Answer<'listProfiles'>> {
    return this.request('listProfiles');
  }

  /** The names of `zone`'s UTC offsets (`CET`, `CEST`), as the CLI names a clock's zone (newuser35 n12). */
  zoneLabels(zone: string): Promise<Answer<'getZoneLabels'>> {
    return this.request('getZoneLabels', { query: { zone } });
  }

  telemetry(params: QueryParams<'getTelemetry'> = {}): Promise<Answer<'getTelemetry'>> {
    return this.request('getTelemetry', { query: params });
  }

  audit(params: QueryParams<'getAudit'> = {}): Promise<Answer<'getAudit'>> {
    return this.request('getAudit', { query: params });
  }

  etaAccuracy(params: QueryParams<'getEtaAccuracy'> = {}): Promise<Answer<'getEtaAccuracy'>> {
    return this.request('getEtaAccuracy', { query: params });
  }

  usage(params: QueryParams<'getUsage'> = {}): Promise<Answer<'getUsage'>> {
    return this.request('getUsage', { query: params });
  }

  usageReport(params: QueryParams<'getUsageReport'> = {}): Promise<Answer<'getUsageReport'>> {
    return this.request('getUsageReport', { query: params });
  }
}

function errorBodyOf(payload: unknown): ErrorBody | undefined {
  if (!payload || typeof payload !== 'object') {
    return undefined;
  }
  const error = (payload as { error?: unknown }).error;
  if (!error || typeof error !== 'object') {
    return undefined;
  }
  const e = error as Record<string, unknown>;
  if (typeof e.message !== 'string') {
    return undefined;
  }
  return {
    code: typeof e.code === 'string' ? e.code : 'error',
    message: e.message,
    field: typeof e.field === 'string' ? e.field : null,
    hint: typeof e.hint === 'string' ? e.hint : null,
    reference: typeof e.reference === 'string' ? e.reference : null,
    details: e.details && typeof e.details === 'object' ? (e.details as Record<string, unknown>) : undefined
  };
}

/**
 * Whether `err` is the server's, not the request's: no answer at all (a restart) or a 503 `stopping`
 * (a server shutting down). Every resource the panel polls fails alike then, so the panel says it
 * once, under its header, not in each section (newuser26 n12: three identical alerts).
 */
export function serverWide(err: unknown): boolean {
  return err instanceof ServerNotAnsweringError || noAnswer(err) || (err instanceof SchedApiError && err.code === 'stopping') || schedulerUnanswered(err);
}

/**
 * Whether `err` says the scheduler is not running on this server (503 `scheduler_off`: its store failed at start —
 * a full disk, a read-only folder — and JupyterLab runs on without it; store41). Its message names the cause and its
 * hint the fix; retrying cannot help until the server is restarted, so it is never resent (not {@link serverWide}),
 * and the panel asks again only every {@link OFF_RETRY_MS}.
 */
export function schedulerOff(err: unknown): err is SchedApiError {
  return err instanceof SchedApiError && err.code === 'scheduler_off';
}

/** How often the panel asks again while the scheduler is off or the server does not answer at start, ms. */
export const OFF_RETRY_MS = 30_000;

/** `the scheduler service is not answering — showing what it said at 16:01:11 UTC; retrying` (`at` null: no time). */
export function schedulerNotAnsweringText(at: Date | null): string {
  const shown = at ? ` — showing what it said at ${clockText(at, new Date(), true)}` : '';
  return `the scheduler service is not answering${shown}; retrying`;
}

/**
 * One readable line for any error: the server's message, the field at fault and the hint
 * (`gpus must be >= 0 (got -1) [gpus] — use 0 for CPU-only work`), and a 5xx answer's reference
 * (`… the server log has the cause (reference 7bccb29d)`). A server that does not answer (a restart):
 * `the server is not answering (restarting?)`, never the browser's "Failed to fetch"; with
 * `retrying` (a poll that goes on showing the last answer) `… — showing what it said at 16:01:11 UTC;
 * retrying` (new user 25, N13). {@link ServerExtensionMissingError} keeps its own message.
 */
export function describeError(err: unknown, options: { retrying?: boolean } = {}): string {
  if (err instanceof ServerNotAnsweringError || noAnswer(err)) {
    // never the browser's own words for it (new user 25, N13); `retrying`: a poll that goes on, whose
    // last answer is still shown
    const at = err instanceof ServerNotAnsweringError ? err.lastAnswerAt : null;
    const shown = options.retrying && at ? ` — showing what it said at ${clockText(at, new Date(), true)}` : '';
    return `the server is not answering (restarting?)${shown}${options.retrying ? '; retrying' : ''}`;
  }
  if (options.retrying && schedulerUnanswered(err)) {
    // a poll that goes on: when its last answer was, not the forwarder's attempt count of that moment (newuser33 N3)
    return schedulerNotAnsweringText(err.lastAnswerAt);
  }
  if (err instanceof SchedApiError) {
    let text = err.field ? `${err.message} [${err.field}]` : err.message;
    if (err.hint) {
      text += ` — ${err.hint}`;
    }
    if (err.body.reference) {
      // a 5xx's tie to the server log, which the hint asks the user to give an admin (hubadmin25 B6)
      text += ` (reference ${err.body.reference})`;
    }
    return serverText(text); // a refusal may quote a name (s30) and say a clock (its zone: the browser's, newuser38 n30)
  }
  if (err instanceof Error) {
    return shownText(err.message);
  }
  return shownText(String(err));
}
