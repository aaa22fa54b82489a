// Runs one scenario: the run folder, then the run's body (harness/run/execute.ts) — in this
// process, or, sealed, in a worker inside the run's own network namespace (harness/run/sealed.ts)
// — then the reports, drawn from the harness's own record of the run.

import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { JournalEntry } from '../record/journal.js';
import { labNamed, testsServer } from '../labs/registry.js';
import { ensureDir } from '../report/run-folder.js';
import { closeFolder, makePassable } from '../report/staff-only.js';
import type { RunStatus, RunView } from '../report/view.js';
import { reproduceOf } from '../record/reproduce.js';
import type { RunRequest } from './execute.js';
import { runSealed } from './sealed.js';
import { handBackRooms } from '../sandbox/room.js';
import { sealedOutProblem } from '../sandbox/out-folder.js';
import { UsageError } from '../base/exit-status.js';
import { lossFaultOf } from '../scenario/faults.js';
import type { Scenario } from '../scenario/types.js';
import { type SealMode, sealing } from './sealing.js';
import type { Verdict } from '../findings/verdict.js';

export interface RunOptions {
  scenario: Scenario;
  /** Shell command line of the consumer under test, run from `cwd` (default: the lab's reference). */
  consumerCommand?: string;
  /** Shell command line of the push server under test, for a scenario that tests one (default: the lab's reference server). */
  serverCommand?: string;
  cwd: string;
  reportsDir: string;
  toxiproxyUrl?: string;
  /** `--store-limit`: the largest consumer store the checker reads (default: the lab's). */
  storeLimitBytes?: number;
  /** Sealed or not (default: CHAOSLAB_SEAL, else sealed wherever the machine allows). */
  seal?: SealMode;
  /** Sealed runs: each consumer room's disk quota in bytes (default: harness/sandbox/room-fs.ts). */
  roomQuotaBytes?: number;
  /** The job slot (0-based): parallel runs get different uids when sealed. */
  slot?: number;
  /** Progress lines for the console. */
  log?: (line: string) => void;
  /** Every journal entry as it is written (live console, progress). */
  onJournal?: (entry: JournalEntry) => void;
  /** The chaoslab command line as typed, recorded beside the one that re-runs this run alone. */
  invokedAs?: string;
  /** Aborted on Ctrl-C/SIGTERM: the run stops, ends `interrupted`, and its reports are still written. */
  signal?: AbortSignal;
  /** Point `<reportsDir>/latest` at the run (default true; a batch points it at itself instead). */
  latest?: boolean;
}

export interface RunResult {
  runId: string;
  runDir: string;
  /** `interrupted`: stopped before its own end (no verdict, whatever the consumer did). */
  status: RunStatus;
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

type Executed = Awaited<ReturnType<typeof runSealed>>;

/** A worker that died before the end of its run left a journal without one: it is ended here. */
function endUnended(entries: JournalEntry[], executed: Executed, runDir: string, signal: AbortSignal | undefined): Executed {
  if (entries.some((e) => e.type === 'run-end')) return executed;
  const t = entries.at(-1)?.t ?? 0;
  const ending: JournalEntry[] = signal?.aborted
    ? [{ t, type: 'run-end', status: 'interrupted', interrupted: { by: String(signal.reason), at: t } }]
    : [
        { t, type: 'harness-error', message: executed.error ?? 'the run ended without a run-end entry' },
        { t, type: 'run-end', status: 'error' },
      ];
  entries.push(...ending);
  appendFileSync(join(runDir, 'journal.jsonl'), ending.map((e) => `${JSON.stringify(e)}\n`).join(''));
  return signal?.aborted ? { status: 'interrupted' } : executed;
}

export async function runScenario(options: RunOptions): Promise<RunResult> {
  const { scenario, cwd } = options;
  const lab = labNamed(scenario.protocol);
  if (!lab) throw new Error(`scenario ${scenario.name}: no lab named "${scenario.protocol}"`);
  const serverCommand = programsUnderTest(scenario, options);
  const runId = newRunId(scenario.name);
  const reportsDir = ensureDir(options.reportsDir);
  // A sealed consumer passes through it to its room; nobody lists it.
  makePassable(reportsDir);
  const runDir = join(reportsDir, runId);
  const decision = await sealing(options.seal, options.toxiproxyUrl);
  // Refused before anything starts: a store the harness cannot reach would FAIL an honest consumer.
  const unreachable = decision.sealed ? sealedOutProblem(reportsDir) : undefined;
  if (unreachable) throw new UsageError(`refusing to run sealed here: ${unreachable}, or run with --no-seal`);
  const request: RunRequest = {
    scenario,
    runId,
    runDir,
    cwd,
    consumerCommand: options.consumerCommand ?? lab.referenceCommand,
    ...(serverCommand === undefined ? {} : { serverCommand }),
    ...(options.toxiproxyUrl ? { toxiproxyUrl: options.toxiproxyUrl } : {}),
    ...(options.storeLimitBytes ? { storeLimitBytes: options.storeLimitBytes } : {}),
    ...(options.roomQuotaBytes !== undefined ? { roomQuotaBytes: options.roomQuotaBytes } : {}),
    reproduce: reproduceOf(options, options.invokedAs),
  };
  const entries: JournalEntry[] = [];
  // The report's modules load from the run's first entry on, while it runs: loaded before it,
  // they held back its start (a sealed worker waits for its request).
  let reportModules: Promise<typeof import('../report/render-all.js')> | undefined;
  const record = (entry: JournalEntry) => {
    reportModules ??= import('../report/render-all.js');
    entries.push(entry);
    options.onJournal?.(entry);
  };
  let executed: Executed;
  if (decision.sealed) {
    // The sandbox could not be set up (its namespace gone, nft refused): this run's harness error,
    // journaled and reported below like a worker that died, never the end of a whole batch.
    executed = await runSealed(request, options.slot ?? 0, decision.note, record, options.signal).catch((error: unknown) => ({
      status: 'error' as const,
      error: `the sealed run could not be set up: ${(error as Error).message}`,
    }));
    executed = endUnended(entries, executed, runDir, options.signal);
  } else {
    mkdirSync(runDir);
    // Never run without its loss or its small buffers: both need the sealed run's own namespace.
    const skip = unsealedSkip(scenario, decision.note);
    // Imported here: a sealed run's body runs in its worker, and this process needs none of it.
    const { executeRun } = await import('./execute.js');
    executed = await executeRun(
      { ...request, sealNote: decision.note, ...skip },
      { onJournal: record, ...(options.log ? { log: options.log } : {}), ...(options.signal ? { signal: options.signal } : {}) },
    );
  }
  // Whatever way the run ended (a worker that died left its rooms the uid's), its rooms are
  // root's again and its folder closed before a report is written in it.
  if (decision.sealed) handBackRooms(runDir);
  closeFolder(runDir);
  const { renderRunFolder } = await (reportModules ?? import('../report/render-all.js'));
  const { view } = renderRunFolder(runDir, { ...(options.latest === false ? {} : { latestIn: options.reportsDir }), entries });
  closeFolder(runDir);
  return {
    runId,
    runDir,
    status: executed.status,
    view,
    ...(executed.verdict ? { verdict: executed.verdict } : {}),
    ...(executed.error ? { error: executed.error } : {}),
  };
}

/**
 * The server under test, for a scenario that tests the lab's push server (its `--server`, else the
 * lab's reference server); undefined for a consumer scenario. A consumer given to a server
 * scenario, or a server to a consumer scenario, is refused: it would not be what the run tests.
 */
export function programsUnderTest(scenario: Scenario, options: Pick<RunOptions, 'consumerCommand' | 'serverCommand'>): string | undefined {
  const lab = labNamed(scenario.protocol);
  if (!testsServer(scenario)) {
    if (options.serverCommand !== undefined)
      throw new Error(
        `scenario ${scenario.name} tests a consumer, not a push server: --server is for server scenarios (${lab?.name ?? scenario.protocol}-server-*); give a consumer with --consumer`,
      );
    return undefined;
  }
  if (options.consumerCommand !== undefined)
    throw new Error(
      `scenario ${scenario.name} tests a push server (the lab's reference consumers are its probes): give the server with --server, not --consumer`,
    );
  return options.serverCommand ?? lab!.server!.referenceCommand;
}

/** Why a scenario cannot run unsealed as written: what it asks of the network needs the run's own namespace. */
function unsealedSkip(scenario: Scenario, note: string): { skip?: string } {
  const loss = lossFaultOf(scenario.faults);
  if (loss) return { skip: `packet loss (fault ${loss.name}) needs a sealed run (its own network namespace, nftables): ${note}` };
  if (scenario.socketBufferBytes !== undefined)
    return { skip: `socket_buffer_bytes (${scenario.socketBufferBytes}) needs a sealed run (the TCP buffer sizes of its own network namespace): ${note}` };
  return {};
}
