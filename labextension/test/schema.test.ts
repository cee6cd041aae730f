/**
 * The client and openapi.yaml agree: schema.ts is what openapi-typescript makes of the document
 * today, and ROUTES names every operation with the document's method and path (the type-level
 * check in client.ts cannot tell apart operations of the same shape, e.g. getJob and getLease).
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import { load } from 'js-yaml';
import * as path from 'path';
import { describe, expect, it } from 'vitest';

import { ROUTES } from '../src/client';

const ROOT = path.resolve(__dirname, '..');
const DOCUMENT = path.resolve(ROOT, '..', 'jupyter_sched', 'extension', 'openapi.yaml');

describe('openapi.yaml and the client', () => {
  it('src/schema.ts is up to date with openapi.yaml (else: jlpm openapi:generate)', () => {
    const bin = path.join(ROOT, 'node_modules', '.bin', 'openapi-typescript');
    let output = '';
    try {
      output = execFileSync(bin, [DOCUMENT, '--output', 'src/schema.ts', '--check'], { cwd: ROOT, encoding: 'utf-8', stdio: 'pipe' });
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string };
      throw new Error(`schema.ts and openapi.yaml drifted; run "jlpm openapi:generate" in labextension/.\n${e.stdout ?? ''}${e.stderr ?? ''}`);
    }
    expect(output).not.toMatch(/not up-to-date/);
  }, 60000);

  it('ROUTES has one entry per operation, with its method and path', () => {
    const doc = load(fs.readFileSync(DOCUMENT, 'utf-8')) as { paths: Record<string, Record<string, { operationId?: string }>> };
    const documented: Record<string, { method: string; path: string }> = {};
    for (const [route, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        if (op && typeof op === 'object' && op.operationId) {
          documented[op.operationId] = { method, path: route };
        }
      }
    }
    const ours = Object.fromEntries(Object.entries(ROUTES).map(([id, r]) => [id, { method: r.method, path: r.path }]));
    expect(ours).toEqual(documented);
  });
});
