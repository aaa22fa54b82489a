// Runs one scenario: publisher streams, Toxiproxy in front of the consumer under test, the
// consumer's incarnations one after another (the harness is the only thing that reconnects),
// the always-connected control consumer, then the checker. Everything observed goes to the
// journal as it happens; the verdict is derived from the journal and the SQLite files only.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Publisher } from '../publisher/ledger/server.js';
import { runCleanups } from './cleanup.js';
import { FaultEngine } from './faults/engine.js';
import { JOURNAL_SCHEMA, type JournalEntry, JournalWriter, type Role, readJournal } from './journal.js';
import { type Verdict, checkLedgerRun } from './labs/ledger/checker.js';
import { readStore } from './labs/ledger/store-reader.js';
import { harnessVersion, referenceConsumerCommand } from './paths.js';
import { renderRunFolder } from './report/render-all.js';
import type { Scenario } from './scenario/load.js';
import { type SupervisedProcess, startProcess, withDeadline } from './supervisor.js';
import { ToxiproxyAdapter } from './toxiproxy/adapter.js';
import { type ToxiproxyServer, startToxiproxy } from './toxiproxy/server.js';

export interface RunOptions {
  scenario: Scenario;
  /** Shell command line of the consumer under test, run from `cwd`. */
  consumerCommand?: string;
  cwd: string;
  reportsDir: string;
  toxiproxyUrl?: string;
  /** Progress lines for the console. */
  log?: (line: string) => void;
  /** Every journal entry as it is written (live console, progress). */
  onJournal?: (entry: JournalEntry) => void;
}

export interface RunResult {
  runId: string;
  runDir: string;
  status: 'pass' | 'fail' | 'error';
  verdict?: Verdict;
  error?: string;
}

export function newRunId(name: string, now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${name}-${Math.random().toString(36).slice(2, 6)}`;
}

export async function runScenario(options: RunOptions): Promise<RunResult> {
  const { scenario, cwd } = options;
  const log = options.log ?? (() => {});
  const consumerCommand = options.consumerCommand ?? referenceConsumerCommand;
  const runId = newRunId(scenario.name);
  const runDir = join(options.reportsDir, runId);
  mkdirSync(runDir, { recursive: true });
  const t0 = performance.now();
  const clock = () => performance.now() - t0;
  const journal = new JournalWriter(join(runDir, 'journal.jsonl'), clock, options.onJournal);
  const dbs: Record<Role, string> = { consumer: join(runDir, 'consumer.db'), control: join(runDir, 'control.db') };
  const { source, ...plan } = scenario;

  journal.write({
    type: 'run-start',
    schema: JOURNAL_SCHEMA,
    runId,
    scenario: { name: scenario.name, file: scenario.file, description: scenario.description },
    harnessVersion,
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    cwd,
    consumerCommand,
    controlCommand: referenceConsumerCommand,
  });
  journal.write({ type: 'scenario', source, plan });

  let toxiproxy: ToxiproxyServer | undefined;
  let publisher: Publisher | undefined;
  let removeProxy: (() => Promise<void>) | undefined;
  let faults: FaultEngine | undefined;
  const running = new Set<SupervisedProcess>();
  let status: RunResult['status'] = 'error';
  let verdict: Verdict | undefined;
  let error: string | undefined;

  try {
    toxiproxy = await startToxiproxy(options.toxiproxyUrl ? { url: options.toxiproxyUrl } : {});
    journal.write({ type: 'toxiproxy', url: toxiproxy.url, version: toxiproxy.version, owned: toxiproxy.owned });
    log(`toxiproxy ${toxiproxy.version} at ${toxiproxy.url}`);

    publisher = await Publisher.start(
      [
        { name: 'control', events: plan.events },
        {
          name: 'consumer',
          events: plan.events,
          window: plan.publisher.window,
          retentionStart: plan.publisher.retentionStart,
          redeliverUnacked: plan.publisher.redeliverUnacked,
          ackDeadlineMs: plan.publisher.ackDeadlineMs,
          misbehaviour: plan.publisher.misbehaviour,
          retentionMoves: plan.publisher.retentionMoves,
          forgetAcked: plan.publisher.forgetAcked,
          // The fault engine needs the proxy, which needs this stream's port: bind late.
          hooks: {
            onResume: (conn, cursor) => faults?.hooks.onResume?.(conn, cursor),
            beforeEvent: (conn, seq) => faults?.hooks.beforeEvent?.(conn, seq),
            onAck: (conn, seq) => faults?.hooks.onAck?.(conn, seq),
          },
        },
      ],
      { clock, onTranscript: ({ t: _t, ...entry }) => journal.write({ type: 'wire', ...entry }) },
    );
    const control = publisher.stream('control');
    const underTest = publisher.stream('consumer');
    journal.write({ type: 'stream', role: 'control', stream: 'control', host: control.host, port: control.port, db: dbs.control });
    journal.write({ type: 'stream', role: 'consumer', stream: 'consumer', host: underTest.host, port: underTest.port, db: dbs.consumer });

    const proxy = await new ToxiproxyAdapter(toxiproxy.url).createProxy(`chaoslab-${runId}-consumer`, { host: underTest.host, port: underTest.port });
    removeProxy = async () => {
      await proxy.remove();
      journal.write({ type: 'proxy', action: 'remove', name: proxy.name });
    };
    journal.write({
      type: 'proxy',
      action: 'create',
      name: proxy.name,
      listen: `${proxy.listen.host}:${proxy.listen.port}`,
      upstream: `${underTest.host}:${underTest.port}`,
    });
    let current: { proc: SupervisedProcess; incarnation: number } | undefined;
    faults = new FaultEngine(plan.faults, { proxy, current: () => current }, journal);

    const baseEnv = (port: number, db: string) => ({
      CHAOSLAB_HOST: '127.0.0.1',
      CHAOSLAB_PORT: String(port),
      CHAOSLAB_DB: db,
      CHAOSLAB_TIMEOUT_MS: String(plan.timeoutMs),
    });
    const start = (role: Role, incarnation: number, command: string, env: Record<string, string>) => {
      const proc = startProcess({ name: `${role}#${incarnation}`, command, cwd, env });
      running.add(proc);
      journal.write({ type: 'process-start', role, incarnation, pid: proc.pid, command, env });
      log(`${role} ${role === 'consumer' ? `incarnation ${incarnation} ` : ''}started (pid ${proc.pid})`);
      return proc;
    };
    const finish = async (role: Role, incarnation: number, proc: SupervisedProcess, exitPromise: Promise<Awaited<SupervisedProcess['exited']>>) => {
      const exit = await exitPromise;
      running.delete(proc);
      const out = proc.outputTail();
      journal.write({
        type: 'process-exit',
        role,
        incarnation,
        code: exit.code,
        signal: exit.signal,
        ...(exit.killedBy ? { killedBy: exit.killedBy } : {}),
        durationMs: Math.round(exit.durationMs),
        stdoutTail: out.stdout,
        stderrTail: out.stderr,
        stdoutBytes: out.stdoutBytes,
        stderrBytes: out.stderrBytes,
      });
      const how = exit.killedBy ? `killed at the ${exit.killedBy}` : exit.signal ? `killed by ${exit.signal}` : `exited ${exit.code}`;
      log(`${role} ${role === 'consumer' ? `incarnation ${incarnation} ` : ''}${how}`);
    };

    const controlProc = start('control', 1, referenceConsumerCommand, baseEnv(control.port, dbs.control));
    const controlDone = finish('control', 1, controlProc, withDeadline(controlProc, plan.deadlineMs));

    // The listed incarnations always run; then, with a restart policy, plain restarts until the
    // publisher holds an ACK for every event (the harness is the only thing that reconnects).
    const restart = plan.consumer.restart;
    for (let n = 1; ; n++) {
      const listed = plan.consumer.incarnations[n - 1];
      if (!listed && (!restart || n > restart.max || underTest.stream.complete)) break;
      if (n > 1 && restart?.delayMs) await new Promise((r) => setTimeout(r, restart.delayMs));
      await faults.incarnationStarting(n);
      underTest.stream.tag = `incarnation ${n}`;
      const env = { ...baseEnv(proxy.listen.port, dbs.consumer), ...(listed?.fault ? { CHAOSLAB_FAULT: listed.fault } : {}) };
      const proc = start('consumer', n, consumerCommand, env);
      current = { proc, incarnation: n };
      const exit = withDeadline(proc, plan.deadlineMs);
      if (listed?.fault?.includes('stop@')) await observeSelfStops(proc, exit, n, dbs.consumer, journal, log);
      await finish('consumer', n, proc, exit);
      current = undefined;
      // Read through an independent connection before anything else touches the file.
      journal.write({
        type: 'store-read',
        role: 'consumer',
        incarnation: n,
        when: 'after-exit',
        db: dbs.consumer,
        store: readStore(dbs.consumer, { writerGone: true }),
      });
      await faults.incarnationExited(n);
    }
    await faults.stop();
    await controlDone;

    const roleOf = new Map(Object.entries(dbs).map(([role, db]) => [db, role as Role]));
    verdict = checkLedgerRun(readJournal(journal.path), (db) => {
      const store = readStore(db, { writerGone: true });
      journal.write({ type: 'store-read', role: roleOf.get(db)!, when: 'final', db, store });
      return store;
    });
    journal.write({ type: 'verdict', pass: verdict.pass, reasons: [...verdict.harnessErrors, ...verdict.reasons], details: verdict });
    status = verdict.harnessErrors.length > 0 ? 'error' : verdict.pass ? 'pass' : 'fail';
  } catch (caught) {
    error = caught instanceof Error ? caught.message : String(caught);
    journal.write({ type: 'harness-error', message: error });
    status = 'error';
  } finally {
    await Promise.all([...running].map((proc) => proc.kill('harness')));
    await faults?.stop().catch((e: unknown) => journal.write({ type: 'harness-error', message: `lifting faults: ${String(e)}` }));
    await removeProxy?.().catch((e: unknown) => journal.write({ type: 'harness-error', message: `removing the proxy: ${String(e)}` }));
    await publisher?.close();
    await toxiproxy?.stop();
    journal.write({ type: 'run-end', status });
    journal.close();
  }
  renderRunFolder(runDir, { latestIn: options.reportsDir });
  return { runId, runDir, status, ...(verdict ? { verdict } : {}), ...(error ? { error } : {}) };
}

/** While a consumer with a `stop` fault runs: each time it stops itself, read its file from outside, then let it go on. */
async function observeSelfStops(
  proc: SupervisedProcess,
  exit: Promise<unknown>,
  incarnation: number,
  db: string,
  journal: JournalWriter,
  log: (line: string) => void,
): Promise<void> {
  let exited = false;
  void exit.then(() => (exited = true));
  while (!exited) {
    const state = await proc.waitUntilStoppedOrExited(1000);
    if (state === 'exited') return;
    if (state !== 'stopped') continue;
    journal.write({ type: 'process-stopped', role: 'consumer', incarnation });
    journal.write({ type: 'store-read', role: 'consumer', incarnation, when: 'while-stopped', db, store: readStore(db) });
    log(`consumer incarnation ${incarnation} stopped itself; file read from outside`);
    proc.continue();
    journal.write({ type: 'process-continued', role: 'consumer', incarnation });
    // SIGCONT takes effect asynchronously: don't mistake the same stop for a new one.
    for (let i = 0; i < 100 && proc.isStopped(); i++) await new Promise((r) => setTimeout(r, 10));
  }
}

export { runCleanups };
