// Every reconnect attempt of a restart storm, read back from the storm server's transcript in the
// journal. Each process has its own stream (`storm-<k>`), so every connection there is one of
// its attempts. The wait before an attempt runs from the end of the previous connection (the
// server's close: the process sees it a little later, so scheduling only ever adds to the
// measured wait) to the server's accept; n counts the retries since the last connection on
// which the server sent a snapshot or an event, or since the process's first connect (contract
// section 6: the first retry is n = 0, as in the reference consumers).

import type { JournalEntry } from '../../../record/journal.js';

export interface StormAttempt {
  process: number;
  /** 1-based: the restart this attempt belongs to (0: before the first restart). */
  round: number;
  /** Its place in the round's sequence of attempts, 0-based. */
  index: number;
  /** Consecutive attempts before it since data last arrived: the contract's n. */
  n: number;
  /** Journal time of the accept, and of the end of the previous connection. */
  t: number;
  from: number;
  delayMs: number;
}

export interface StormProcessRecord {
  process: number;
  attempts: StormAttempt[];
  /** Journal time each round began for this process (its `reset shutdown`). */
  roundStarts: number[];
  /** A snapshot or an event reached it on some connection. */
  served: boolean;
  /** The first line it sent, if any (to name a subscribe the server could not read). */
  firstLine?: string;
}

interface Conn {
  conn: number;
  open?: number;
  close?: number;
  data: boolean;
  reset: boolean;
  firstLine?: string;
}

/** Per process (1-based, in order), its attempts; `processes` names how many ran. */
export function stormAttempts(journal: readonly JournalEntry[], processes: number): StormProcessRecord[] {
  const conns = new Map<number, Map<number, Conn>>();
  for (const e of journal) {
    if (e.type !== 'wire') continue;
    const k = Number(/^storm-(\d+)$/.exec(e.stream)?.[1]);
    if (!Number.isInteger(k) || k < 1) continue;
    let mine = conns.get(k);
    if (!mine) conns.set(k, (mine = new Map()));
    let c = mine.get(e.conn);
    if (!c) mine.set(e.conn, (c = { conn: e.conn, data: false, reset: false }));
    if (e.kind === 'open') c.open = e.t;
    else if (e.kind === 'close') c.close ??= e.t;
    else if (e.kind === 'recv') c.firstLine ??= e.line;
    else if (e.kind === 'send') {
      if (/^\{"op":"(snapshot|event)"/.test(e.line)) c.data = true;
      if (e.line.startsWith('{"op":"reset"')) c.reset = true;
    }
  }
  const records: StormProcessRecord[] = [];
  for (let k = 1; k <= processes; k++) {
    const list = [...(conns.get(k)?.values() ?? [])].sort((a, b) => a.conn - b.conn);
    const attempts: StormAttempt[] = [];
    const roundStarts: number[] = [];
    let n = 0;
    let round = 0;
    let index = 0;
    let prev: Conn | undefined;
    for (const c of list) {
      if (prev && c.open !== undefined && prev.close !== undefined) {
        attempts.push({ process: k, round, index, n, t: c.open, from: prev.close, delayMs: c.open - prev.close });
        index++;
      }
      // The process's first connect is no retry: the first retry waits with n = 0 whatever it brought.
      n = c.data || !prev ? 0 : n + 1;
      if (c.reset) {
        round++;
        index = 0;
        if (c.close !== undefined) roundStarts.push(c.close);
      }
      prev = c;
    }
    const firstLine = list.find((c) => c.firstLine !== undefined)?.firstLine;
    records.push({ process: k, attempts, roundStarts, served: list.some((c) => c.data), ...(firstLine === undefined ? {} : { firstLine }) });
  }
  return records;
}
