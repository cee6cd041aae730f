import { afterEach, describe, expect, it } from 'vitest';

import { DefinitionsView, gpusPerRunProblem, REQUIRED_PATH } from '../src/definitions';
import { FakeSchedServer, json, settle } from './fakeserver';
import { flush, startedModel } from './ui';

afterEach(() => {
  document.body.replaceChildren();
});

async function form(): Promise<{ view: DefinitionsView; posted: unknown[]; done: () => void }> {
  const server = new FakeSchedServer();
  const posted: unknown[] = [];
  server.routes.set('GET definitions', () => json(200, []));
  server.routes.set('POST definitions', (request: unknown) => {
    posted.push(request);
    return json(400, { error: { code: 'validation_error', field: 'gpus', message: 'refused by the server', hint: null } });
  });
  const { model } = await startedModel(server);
  const view = new DefinitionsView({ model, openPath: async () => undefined, saveNotebook: async () => undefined });
  document.body.appendChild(view.node);
  await settle();
  return { view, posted, done: () => { view.dispose(); model.dispose(); } };
}

function save(view: DefinitionsView, values: { path: string; gpus: string }): void {
  view.node.querySelector<HTMLInputElement>('.jp-sched-defs-path')!.value = values.path;
  view.node.querySelector<HTMLInputElement>('.jp-sched-defs-gpus')!.value = values.gpus;
  view.node.querySelector<HTMLButtonElement>('.jp-sched-defs-create')!.click();
}

const note = (view: DefinitionsView) => view.node.querySelector('.jp-sched-defs-path-note')?.textContent;
const alert = (view: DefinitionsView) => view.node.querySelector('.jp-sched-defs-form-error')?.textContent;

describe('newuser38 n22: the Scheduled notebooks form says what is wrong with each field before sending', () => {
  it('test_newuser38_n22_gpusPerRunProblem: the Submit form\'s words, for the form\'s own line', () => {
    expect(gpusPerRunProblem('-1')).toBe('GPUs per run must be >= 0 (got -1). Use 0 for CPU-only runs or a positive number of GPUs.');
    expect(gpusPerRunProblem('')).toMatch(/^GPUs per run must be a number \(got ""\)\. /);
    expect(gpusPerRunProblem('abc')).toMatch(/^GPUs per run must be a number \(got "abc"\)/);
    for (const ok of ['0', '1', '0.5', '4']) {
      expect(gpusPerRunProblem(ok)).toBeNull();
    }
  });

  it('test_newuser38_n22_every_field_empty: the path and the GPUs are both said, nothing is sent', async () => {
    const { view, posted, done } = await form();
    save(view, { path: '', gpus: '' });
    await settle();
    await flush();
    expect(posted).toEqual([]);
    expect(note(view)).toBe(REQUIRED_PATH);
    expect(REQUIRED_PATH).toContain('give the notebook or script to run (a path from the file browser');
    expect(alert(view)).toMatch(/^GPUs per run must be a number/);
    expect(view.node.querySelector('.jp-sched-defs-path')!.getAttribute('aria-invalid')).toBe('true');
    done();
  });

  it('test_newuser38_n22_negative_gpus_get_the_forms_own_line_not_the_browsers_bubble', async () => {
    const { view, posted, done } = await form();
    // the browser's constraint check would stop Save with its own bubble, before the form's line (was: min=0 only)
    expect(view.node.querySelector('form.jp-sched-defs-form')!.hasAttribute('novalidate')).toBe(true);
    save(view, { path: 'reports/daily.ipynb', gpus: '-1' });
    await settle();
    await flush();
    expect(posted).toEqual([]);
    expect(note(view)).toBe('');
    expect(alert(view)).toBe('GPUs per run must be >= 0 (got -1). Use 0 for CPU-only runs or a positive number of GPUs.');
    expect(view.node.querySelector('.jp-sched-defs-gpus')!.getAttribute('aria-invalid')).toBe('true');
    done();
  });
});
