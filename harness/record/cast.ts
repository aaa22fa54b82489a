// Who takes part in a run, as its `party` entries say (journal.ts): the names a run gives its
// processes and connections ("probe 2", "server instance 1", "slow"), so that every report speaks
// of them in the run's words, from data. A run without parties (the consumer runs) has an empty
// cast, and its reports speak of the consumer and the control as ever.

import type { ProcessRef } from '../findings/verdict.js';
import type { JournalEntry } from './journal.js';

export type PartyEntry = Extract<JournalEntry, { type: 'party' }>;

export interface Party {
  id: string;
  name: string;
  side: 'server' | 'client';
  about?: string;
  processes: ProcessRef[];
  streams: string[];
  tags: string[];
}

export class Cast {
  private readonly byId = new Map<string, Party>();

  /** Parties in the order the run first named them. */
  get parties(): Party[] {
    return [...this.byId.values()];
  }

  get empty(): boolean {
    return this.byId.size === 0;
  }

  /** One more party entry: a new party, or more of one (another process of a restarted instance). */
  add(e: PartyEntry): void {
    let p = this.byId.get(e.id);
    if (!p) this.byId.set(e.id, (p = { id: e.id, name: e.name, side: e.side, processes: [], streams: [], tags: [] }));
    if (e.about !== undefined) p.about = e.about;
    if (e.process && !p.processes.some((q) => q.role === e.process!.role && q.incarnation === e.process!.incarnation)) p.processes.push(e.process);
    if (e.stream !== undefined && !p.streams.includes(e.stream)) p.streams.push(e.stream);
    if (e.tag !== undefined && !p.tags.includes(e.tag)) p.tags.push(e.tag);
  }

  ofProcess(role: unknown, incarnation: unknown): Party | undefined {
    return this.parties.find((p) => p.processes.some((q) => q.role === role && q.incarnation === incarnation));
  }

  ofStream(stream: string): Party | undefined {
    return this.parties.find((p) => p.streams.includes(stream));
  }

  /** The server side a connection leads to: the one its open's tag names, else the first. */
  serverOf(tag: string | undefined): Party | undefined {
    const servers = this.parties.filter((p) => p.side === 'server');
    return (tag === undefined ? undefined : servers.find((p) => p.tags.includes(tag))) ?? servers[0];
  }

  /** The run's name for a process, if it gave one. */
  nameOf(role: unknown, incarnation: unknown): string | undefined {
    return this.ofProcess(role, incarnation)?.name;
  }
}

/** The cast of a whole journal. */
export function castOf(journal: readonly JournalEntry[]): Cast {
  const cast = new Cast();
  for (const e of journal) if (e.type === 'party') cast.add(e);
  return cast;
}
