/**
 * A reason line with its words explained (new user 30, N4): the line's `title` lists the meaning of each
 * scheduler word it uses (glossary.ts), and — where it uses one beyond "ETA" — a "what does this mean?"
 * disclosure after it says the same for keyboards and touch, where a tooltip does not show. The
 * disclosure is the line's sibling: the line's own text stays the server's words.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { NULL_TRANS } from '../format';
import { glossaryTerms, glossaryTitle, needsGlossary } from '../glossary';

export function ReasonLine(props: { text: string; className?: string; role?: string; trans?: TranslationBundle }): React.ReactElement {
  const trans = props.trans ?? NULL_TRANS;
  return (
    <>
      <div className={props.className ?? 'jp-sched-reason'} role={props.role} title={glossaryTitle(props.text, trans) || undefined}>
        {props.text}
      </div>
      {needsGlossary(props.text) ? (
        <details className="jp-sched-glossary">
          <summary>{trans.__('what does this mean?')}</summary>
          <dl>
            {glossaryTerms(props.text).map(entry => (
              <React.Fragment key={entry.term}>
                <dt>{trans.__(entry.term)}</dt>
                <dd>{trans.__(entry.meaning)}</dd>
              </React.Fragment>
            ))}
          </dl>
        </details>
      ) : null}
    </>
  );
}
