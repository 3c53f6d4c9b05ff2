// GET /api/v1/stream read with fetch() (EventSource cannot send an
// Authorization header), parsed as text/event-stream, reconnecting with backoff.
import { authHeaders, errorFrom, getToken, sessionEnded } from './client';

export interface SseEvent {
  event: string;
  data: string;
  id?: string;
}

/** Incremental text/event-stream parser (the WHATWG rules that matter here). */
export class SseParser {
  private buf = '';
  private event = '';
  private data: string[] = [];
  private id: string | undefined;
  /** The server's `retry:` hint in ms, if any. */
  retry: number | undefined;

  constructor(private readonly emit: (e: SseEvent) => void) {}

  push(chunk: string): void {
    this.buf += chunk;
    let start = 0;
    for (;;) {
      // A line ends at \n, \r\n or \r.
      let nl = -1;
      for (let i = start; i < this.buf.length; i++) {
        const c = this.buf.charCodeAt(i);
        if (c === 10 || c === 13) {
          nl = i;
          break;
        }
      }
      if (nl < 0) break;
      // A lone \r at the very end may be the first half of \r\n: wait for more.
      if (this.buf.charCodeAt(nl) === 13 && nl + 1 === this.buf.length) break;
      const line = this.buf.slice(start, nl);
      start = nl + (this.buf.charCodeAt(nl) === 13 && this.buf.charCodeAt(nl + 1) === 10 ? 2 : 1);
      this.line(line);
    }
    this.buf = this.buf.slice(start);
  }

  private line(line: string): void {
    if (line === '') {
      if (this.data.length > 0) {
        this.emit({ event: this.event || 'message', data: this.data.join('\n'), id: this.id });
      }
      this.event = '';
      this.data = [];
      return;
    }
    if (line.charCodeAt(0) === 58 /* ':' comment */) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    switch (field) {
      case 'event':
        this.event = value;
        break;
      case 'data':
        this.data.push(value);
        break;
      case 'id':
        if (!value.includes('\0')) this.id = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retry = Number(value);
        break;
    }
  }
}

export type StreamStatus = 'connecting' | 'live' | 'reconnecting' | 'stopped';

export interface StreamOptions {
  url?: string;
  onEvent: (e: SseEvent) => void;
  onStatus?: (s: StreamStatus, detail?: string) => void;
  /** A fresh connection starts: the server replays the current state. */
  onOpen?: () => void;
}

/** Keeps one stream open until `stop()`; reconnects with capped exponential backoff and jitter. */
export function openStream(opts: StreamOptions): { stop: () => void } {
  const url = opts.url ?? '/api/v1/stream';
  let stopped = false;
  let ctrl: AbortController | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let failures = 0;

  const status = (s: StreamStatus, d?: string) => opts.onStatus?.(s, d);

  async function connect(): Promise<void> {
    if (stopped) return;
    ctrl = new AbortController();
    status(failures === 0 ? 'connecting' : 'reconnecting');
    let why = 'the stream ended';
    try {
      const sentToken = !!getToken();
      const res = await fetch(url, {
        headers: authHeaders({ Accept: 'text/event-stream' }),
        signal: ctrl.signal,
        cache: 'no-store',
      });
      if (!res.ok) {
        const err = await errorFrom(res, sentToken);
        if (res.status === 401) {
          stopped = true;
          status('stopped', err.message);
          return;
        }
        throw err;
      }
      if (!res.body) throw new Error('no response body');
      opts.onOpen?.();
      // A follower relaying the leader's stream ends it with one `relay-error` ({status,
      // message}; docs/design-ha.md): the leader refused (401: signed out, as a direct 401)
      // or went away (reconnect, with backoff).
      let relayError: { status: number; message: string } | null = null;
      const parser = new SseParser((e) => {
        if (e.event === 'relay-error') {
          try {
            relayError = JSON.parse(e.data) as { status: number; message: string };
          } catch {
            relayError = { status: 502, message: 'the relayed stream failed' };
          }
          return;
        }
        if (failures !== 0) failures = 0;
        opts.onEvent(e);
      });
      status('live');
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        if (value) parser.push(value);
      }
      const relayed = relayError as { status: number; message: string } | null;
      if (relayed) {
        if (relayed.status === 401) {
          stopped = true;
          if (sentToken) sessionEnded();
          status('stopped', relayed.message);
          return;
        }
        why = relayed.message;
      }
    } catch (e) {
      if (stopped) return;
      why = (e as Error).message || String(e);
    }
    if (stopped) return;
    failures++;
    // 1 s, 2 s, 4 s ... capped at 30 s, +-25 % jitter so many tabs do not stampede.
    const base = Math.min(30_000, 1000 * 2 ** Math.min(failures - 1, 5));
    const delay = Math.round(base * (0.75 + Math.random() * 0.5));
    status('reconnecting', `${why}; retrying in ${Math.round(delay / 1000)} s`);
    timer = setTimeout(connect, delay);
  }

  void connect();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      ctrl?.abort();
      status('stopped');
    },
  };
}
