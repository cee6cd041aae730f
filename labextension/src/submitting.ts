/**
 * A submit that never waits without end and never makes two jobs (newuser33 N3: with the hub's central service
 * hung, the panel said "Submitting…" for 100 s with no outcome; the job went in when the service answered, and a
 * second press would have made a second one).
 *
 * Each submit carries an idempotency key (`POST jobs?idempotency_key=`: sent again with the same body, the server
 * answers with the job it made). An attempt that gets no answer in {@link SUBMIT_ATTEMPT_MS}, or an answer that
 * the scheduler behind the server did not answer (502/503/504), is sent again with the same key until
 * {@link SUBMIT_GIVE_UP_MS}; then {@link SubmitOutcomeUnknown} says that its outcome is not known.
 */
import { SchedApiError, type SchedClient, schedulerUnanswered, serverWide } from './client';
import type { Job } from './types';

/** Milliseconds one attempt waits for its answer before it is sent again (with the same key). */
export const SUBMIT_ATTEMPT_MS = 20000;
/** Milliseconds after which a submit with no answer gives up and says its outcome is unknown. */
export const SUBMIT_GIVE_UP_MS = 60000;

/** The waits {@link submitKeyed} uses unless told others (ms; tests shorten them): per attempt, in all, between sends. */
export const SUBMIT_TIMINGS = { attemptMs: SUBMIT_ATTEMPT_MS, giveUpMs: SUBMIT_GIVE_UP_MS, pauseMs: 2000 };

/** The submit got no answer in `seconds`: the job may or may not have been made (under `key`). */
export class SubmitOutcomeUnknown extends Error {
  constructor(
    readonly seconds: number,
    readonly key: string
  ) {
    super(`no answer from the scheduler in ${seconds} s`);
    this.name = 'SubmitOutcomeUnknown';
  }
}

/** A new idempotency key (32 hex digits; `crypto.getRandomValues` works outside secure contexts too). */
export function newSubmitKey(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return `panel-${[...bytes].map(b => b.toString(16).padStart(2, '0')).join('')}`;
}

/** Whether a failed attempt may be sent again with its key: no answer, or the scheduler behind the server gave none. */
function resendable(err: unknown, timedOut: boolean): boolean {
  return timedOut || schedulerUnanswered(err) || serverWide(err) || (err instanceof SchedApiError && err.status === 504);
}

/** Hooks of {@link submitKeyed}: `now` (ms), `sleep`, and `onRetry(attempt, waitedS)` before each resend. */
export interface ISubmitOptions {
  attemptMs?: number;
  giveUpMs?: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  onRetry?: (attempt: number, waitedS: number) => void;
}

/**
 * `POST jobs` of `body` under `key`, sent again with the same key while the scheduler does not answer.
 *
 * Returns the job (made now, or by an earlier attempt of the same key). Throws {@link SubmitOutcomeUnknown} after
 * `giveUpMs` without an answer; any other refusal as the client throws it.
 */
export async function submitKeyed(client: SchedClient, body: Parameters<SchedClient['submit']>[0], key: string, options: ISubmitOptions = {}): Promise<Job> {
  const attemptMs = options.attemptMs ?? SUBMIT_TIMINGS.attemptMs;
  const giveUpMs = options.giveUpMs ?? SUBMIT_TIMINGS.giveUpMs;
  const pauseMs = SUBMIT_TIMINGS.pauseMs;
  const now = options.now ?? (() => Date.now());
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>(resolve => setTimeout(resolve, ms)));
  const started = now();
  for (let attempt = 1; ; attempt++) {
    const controller = new AbortController();
    let timedOut = false;
    const left = giveUpMs - (now() - started);
    const timer = setTimeout(
      () => {
        timedOut = true;
        controller.abort();
      },
      Math.max(1, Math.min(attemptMs, left))
    );
    // a transport that does not end the request on abort still frees the wait
    const abandoned = new Promise<never>((_, reject) =>
      controller.signal.addEventListener('abort', () => reject(new DOMException('no answer in time', 'AbortError')))
    );
    abandoned.catch(() => undefined);
    try {
      return (await Promise.race([client.submit(body, { idempotencyKey: key, signal: controller.signal }), abandoned])) as Job;
    } catch (err) {
      if (!resendable(err, timedOut)) {
        throw err;
      }
      const waited = now() - started;
      if (waited + pauseMs >= giveUpMs) {
        throw new SubmitOutcomeUnknown(Math.round(waited / 1000), key);
      }
      options.onRetry?.(attempt + 1, Math.round(waited / 1000));
      await sleep(pauseMs);
    } finally {
      clearTimeout(timer);
    }
  }
}
