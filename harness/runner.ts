// Runs one scenario, whatever its lab: a run folder and its journal, Toxiproxy, then the lab's
// process model (publisher, control, consumer processes, faults), then the lab's checker on what
// the harness itself recorded, then the reports. Everything undone on every way out: processes
// killed, faults lifted, proxies removed, the publisher closed, Toxiproxy stopped.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { onCleanup } from './cleanup.js';
import { FaultEngine } from './faults/engine.js';
import { JOURNAL_SCHEMA, type JournalEntry, JournalWriter } from './journal.js';
import type { RunContext } from './lab.js';
import { labNamed } from './labs/registry.js';
import { harnessVersion } from './paths.js';
import { ProcessRunner } from './processes.js';
import { renderRunFolder } from './report/render-all.js';
import { ensureDir } from './report/run-folder.js';
import type { Scenario } from './scenario/types.js';
import { ToxiproxyAdapter } from './toxiproxy/adapter.js';
import { startToxiproxy, type ToxiproxyServer } from './toxiproxy/server.js';
import type { RunView } from './report/view.js';
import type { Verdict, VerdictStatus } from './verdict.js';
import { wireRecorder } from './wire-journal.js';

export interface RunOptions {
  scenario: Scenario;
  /** Shell command line of the consumer under test, run from `cwd` (default: the lab's reference). */
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
  status: VerdictStatus;
  /** The checker's verdict; absent when the harness failed before it could judge. */
  verdict?: Verdict;
  /** The run as its reports show it. */
  view: RunView;
  error?: string;
}

export function newRunId(name: string, now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${name}-${Math.random().toString(36).slice(2, 6)}`;
}

export async function runScenario(options: RunOptions): Promise<RunResult> {
  const { scenario, cwd } = options;
  const lab = labNamed(scenario.protocol);
  if (!lab) throw new Error(`scenario ${scenario.name}: no lab named "${scenario.protocol}"`);
  const log = options.log ?? (() => {});
  const consumerCommand = options.consumerCommand ?? lab.referenceCommand;
  const runId = newRunId(scenario.name);
  const runDir = join(options.reportsDir, runId);
  mkdirSync(join(ensureDir(options.reportsDir), runId));
  const t0 = performance.now();
  const clock = () => performance.now() - t0;
  const journal = new JournalWriter(join(runDir, 'journal.jsonl'), clock, options.onJournal);
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
    protocol: lab.name,
    consumerCommand,
    controlCommand: lab.referenceCommand,
  });
  journal.write({ type: 'scenario', source, plan });

  let toxiproxy: ToxiproxyServer | undefined;
  const undo: (() => Promise<void> | void)[] = [];
  const engines: FaultEngine[] = [];
  const processes = new ProcessRunner(journal, cwd, scenario.deadlineMs, log);
  let status: VerdictStatus = 'error';
  let verdict: Verdict | undefined;
  let error: string | undefined;

  try {
    toxiproxy = await startToxiproxy(options.toxiproxyUrl ? { url: options.toxiproxyUrl } : {});
    journal.write({ type: 'toxiproxy', url: toxiproxy.url, version: toxiproxy.version, owned: toxiproxy.owned });
    log(`toxiproxy ${toxiproxy.version} at ${toxiproxy.url}`);
    const adapter = new ToxiproxyAdapter(toxiproxy.url);
    const ctx: RunContext<unknown> = {
      scenario,
      runId,
      runDir,
      consumerCommand,
      controlCommand: lab.referenceCommand,
      journal,
      clock,
      log,
      processes,
      room: (name) => ensureDir(join(runDir, 'rooms', name)),
      wire: (ownerOf) => wireRecorder(journal, ownerOf),
      proxy: async (role, upstream) => {
        const proxy = await adapter.createProxy(`chaoslab-${runId}-${role}`, upstream);
        // Also removed when the harness is interrupted: on an external Toxiproxy it would outlive us.
        const forget = onCleanup(`proxy ${proxy.name}`, () => proxy.remove());
        undo.push(async () => {
          forget();
          await proxy.remove();
          journal.write({ type: 'proxy', action: 'remove', name: proxy.name });
        });
        journal.write({
          type: 'proxy',
          action: 'create',
          name: proxy.name,
          listen: `${proxy.listen.host}:${proxy.listen.port}`,
          upstream: `${upstream.host}:${upstream.port}`,
        });
        return proxy;
      },
      faults: (target) => {
        const engine = new FaultEngine(scenario.faults, target, journal, lab.faultPoints);
        engines.push(engine);
        return engine;
      },
      defer: (fn) => undo.push(fn),
    };
    await lab.run(ctx);
    verdict = lab.check(ctx);
    journal.write({ type: 'verdict', verdict });
    status = verdict.status;
  } catch (caught) {
    error = caught instanceof Error ? caught.message : String(caught);
    journal.write({ type: 'harness-error', message: error });
    status = 'error';
  } finally {
    await processes.killAll();
    for (const engine of engines) await engine.stop().catch((e: unknown) => journal.write({ type: 'harness-error', message: `lifting faults: ${String(e)}` }));
    for (const fn of undo.reverse())
      await Promise.resolve(fn()).catch((e: unknown) => journal.write({ type: 'harness-error', message: `ending the run: ${String(e)}` }));
    await toxiproxy?.stop();
    journal.write({ type: 'run-end', status });
    journal.close();
  }
  const { view } = renderRunFolder(runDir, { latestIn: options.reportsDir, entries: journal.entries });
  return { runId, runDir, status, view, ...(verdict ? { verdict } : {}), ...(error ? { error } : {}) };
}
