// The smallest diff that shows a failure: one fact per line — how the consumer's file departs
// from the expected state, ACKs the file does not back, the transcript the scenario expects
// against what the publisher saw, exits against what the scenario expects, the control's state.

import type { Scenario } from '../../../scenario/types.js';
import { acksList, compareAcks } from './acks.js';
import type { IncarnationFacts } from './incarnations.js';
import type { LedgerPlan } from '../scenario/load.js';
import { count, type Expected, type StoreState, seqList, stateLine } from './state.js';

const seconds = (ms: number): string => `${(ms / 1000).toFixed(3)} s`;

export function smallestDiff(x: {
  plan: Scenario<LedgerPlan>;
  incarnations: IncarnationFacts[];
  consumer: StoreState;
  control: StoreState;
  expected: Expected;
  controlExpected: Expected;
}): string[] {
  const { plan, incarnations } = x;
  const diff: string[] = [];
  const own = stateLine(x.consumer, x.expected);
  if (own.differs) diff.push(`ledger: ${own.line}`);

  // Broken promises: an ACK the publisher saw for a seq the file did not hold.
  const everHeld = new Set<number>();
  for (const inc of incarnations) for (const [s] of inc.fileAfter?.ledger ?? []) everHeld.add(s);
  const broken: string[] = [];
  for (const inc of incarnations) {
    const file = inc.fileAfter;
    if (!file) continue;
    const held = new Set(file.ledger.map(([s]) => s));
    const last = file.checkpoint[0]?.last;
    for (const a of inc.acks) {
      if (held.has(a.seq) && (last ?? -1) >= a.seq) continue;
      broken.push(
        everHeld.has(a.seq)
          ? `publisher saw ACK ${a.seq} at ${seconds(a.t)} from incarnation ${inc.incarnation}, but its file did not hold seq ${a.seq} when it ended (last ${last ?? '—'})`
          : `publisher saw ACK ${a.seq} at ${seconds(a.t)} but the consumer's file never held seq ${a.seq}`,
      );
    }
  }
  diff.push(...broken.slice(0, 3));
  if (broken.length > 3) diff.push(`… and ${broken.length - 3} more ACKs for seqs the file did not hold`);

  // The transcript the scenario expects, against what the publisher saw.
  for (const want of plan.lab.expect.transcript ?? []) {
    const got = incarnations.find((r) => r.incarnation === want.incarnation);
    if (!got) continue;
    const who = `incarnation ${want.incarnation}`;
    if (got.resumes.length === 0 && got.startedAt !== undefined) diff.push(`${who}: no RESUME, expected RESUME ${want.resume}`);
    else if (got.resumes.length && got.resumes[0] !== want.resume) diff.push(`${who}: RESUME ${got.resumes[0]}, expected RESUME ${want.resume}`);
    if (!want.acks) continue;
    if (got.acks.map((a) => a.seq).join() === want.acks.join()) continue;
    const { unexpected: extra, missing } = compareAcks(got.acks, want.acks);
    const notes = [
      ...(extra.length
        ? [
            `extra: ${extra
              .slice(0, 3)
              .map((a) => `ACK ${a.seq} at ${seconds(a.t)}`)
              .join(', ')}${extra.length > 3 ? ', …' : ''}`,
          ]
        : []),
      ...(missing.length ? [`missing: ${missing.length <= 3 ? missing.map((s) => `ACK ${s}`).join(', ') : `ACKs for ${seqList(missing)}`}`] : []),
    ];
    diff.push(
      `${who}: ACKs ${acksList(got.acks)} — expected ${acksList(want.acks.map((seq) => ({ seq })))}${notes.length ? ` (${notes.join('; ')})` : ' (order differs)'}`,
    );
  }

  // How each process ended, against what the scenario expects.
  plan.lab.consumer.incarnations.forEach((inc, i) => {
    const got = incarnations.find((r) => r.incarnation === i + 1);
    const who = `incarnation ${i + 1}`;
    if (!got?.exit) {
      diff.push(`${who}: ${got?.startedAt === undefined ? 'never started' : 'no recorded exit'}`);
      return;
    }
    if (got.exit.killedBy === 'deadline') diff.push(`${who}: killed at the deadline (${count(plan.deadlineMs)} ms), expected to end on its own`);
    else if (inc.expectExit === 'zero' && got.exit.code !== 0)
      diff.push(`${who}: ${got.exit.signal ? `killed by ${got.exit.signal}` : `exit status ${got.exit.code}`}, expected 0`);
    else if (inc.expectExit === 'nonzero' && got.exit.code === 0)
      diff.push(`${who}: exit status 0, expected non-zero${inc.fault ? ` (fault ${inc.fault})` : ''}`);
  });
  const control = stateLine(x.control, x.controlExpected);
  if (control.differs) diff.push(`control: ${control.line}`);
  if (!own.differs) diff.push(`ledger: the consumer's file ${own.line}`);
  return diff;
}
