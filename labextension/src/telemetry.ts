/**
 * Per-GPU history of telemetry samples: a bounded buffer per GPU uuid, newest last, seeded from
 * `GET telemetry` (the server's recent samples) and extended by `telemetry` events. Charts and
 * sparklines read it; nothing here touches the network or the DOM.
 */
import type { ISample } from './types';

/** Samples of many GPUs, at most `capacity` per GPU, in time order, without duplicates. */
export class TelemetryHistory {
  private readonly buffers = new Map<string, ISample[]>();

  /** @param capacity samples kept per GPU (older ones are dropped first). */
  constructor(readonly capacity = 600) {}

  /**
   * Add one sample. Returns false (and keeps nothing) when it is not newer than the GPU's last
   * sample: seeds and events overlap, and a replayed sample must not draw a point twice.
   */
  add(sample: ISample): boolean {
    let buffer = this.buffers.get(sample.gpuUuid);
    if (!buffer) {
      buffer = [];
      this.buffers.set(sample.gpuUuid, buffer);
    }
    const last = buffer[buffer.length - 1];
    if (last && sample.t <= last.t) {
      return false;
    }
    buffer.push(sample);
    if (buffer.length > this.capacity) {
      buffer.splice(0, buffer.length - this.capacity);
    }
    return true;
  }

  /** Add many samples (any order); returns the uuids of the GPUs that got a new one. */
  addAll(samples: Iterable<ISample>): string[] {
    const sorted = [...samples].sort((a, b) => a.t - b.t);
    const touched = new Set<string>();
    for (const sample of sorted) {
      if (this.add(sample)) {
        touched.add(sample.gpuUuid);
      }
    }
    return [...touched];
  }

  /** A GPU's samples, oldest first (empty when none). */
  history(uuid: string): readonly ISample[] {
    return this.buffers.get(uuid) ?? [];
  }

  /** A GPU's newest sample, or null. */
  latest(uuid: string): ISample | null {
    const buffer = this.buffers.get(uuid);
    return buffer && buffer.length ? buffer[buffer.length - 1] : null;
  }

  /** Utilization values (%) of a GPU's newest `count` samples that have one. */
  utilization(uuid: string, count: number): number[] {
    return this.history(uuid)
      .filter(s => s.util !== null)
      .slice(-count)
      .map(s => s.util as number);
  }

  /** GPUs with at least one sample. */
  uuids(): string[] {
    return [...this.buffers.keys()];
  }
}
