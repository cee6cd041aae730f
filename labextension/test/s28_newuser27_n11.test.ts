import { afterEach, describe, expect, it } from 'vitest';
import { act } from 'react';

import { unexpandedWords } from '../src/args';
import { argumentsHelp, SubmitView } from '../src/sections/submit';
import { nullTranslator } from '@jupyterlab/translation';
import { FakeSchedServer } from './fakeserver';
import { context, flush, mount, startedModel, text } from './ui';

afterEach(() => {
  document.body.replaceChildren();
});

describe("newuser27 n11: the Submit form's Arguments field says it splits like a shell but does not expand", () => {
  const trans = nullTranslator.load('jupyter_sched');
  const RULE = 'Split like a shell (quotes group words) but not expanded: ~ and $VAR reach the program as typed.';

  it('names the words a shell would have expanded', () => {
    expect(unexpandedWords('--path ~/x $HOME --n 3')).toEqual(['~/x', '$HOME']);
    expect(unexpandedWords('--t "a ${USER}b" --cost 5$ --q "oops')).toEqual([]); // does not split: []
    expect(unexpandedWords('--t "a ${USER}b" --cost 5$')).toEqual(['a ${USER}b']);
    expect(argumentsHelp('--epochs 3', trans)).toBe(RULE);
    expect(argumentsHelp('--path ~/x $HOME', trans)).toBe(`'~/x', '$HOME' reach it as typed: give full paths or values. ${RULE}`);
    expect(argumentsHelp('--data ~/datasets/foo', trans)).toBe(`'~/datasets/foo' reaches it as typed: give the full path or value. ${RULE}`);
  });

  it('the field carries the help, described by it, and it follows what is typed', async () => {
    const { model } = await startedModel(new FakeSchedServer(), 'inventory', 'config');
    const view = await mount(new SubmitView(context(model), '', () => undefined));
    await flush();
    const input = view.node.querySelector('.jp-sched-submit-args') as HTMLInputElement;
    const help = view.node.querySelector(`#${input.getAttribute('aria-describedby')}`);
    expect(text(help)).toBe(RULE);
    await act(async () => {
      Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!.call(input, '--path ~/x');
      input.dispatchEvent(new Event('input', { bubbles: true }));
    });
    expect(text(help)).toBe(`'~/x' reaches it as typed: give the full path or value. ${RULE}`);
    model.dispose();
  });
});
