/**
 * Live updates: the scheduler's Server-Sent Events stream (`GET api/sched/events`) read with a
 * streaming `fetch` through the {@link Transport} (so Jupyter's token and XSRF headers apply),
 * reconnecting with exponential backoff; plus a {@link Throttle} that keeps views to at most one
 * request per refresh interval while the stream is down.
 *
 * The server marks the stream as non-activity (`_track_activity = False`), so an open panel does
 * not keep an idle server alive for the culler.
 */
import { API_ROOT, type Transport } from './client';
import type { ISchedEvent } from './types';

/**
 * Incremental SSE parser (WHATWG HTML §9.2 "event stream interpretation"): feed text chunks,
 * get complete events. Handles `event:`, multi-line `data:`, comments and CRLF. Each event's
 * data is JSON; `{type, data}` bodies are taken as they are, otherwise the `event:` field is the type.
 */
export class SseParser {
  private buffer = '';
  /** The last `id:` field seen (the spec's "last event ID buffer"): sent back as `Last-Event-ID`. */
  lastEventId = '';

  /** Feed a chunk; returns the events completed by it. */
  feed(chunk: string): ISchedEvent[] {
    this.buffer += chunk.replace(/\r\n?/g, '\n');
    const out: ISchedEvent[] = [];
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      for (const line of block.split('\n')) {
        if (line.startsWith('id:')) {
          this.lastEventId = line.slice(line.startsWith('id: ') ? 4 : 3);
        }
      }
      const event = SseParser.parseBlock(block);
      if (event) {
        out.push(event);
      }
    }
    return out;
  }

  /** Parse one event block (lines without the blank separator); null for comments/keep-alives. */
  static parseBlock(block: string): ISchedEvent | null {
    let type = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (!line || line.startsWith(':')) {
        continue;
      }
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) {
        value = value.slice(1);
      }
      if (field === 'event') {
        type = value;
      } else if (field === 'data') {
        data.push(value);
      }
    }
    if (!data.length) {
      return null;
    }
    let payload: unknown;
    try {
      payload = JSON.parse(data.join('\n'));
    } catch {
      return { type, data: { text: data.join('\n') } };
    }
    if (payload && typeof payload === 'object' && 'type' in payload && typeof (payload as ISchedEvent).type === 'string') {
      const p = payload as { type: string; data?: unknown };
      return { type: p.type, data: p.data ?? {} };
    }
    return { type, data: payload ?? {} };
  }
}

/** Backoff delays in ms: 1 s, 2 s, 4 s … capped at `maxMs`, with ±20 % jitter from `random`. */
export function backoffDelay(attempt: number, maxMs = 30000, random: () => number = Math.random): number {
  const base = Math.min(maxMs, 1000 * 2 ** Math.max(0, attempt));
  return Math.round(base * (0.8 + 0.4 * random()));
}

/** Connection states of the stream. */
export type StreamStatus = 'connecting' | 'open' | 'down';

/** Options of {@link EventStream}. */
export interface IEventStreamOptions {
  transport: Transport;
  onEvent: (event: ISchedEvent) => void;
  onStatus?: (status: StreamStatus) => void;
  /** Largest reconnect delay, ms (default 30000). */
  maxBackoffMs?: number;
  /** Timer hook (tests). */
  setTimeout?: (fn: () => void, ms: number) => unknown;
  /** Clock hook in ms (tests). */
  now?: () => number;
  /** A connection that stayed open this long (ms) resets the backoff (default 10000). */
  stableMs?: number;
  /**
   * An open stream that brings no byte this long (ms) is dropped and connected again (default {@link SILENCE_MS}; 0:
   * never): the server sends a keep-alive comment every 15 s, so a silent stream is a server that does not answer
   * (newuser33 N3: a stopped server keeps its connections open, and the header said LIVE).
   */
  silenceMs?: number;
}

/** {@link IEventStreamOptions.silenceMs}'s default: four of the server's keep-alive intervals (15 s). */
export const SILENCE_MS = 60000;

/** The event stream with reconnect-and-backoff. `start()` once, `dispose()` to stop. */
export class EventStream {
  private controller: AbortController | null = null;
  private attempt = 0;
  private disposed = false;
  /** Bumped by {@link reconnect}: a connection of an older generation ends silently. */
  private generation = 0;
  private _status: StreamStatus = 'down';
  /** The last event id of any connection: a reconnect resumes after it (the server replays what
   * was missed, or sends `lagged` when it cannot). */
  private lastEventId = '';

  constructor(private readonly options: IEventStreamOptions) {}

  get status(): StreamStatus {
    return this._status;
  }

  start(): void {
    void this.connect();
  }

  /** Drop the current connection (if any) and connect again now, resetting the backoff. */
  reconnect(): void {
    if (this.disposed) {
      return;
    }
    this.attempt = 0;
    this.generation++;
    this.controller?.abort();
    void this.connect();
  }

  dispose(): void {
    this.disposed = true;
    this.controller?.abort();
  }

  private setStatus(status: StreamStatus): void {
    if (status !== this._status) {
      this._status = status;
      this.options.onStatus?.(status);
    }
  }

  private async connect(): Promise<void> {
    if (this.disposed) {
      return;
    }
    const generation = this.generation;
    this.setStatus('connecting');
    const controller = new AbortController();
    this.controller = controller;
    const silenceMs = this.options.silenceMs ?? SILENCE_MS;
    let watchdog: ReturnType<typeof setTimeout> | null = null;
    const heard = (): void => {
      if (silenceMs > 0) {
        if (watchdog !== null) {
          clearTimeout(watchdog);
        }
        watchdog = setTimeout(() => controller.abort(), silenceMs);
      }
    };
    const now = this.options.now ?? (() => Date.now());
    let openedAt: number | null = null;
    try {
      const headers: Record<string, string> = { Accept: 'text/event-stream' };
      if (this.lastEventId) {
        headers['Last-Event-ID'] = this.lastEventId;
      }
      heard(); // an answer that does not come is silence too
      const response = await this.options.transport.request(`${API_ROOT}/events`, {
        method: 'GET',
        headers,
        signal: controller.signal
      });
      if (!response.ok || !response.body) {
        throw new Error(`event stream answered ${response.status}`);
      }
      this.setStatus('open');
      openedAt = now();
      heard();
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      const parser = new SseParser();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) {
          break;
        }
        heard();
        if (generation !== this.generation) {
          return;
        }
        for (const event of parser.feed(decoder.decode(value, { stream: true }))) {
          try {
            this.options.onEvent(event);
          } catch (err) {
            console.error('jupyter_sched: event handler failed', err);
          }
        }
        this.lastEventId = parser.lastEventId || this.lastEventId;
      }
    } catch {
      // network failure or abort (ours after a silence too): handled below like a closed stream
    } finally {
      if (watchdog !== null) {
        clearTimeout(watchdog);
      }
    }
    if (this.disposed || generation !== this.generation) {
      return;
    }
    this.setStatus('down');
    // only a connection that stayed up resets the backoff: a server or proxy that closes every
    // stream at once must not get a reconnect per second
    if (openedAt !== null && now() - openedAt >= (this.options.stableMs ?? 10000)) {
      this.attempt = 0;
    }
    const delay = backoffDelay(this.attempt++, this.options.maxBackoffMs ?? 30000);
    (this.options.setTimeout ?? ((fn, ms) => setTimeout(fn, ms)))(() => {
      if (generation === this.generation) {
        void this.connect();
      }
    }, delay);
  }
}

/**
 * At most one run of `fn` per `intervalMs`: a call inside the window is deferred to its end
 * (and merged with other calls there). Used to keep each view to one request per refresh interval.
 */
export class Throttle {
  private last = -Infinity;
  private timer: unknown = null;
  private running = false;

  constructor(
    private readonly fn: () => Promise<void> | void,
    public intervalMs: number,
    private readonly clock: () => number = () => Date.now(),
    private readonly schedule: (fn: () => void, ms: number) => unknown = (fn, ms) => setTimeout(fn, ms),
    private readonly cancel: (handle: unknown) => void = handle => clearTimeout(handle as number)
  ) {}

  /** Request a run; runs now if the window allows, else once at the window's end. */
  request(): void {
    if (this.timer !== null) {
      return;
    }
    const wait = this.last + this.intervalMs - this.clock();
    if (wait <= 0 && !this.running) {
      void this.run();
    } else {
      this.timer = this.schedule(() => {
        this.timer = null;
        this.request();
      }, Math.max(wait, 50));
    }
  }

  dispose(): void {
    if (this.timer !== null) {
      this.cancel(this.timer);
      this.timer = null;
    }
  }

  private async run(): Promise<void> {
    this.running = true;
    this.last = this.clock();
    try {
      await this.fn();
    } finally {
      this.running = false;
    }
  }
}
