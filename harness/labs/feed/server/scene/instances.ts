// The server instances of a scene as processes, from the journal: each process's instance (the
// order its port first appears in), and how it ended against what the harness did to it. A
// process may end only when the harness ends it: SIGKILL is a crash and any exit will do; after
// SIGTERM (a step, or the end of the run) it must exit 0 within 2 s.

import type { Finding, ProcessRef, Verdict } from '../../../../findings/verdict.js';
import type { JournalEntry } from '../../../../record/journal.js';
import { seconds } from '../../report/words.js';
import { SERVER_SIGTERM_EXIT_MS } from '../process.js';
import { SERVER_SIGNAL } from '../wire/names.js';
import { lastLine } from '../../check/facts.js';

const EXIT_SLACK_MS = 250;
const SIGNAL_NAME = /^(sigterm|kill|end)-instance-(\d+)$/;

export interface InstanceProcess {
  incarnation: number;
  instance: number;
  command: string;
  pid: number;
  startedAt: number;
  exit?: { t: number; code: number | null; signal: string | null; killedBy?: string; stderrTail: string };
  /** The harness's last signal to its instance while it ran. */
  ended?: { how: 'sigterm' | 'kill' | 'end'; t: number };
}

export function instanceProcessesOf(journal: readonly JournalEntry[]): { processes: InstanceProcess[]; notListeningAt?: number } {
  const ports: string[] = [];
  const processes: InstanceProcess[] = [];
  const byIncarnation = new Map<number, InstanceProcess>();
  let notListeningAt: number | undefined;
  for (const e of journal) {
    if (e.type === 'process-start' && e.role === 'server') {
      const port = e.env.CHAOSLAB_PORT ?? '?';
      if (!ports.includes(port)) ports.push(port);
      const p: InstanceProcess = { incarnation: e.incarnation, instance: ports.indexOf(port) + 1, command: e.command, pid: e.pid, startedAt: e.t };
      processes.push(p);
      byIncarnation.set(e.incarnation, p);
    } else if (e.type === 'process-exit' && e.role === 'server') {
      const p = byIncarnation.get(e.incarnation);
      if (p) p.exit = { t: e.t, code: e.code, signal: e.signal, ...(e.killedBy ? { killedBy: e.killedBy } : {}), stderrTail: e.stderrTail };
    } else if (e.type === 'fault' && e.name === SERVER_SIGNAL.notListening) notListeningAt ??= e.t;
    else if (e.type === 'fault') {
      const m = SIGNAL_NAME.exec(e.name);
      const p = m && processes.find((q) => q.instance === Number(m[2]) && !q.exit);
      if (p) p.ended = { how: m![1] as 'sigterm' | 'kill' | 'end', t: e.t };
    }
  }
  return { processes, ...(notListeningAt === undefined ? {} : { notListeningAt }) };
}

function endProblem(p: InstanceProcess): Finding | undefined {
  const name = `server instance ${p.instance} (process ${p.incarnation}, \`${p.command}\`)`;
  const process: ProcessRef = { role: 'server', incarnation: p.incarnation };
  const e = p.exit;
  if (!e) return { code: 'server-never-ended', text: `${name} has no recorded exit (the run was cut short)`, subject: { process } };
  const how = e.signal ? `was killed by ${e.signal}` : `exited with status ${e.code}`;
  const said = lastLine(e.stderrTail) ? ` (its stderr: "${lastLine(e.stderrTail)}")` : '';
  const subject = { process, t: e.t };
  if (e.killedBy === 'deadline') return { code: 'server-deadline', text: `${name} was killed at the scenario's deadline`, subject };
  if (!p.ended)
    return { code: 'server-exited-early', text: `${name} ${how} ${seconds(e.t - p.startedAt)} after it started; nothing asked it to end${said}`, subject };
  if (p.ended.how === 'kill') return undefined;
  if (e.killedBy)
    return {
      code: 'server-sigterm-ignored',
      text: `${name} did not exit within ${SERVER_SIGTERM_EXIT_MS / 1000} s of SIGTERM: the harness killed it ${seconds(e.t - p.ended.t)} after`,
      subject,
    };
  if (e.code !== 0) return { code: 'server-sigterm-status', text: `${name} ${how} after SIGTERM, expected status 0 (server contract §1)${said}`, subject };
  if (e.t - p.ended.t > SERVER_SIGTERM_EXIT_MS + EXIT_SLACK_MS)
    return {
      code: 'server-sigterm-slow',
      text: `${name} took ${seconds(e.t - p.ended.t)} to exit after SIGTERM, more than ${SERVER_SIGTERM_EXIT_MS / 1000} s`,
      subject,
    };
  return undefined;
}

export function instanceProblems(journal: readonly JournalEntry[]): Finding[] {
  const { processes, notListeningAt } = instanceProcessesOf(journal);
  const listen: Finding[] =
    notListeningAt === undefined
      ? []
      : [
          {
            code: 'server-not-listening',
            text: 'a server instance did not listen on its CHAOSLAB_HOST:CHAOSLAB_PORT within 10 s of starting (server contract §1): the harness killed it',
            subject: { t: notListeningAt },
          },
        ];
  return [...listen, ...processes.flatMap((p) => (notListeningAt !== undefined && p.exit?.killedBy === 'harness' ? [] : (endProblem(p) ?? [])))];
}

export function instancesTable(journal: readonly JournalEntry[]): Verdict['tables'][number] {
  const { processes } = instanceProcessesOf(journal);
  return {
    id: 'server',
    title: 'The server under test: its instances',
    columns: ['instance', 'pid', 'started', 'ended by', 'ended'],
    rows: processes.map((p) => ({
      label: `process ${p.incarnation}`,
      cells: [
        p.instance,
        p.pid,
        seconds(p.startedAt),
        p.ended ? `${p.ended.how === 'kill' ? 'SIGKILL' : 'SIGTERM'} at ${seconds(p.ended.t)}` : '—',
        p.exit ? `${p.exit.signal ? `killed by ${p.exit.signal}` : `status ${p.exit.code}`} at ${seconds(p.exit.t)}` : '—',
      ],
    })),
  };
}
