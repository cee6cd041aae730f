/**
 * The scheduler's words a newcomer meets on a reason line, in plain words (new user 30, N4: "elected",
 * "backfill", "reservation", "quota line", "NVML" with no help in the panel). The server's renderer says
 * plain words first and the trade word after (`… so it runs first (backfill)`); the panel adds, for the
 * words a line uses, a tooltip and a "what does this mean?" disclosure. The same list, longer, is the
 * README's "Words the panel uses".
 */
import type { TranslationBundle } from '@jupyterlab/translation';

import { NULL_TRANS } from './format';

/** One word: how it is found in a line, and what it means (a sentence, no final period needed). */
export interface IGlossaryTerm {
  term: string;
  pattern: RegExp;
  meaning: string;
  /** Said on most lines (ETA): in the tooltip, but not a reason alone to show the disclosure. */
  common?: boolean;
}

/** The words, in the order they are listed when several are in one line. */
// each pattern takes its word's plural and other forms too (newuser32 n5: "set quotas" opened no quota entry)
export const GLOSSARY: readonly IGlossaryTerm[] = [
  { term: 'ETA', pattern: /\bETAs?\b/, meaning: 'when it should start: when the jobs now holding the GPUs it needs end (by their time limits, or sooner where past runs or progress say so), and not before a spent budget resets (then GPUs may be free while it waits) — an estimate', common: true },
  { term: 'elected', pattern: /\belect(ed|ion|ions)\b/i, meaning: 'it has waited longer than the wait promised when it was queued, so it goes first among the jobs of its priority class' },
  { term: 'backfill', pattern: /\bbackfill/i, meaning: 'a job queued behind starts first on the GPUs that free first: run to its time limit, it cannot delay the waiting job past the latest start kept for it, though it may move that job\'s ETA later; while no start can be kept (work with no time limit holds GPUs it needs), whatever fits runs first' },
  { term: 'reservation', pattern: /\breserv(ations?|ed)\b|\bplanned starts?\b/i, meaning: 'the GPUs and start time the plan keeps for the first waiting job that needs them; only work that ends before then may use those GPUs meanwhile' },
  { term: 'quota', pattern: /\bquotas?\b/i, meaning: 'a team\'s share of the GPUs: "guaranteed" GPUs are the team\'s whenever it asks; the "borrowing limit" is how many more it may use while other teams leave them free. No quota: nothing set aside, nothing limited' },
  { term: 'borrowing limit', pattern: /\bborrow(ing|ed|s)?\b/i, meaning: 'how many GPUs beyond its guarantee a team may use while others leave them free; borrowed GPUs can be taken back' },
  { term: 'priority class', pattern: /\bpriorit(y|ies)\b|\bits class\b/i, meaning: 'high, normal (the default) or low: a class goes before the classes below it and may preempt their work' },
  { term: 'preempt', pattern: /\bpreempt/i, meaning: 'stop running work (after its minimum runtime, with a grace period to checkpoint) to give its GPUs to other work; the stopped job goes back to the queue' },
  { term: 'lease', pattern: /\blease/i, meaning: 'GPUs held by a notebook kernel (%gpu request) rather than by a job, kept while the kernel lives and uses them' },
  { term: 'reclaim', pattern: /\breclaim/i, meaning: 'GPUs taken back: a lease or job idle too long (its owner warned first), or borrowed GPUs the lending team asks for again' },
  // newuser34 N3 addendum: a budget-held line ("not before 00:00 UTC (when the day's budget resets)") had no entry
  { term: 'budget', pattern: /\bbudgets?\b/i, meaning: 'the GPU-hours a team (or user) may use per day, week or month; once spent, its jobs wait even while GPUs are free, until the budget resets — their ETA is then the reset (or later, in queue order)' },
  { term: 'GPU-hours', pattern: /\bGPU-hours?\b/i, meaning: 'GPUs times hours held (2 GPUs for 30 minutes = 1 GPU-hour): how usage and budgets count' },
  { term: 'simulated GPU', pattern: /\bsimulated\b/i, meaning: 'no NVIDIA GPU on this machine: jobs run on the CPU, on clearly labelled stand-in GPUs' },
  { term: 'NVML', pattern: /\bNVML\b/, meaning: 'NVIDIA\'s library for reading GPUs; not found means no NVIDIA driver here, so the GPUs are simulated' }
];

/** The words of `line` the glossary explains, in GLOSSARY's order (each once). */
export function glossaryTerms(line: string): IGlossaryTerm[] {
  return GLOSSARY.filter(entry => entry.pattern.test(line));
}

/** Whether `line` uses a word beyond the common ones (its "what does this mean?" is shown). */
export function needsGlossary(line: string): boolean {
  return glossaryTerms(line).some(entry => !entry.common);
}

/** A tooltip for `line`: one `word: meaning` line per word it uses, or '' when it uses none. */
export function glossaryTitle(line: string, trans: TranslationBundle = NULL_TRANS): string {
  return glossaryTerms(line)
    .map(entry => `${trans.__(entry.term)}: ${trans.__(entry.meaning)}`)
    .join('\n');
}
