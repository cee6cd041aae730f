/**
 * New user 30, N4: a reason line's scheduler words ("elected", "backfill", "quota", "NVML") are explained
 * in the panel — a title tooltip with each word's meaning, and a "what does this mean?" disclosure after
 * the line (keyboard and touch) where it uses a word beyond "ETA".
 */
import * as React from 'react';
import { createRoot } from 'react-dom/client';
import { act } from 'react';
import { describe, expect, it } from 'vitest';

import { GLOSSARY, glossaryTerms, glossaryTitle, needsGlossary } from '../src/glossary';
import { ReasonLine } from '../src/sections/glossary';

const ELECTED = '#1 · needs 1 Simulated GPU 80GB, 0 free; it goes first: it has waited 12m17s, past 0.75 x the 14m55s wait '
  + 'promised when it was queued (start by 09:23 UTC); jobs queued later start ahead of it only if they end before its planned start (elected) · ETA 09:24 UTC';
const BACKFILL = '#2 · needs 1 GPU, 0 free · ETA 09:37 UTC, when ana\'s job "s2" (j-1) ends; it is queued behind this job, but it fits the GPUs '
  + 'that free first and ends before this job\'s planned start, so it runs first (backfill)';

function render(text: string): HTMLElement {
  const host = document.createElement('div');
  document.body.appendChild(host);
  const root = createRoot(host);
  act(() => root.render(React.createElement(ReasonLine, { text })));
  return host;
}

describe('newuser30 N4 glossary', () => {
  it('test_newuser30_n4_words_of_a_line_are_found', () => {
    expect(glossaryTerms(ELECTED).map(t => t.term)).toEqual(['ETA', 'elected', 'reservation', 'simulated GPU']);
    expect(glossaryTerms(BACKFILL).map(t => t.term)).toEqual(['ETA', 'backfill', 'reservation']);
    expect(glossaryTerms('team default has no GPUs set aside and no limit (no quota)').map(t => t.term)).toEqual(['quota']);
    expect(glossaryTerms('Simulated GPUs — no NVIDIA driver found on this machine; NVML: NVML shared library not found').map(t => t.term))
      .toEqual(['simulated GPU', 'NVML']);
    // the README's list names every word the panel explains
    expect(GLOSSARY.map(t => t.term)).toEqual(expect.arrayContaining(['elected', 'backfill', 'reservation', 'quota', 'borrowing limit',
      'priority class', 'preempt', 'lease', 'reclaim', 'GPU-hours', 'simulated GPU', 'ETA']));
  });

  it('test_newuser30_n4_a_line_has_a_tooltip_and_a_disclosure', () => {
    const host = render(BACKFILL);
    const line = host.querySelector('.jp-sched-reason') as HTMLElement;
    expect(line.textContent).toBe(BACKFILL); // the server's words unchanged
    expect(line.title).toContain('backfill: a job queued behind starts first on the GPUs that free first');
    expect(line.title.split('\n').map(l => l.split(':')[0])).toEqual(['ETA', 'backfill', 'reservation']);
    const details = host.querySelector('details.jp-sched-glossary') as HTMLElement;
    expect(details.querySelector('summary')?.textContent).toBe('what does this mean?');
    expect([...details.querySelectorAll('dt')].map(d => d.textContent)).toEqual(['ETA', 'backfill', 'reservation']);
  });

  it('test_newuser30_n4_a_line_with_only_common_words_has_no_disclosure', () => {
    const plain = '#1 · 0 of 4 GPUs free, job needs 1 · ETA unknown';
    expect(needsGlossary(plain)).toBe(false);
    const host = render(plain);
    expect(host.querySelector('details')).toBeNull();
    expect((host.querySelector('.jp-sched-reason') as HTMLElement).title).toBe(glossaryTitle(plain));
    expect(render('on node-a · GPU #0').querySelector('.jp-sched-reason')?.hasAttribute('title')).toBe(false);
  });
});
