// The one place that talks HTTP to rota: fetch + bearer token + error mapping.
import type { ApiErrorBody } from './types';

const TOKEN_KEY = 'rota.token';

/** A failed API call: the server's error code and message, or a network failure (status 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Seconds the server asked to wait before trying again (429, 503 Retry-After); 0: none. */
    readonly retryAfter = 0,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** Seconds in a Retry-After header: delta-seconds, or an HTTP date (from `nowMs`); 0 when absent or unreadable. */
export function retryAfterSeconds(header: string | null | undefined, nowMs = Date.now()): number {
  if (!header) return 0;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const at = Date.parse(text);
  return Number.isNaN(at) ? 0 : Math.max(0, Math.ceil((at - nowMs) / 1000));
}

let token: string | null = readToken();
let unauthorized: (() => void) | null = null;

function readToken(): string | null {
  try {
    return localStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

export function getToken(): string | null {
  return token;
}

export function setToken(t: string | null): void {
  token = t;
  try {
    if (t) localStorage.setItem(TOKEN_KEY, t);
    else localStorage.removeItem(TOKEN_KEY);
  } catch {
    // Storage may be off (private mode): the session then lasts until reload.
  }
}

/** Called once when any authenticated call answers 401 (the session is gone). */
export function onUnauthorized(cb: () => void): void {
  unauthorized = cb;
}

/** Headers for a call, with the session's bearer token. */
export function authHeaders(extra?: Record<string, string>): Record<string, string> {
  const h: Record<string, string> = { Accept: 'application/json', ...extra };
  if (token) h.Authorization = `Bearer ${token}`;
  return h;
}

/** Turns a non-2xx response into an ApiError (and a 401 into a signed-out session). */
export async function errorFrom(res: Response, sentToken: boolean): Promise<ApiError> {
  let code = `http_${res.status}`;
  let message = res.statusText || `HTTP ${res.status}`;
  try {
    const body = (await res.json()) as Partial<ApiErrorBody>;
    if (body && body.error) {
      code = body.error.code || code;
      message = body.error.message || message;
    }
  } catch {
    // not JSON: keep the status text
  }
  if (res.status === 401 && sentToken) sessionEnded();
  return new ApiError(res.status, code, message, retryAfterSeconds(res.headers.get('Retry-After')));
}

/** A 401 for a request that carried the session's token: the session is over (sign in). */
export function sessionEnded(): void {
  setToken(null);
  unauthorized?.();
}

export interface CallOptions {
  /** Send no token and never treat a 401 as an expired session (sign in). */
  anonymous?: boolean;
  signal?: AbortSignal;
}

/** Calls the API; resolves to the parsed JSON body (undefined for 204). */
export async function api<T>(method: string, path: string, body?: unknown, opts: CallOptions = {}): Promise<T> {
  const headers = opts.anonymous ? { Accept: 'application/json' } : authHeaders();
  const init: RequestInit = { method, headers, signal: opts.signal, cache: 'no-store' };
  if (body !== undefined) {
    (headers as Record<string, string>)['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const sentToken = !opts.anonymous && !!token;
  let res: Response;
  try {
    res = await fetch(path, init);
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e;
    throw new ApiError(0, 'network', 'Cannot reach the rota server. Check your connection.');
  }
  if (!res.ok) throw await errorFrom(res, sentToken);
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

export const get = <T>(path: string, opts?: CallOptions) => api<T>('GET', path, undefined, opts);
export const post = <T>(path: string, body?: unknown, opts?: CallOptions) => api<T>('POST', path, body, opts);
export const put = <T>(path: string, body?: unknown, opts?: CallOptions) => api<T>('PUT', path, body, opts);
export const patch = <T>(path: string, body?: unknown, opts?: CallOptions) => api<T>('PATCH', path, body, opts);
export const del = <T>(path: string, opts?: CallOptions) => api<T>('DELETE', path, undefined, opts);

/** `?a=1&b=x` from the defined, non-empty values. */
export function query(params: Record<string, string | number | boolean | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}
