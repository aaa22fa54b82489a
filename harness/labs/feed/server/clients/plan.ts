// A server scenario's clients as planned, and what the schema cannot check about them: names
// are unique (each names a proxy and a wire stream), and `reads_per_second` is a slow reader's.

import type { RawProblem } from '../../../../scenario/problems.js';
import type { FeedFile } from '../../scenario/schema.js';
import type { ClientPlan } from './schema.js';

type ClientsFile = NonNullable<NonNullable<NonNullable<FeedFile['server']>['under_test']>['clients']>;

export function clientPlansOf(clients: ClientsFile | undefined): ClientPlan[] {
  return (clients ?? []).map((c) => ({
    name: c.name,
    kind: c.kind,
    quiet: c.quiet ?? false,
    instance: c.instance ?? 1,
    ...(c.reads_per_second === undefined ? {} : { readsPerSecond: c.reads_per_second }),
  }));
}

/** `instances`: how many server instances the run has (a scene's, else 1). */
export function clientProblems(clients: ClientsFile | undefined, instances = 1): RawProblem[] {
  const out: RawProblem[] = [];
  const seen = new Map<string, number>();
  (clients ?? []).forEach((c, i) => {
    const at = ['server', 'under_test', 'clients', i];
    const first = seen.get(c.name);
    if (first !== undefined)
      out.push({
        segments: [...at, 'name'],
        at: 'value',
        message: `client name "${c.name}" is taken by clients[${first}]: each names its own proxy and wire stream`,
      });
    else seen.set(c.name, i);
    if (c.instance !== undefined && c.instance > instances)
      out.push({
        segments: [...at, 'instance'],
        at: 'value',
        message: `there ${instances === 1 ? 'is 1 server instance' : `are ${instances} server instances`}; got ${c.instance}`,
      });
    if (c.reads_per_second !== undefined && c.kind !== 'slow-reader')
      out.push({ segments: [...at, 'reads_per_second'], at: 'key', message: `only a slow-reader takes reads_per_second (this client is ${c.kind})` });
  });
  return out;
}
