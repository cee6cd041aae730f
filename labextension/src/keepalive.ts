/**
 * Where Keep alive means something (newuser38 n11): a lease holding GPUs. Keep-alive keeps a granted lease's GPUs
 * while idle; a pending lease (or one preempted and waiting again) holds none, and POST leases/{id}/keepalive
 * answers it 409 "holds no GPUs yet" — yet My work offered the button beside Release on a pending lease.
 */
import { ACTIVE_STATES, type Job } from './types';

/** Whether Keep alive (or its used "Kept alive" mark) belongs on this job's card: a lease that holds GPUs. */
export function keepAliveOffered(job: Pick<Job, 'kind' | 'state'>): boolean {
  return job.kind === 'lease' && ACTIVE_STATES.has(job.state);
}
