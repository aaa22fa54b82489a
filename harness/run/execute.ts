// One run's body, whatever its lab and wherever it runs (in the harness process, or in a worker
// inside the run's network namespace when sealed): the journal, Toxiproxy, the lab's process
// model, then the lab's checker on what the harness itself recorded, plus the harness's own
// findings. Everything undone on every way out: processes killed, faults lifted, proxies
// removed, the publisher closed, Toxiproxy stopped. An abort (Ctrl-C) before the verdict stops
// the run there: no process is started any more, those running are killed, and the run ends
// `interrupted`, whatever its consumer or checker would have said.

import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { cannotStartFinding, coreFindings, coreTables, isShellCannotRun, withCoreFindings } from '../judge/core-findings.js';
import { JOURNAL_SCHEMA, type JournalEntry, JournalWriter } from '../record/journal.js';
import type { Lab } from '../lab-api/lab.js';
import { loadAllLabs, loadLab } from '../labs/lab-folders.js';
import { scenarioFileNames } from '../catalogue/catalogue-files.js';
import { harnessVersion } from '../base/paths.js';
import { onAbort } from '../base/interrupt.js';
import { atMost } from '../base/at-most.js';
import { fixSocketBuffers } from '../sandbox/socket-buffers.js';
import { ToxiproxyAdapter } from '../toxiproxy/adapter.js';
import { startToxiproxy } from '../toxiproxy/server.js';
import type { Finding, Verdict } from '../findings/verdict.js';
import { withCoverage } from '../findings/coverage.js';
import { otherLabVerdict, otherLabWatchOnceLoaded } from '../judge/other-lab.js';
import { type Executed, RunEnding } from './run-ending.js';
import { RunParts } from './run-parts.js';
import type { RunHooks, RunRequest } from './run-request.js';

export type { Executed } from './run-ending.js';
export type { RunHooks, RunRequest } from './run-request.js';

/** How long a lab's process model may take to wind down once its processes are killed on an interrupt. */
export const LAB_SETTLE_MS = 5000;

export async function executeRun(request: RunRequest, hooks: RunHooks = {}): Promise<Executed & { entries: readonly JournalEntry[] }> {
  const { scenario, runDir } = request;
  // Its own lab only: the others load only if the watch below needs them.
  const lab = await loadLab(scenario.protocol);
  if (!lab) throw new Error(`scenario ${scenario.name}: no lab named "${scenario.protocol}"`);
  const log = hooks.log ?? (() => {});
  const t0 = performance.now();
  const clock = () => performance.now() - t0;
  let ending: RunEnding | undefined;
  // A consumer that shows it speaks another lab's protocol ends the run with that one finding.
  const otherLab = otherLabWatchOf(
    scenario,
    lab,
    () => journal.entries,
    (finding) => ending?.decide(otherLabVerdict(finding)),
  );
  const journal: JournalWriter = new JournalWriter(join(runDir, 'journal.jsonl'), clock, (entry) => {
    hooks.onJournal?.(entry);
    otherLab.see(entry);
    // The shell could not run the command (126, 127): every restart would fail the same way.
    const notRun = isShellCannotRun(entry) ? cannotStartFinding(journal.entries) : undefined;
    if (notRun) ending?.decide(cannotStart(notRun, 'Not compared: the command could not be run, so the run was stopped at its first try.'));
  });
  journalRunStart(journal, request, lab);
  const parts = new RunParts(request, hooks, journal, log);
  ending = new RunEnding(hooks.signal, journal, clock);
  let outcome: Executed = { status: 'error' };
  try {
    outcome = await runAndJudge(request, lab, { journal, parts, ending, clock, log, otherLabSettled: otherLab.settled });
  } catch (caught) {
    outcome = ending.outcomeOf(caught);
  } finally {
    ending.end();
    await parts.windDown();
    journal.write(ending.runEndEntry(outcome.status));
    journal.close();
  }
  return { ...outcome, entries: journal.entries };
}

/**
 * The watch for a consumer of another lab, when the labs say how their consumers show themselves;
 * the other labs load only if an entry could show one (harness/judge/other-lab.ts).
 */
function otherLabWatchOf(
  scenario: RunRequest['scenario'],
  lab: Lab,
  entries: () => readonly JournalEntry[],
  found: (finding: Finding) => void,
): { see: (entry: JournalEntry) => void; settled: () => Promise<void> } {
  const own = lab.consumerSignature;
  if (!own) return { see: () => {}, settled: () => Promise.resolve() };
  const loadOthers = async () =>
    (await loadAllLabs()).flatMap((other) =>
      other !== lab && other.consumerSignature
        ? [{ name: other.name, signature: other.consumerSignature, happyPath: other.happyPath, scenarioNames: () => scenarioFileNames(other.scenariosDir) }]
        : [],
    );
  return otherLabWatchOnceLoaded({ name: scenario.name, lab: lab.name }, own, loadOthers, entries, found);
}

/** The run's first entries: what runs, with what, where; then the scenario as loaded. */
function journalRunStart(journal: JournalWriter, request: RunRequest, lab: Lab): void {
  const { scenario } = request;
  const { source, ...plan } = scenario;
  journal.write({
    type: 'run-start',
    schema: JOURNAL_SCHEMA,
    runId: request.runId,
    scenario: { name: scenario.name, file: scenario.file, description: scenario.description },
    harnessVersion,
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    cwd: request.cwd,
    protocol: lab.name,
    consumerCommand: request.consumerCommand,
    ...(request.serverCommand === undefined ? {} : { serverCommand: request.serverCommand }),
    controlCommand: lab.referenceCommand,
    sealing: request.seal?.note ?? request.sealNote ?? 'not decided',
    ...(request.reproduce ? { reproduce: request.reproduce } : {}),
  });
  journal.write({ type: 'scenario', source, plan });
}

interface RunBody {
  /** Once the watch for another lab's consumer has seen every entry so far (it may load the other labs). */
  otherLabSettled: () => Promise<void>;
  journal: JournalWriter;
  parts: RunParts;
  ending: RunEnding;
  clock: () => number;
  log: (line: string) => void;
}

/** Toxiproxy, the lab's process model, then its checker and the harness's own findings; throws what leaves the run without a verdict. */
async function runAndJudge(request: RunRequest, lab: Lab, body: RunBody): Promise<Executed> {
  const { journal, parts, ending, clock, log } = body;
  if (request.refuse || request.skip) {
    const verdict = request.refuse
      ? cannotStart({ code: 'cannot-start', text: `your command could not be started: ${request.refuse}` })
      : skipped(request.skip!);
    journal.write({ type: 'verdict', verdict });
    return { status: verdict.status, verdict };
  }
  if (ending.interrupted()) throw new Error('interrupted before the run started');
  const server = await startRunToxiproxy(request, parts, journal, log);
  const adapter = new ToxiproxyAdapter(server.url, (thorough) => server.identityProblem(thorough));
  await parts.openServerSeal();
  const ctx = parts.context(lab, adapter, server, ending, clock, log);
  if (ending.interrupted()) throw new Error('interrupted before the lab ran');
  // What an earlier holder of the uid left is cleared before the consumer (or server) can meet it.
  for (const confinement of parts.confinements) journal.write(await confinement.leftovers('before'));
  await untilDoneOrAborted(lab.run(ctx), ending.signal, () => parts.stopRunning());
  ending.throwIfEnded('interrupted');
  await checkProxiesStayed(parts);
  // Faults end before the verdict: a loss fault's counters are evidence (labs stop theirs already).
  for (const engine of parts.engines) await engine.stop();
  await journalEvidence(parts, journal);
  await body.otherLabSettled();
  const verdict = ending.decided ?? withCoverage(withCoreFindings(await lab.check(ctx), coreFindings(journal.entries), coreTables(journal.entries)));
  journal.write({ type: 'verdict', verdict });
  return { status: verdict.status, verdict };
}

/** The run's own Toxiproxy (or the early one a sealed worker started), after the run's TCP buffers are fixed. */
async function startRunToxiproxy(request: RunRequest, parts: RunParts, journal: JournalWriter, log: (line: string) => void) {
  const { seal, scenario } = request;
  const fixedBuffers = seal !== undefined && scenario.socketBufferBytes !== undefined;
  if (!request.toxiproxyUrl && !fixedBuffers) await parts.takeEarly();
  // Before any socket of the run exists (the runner skips such a scenario when unsealed).
  if (seal && scenario.socketBufferBytes !== undefined) {
    await parts.stopEarly();
    fixSocketBuffers(scenario.socketBufferBytes);
    log(`TCP buffers of the run's namespace fixed at ${scenario.socketBufferBytes} bytes`);
  }
  const toxiproxy = parts.toxiproxy ?? (await startToxiproxy(request.toxiproxyUrl ? { url: request.toxiproxyUrl } : {}));
  parts.toxiproxy = toxiproxy;
  journal.write({
    type: 'toxiproxy',
    url: toxiproxy.url,
    version: toxiproxy.version,
    owned: toxiproxy.owned,
    identity: toxiproxy.identity,
    pid: toxiproxy.pid,
  });
  log(`toxiproxy ${toxiproxy.version} at ${toxiproxy.url}`);
  return toxiproxy;
}

/**
 * A proxy that vanished or moved (its server gone, or changed through the API: an unsealed
 * consumer can reach it) carried no fault of the scenario.
 */
async function checkProxiesStayed(parts: RunParts): Promise<void> {
  for (const proxy of parts.proxies) {
    const info = await proxy.info().catch((e: unknown) => e as Error);
    if (info instanceof Error || info.listen.port !== proxy.listen.port)
      throw new Error(
        `the proxy ${proxy.name} ${info instanceof Error ? `is gone (${info.message})` : `moved to port ${info.listen.port}`}: the consumer's link was not the scenario's, so the run cannot be judged`,
      );
  }
}

/** Evidence for the verdict: the firewall's counters, the rooms' disk use, and what the uid left outside its room. */
async function journalEvidence(parts: RunParts, journal: JournalWriter): Promise<void> {
  const consumer = await parts.confinement?.firewallCounters();
  if (consumer && parts.confinement) journal.write({ type: 'seal', uid: parts.confinement.uid, ...consumer });
  const server = await parts.serverSeal?.counters();
  if (server && parts.serverSeal) journal.write({ type: 'seal', uid: parts.serverSeal.uid, role: 'server', ...server });
  for (const confinement of parts.confinements) {
    for (const entry of confinement.roomEntries()) journal.write(entry);
    journal.write(await confinement.leftovers('after'));
  }
}

/**
 * Waits for `run`; if `signal` aborts first, calls `stop` and then waits for `run` to settle at
 * most LAB_SETTLE_MS (its rejection, a consequence of the stop, is swallowed).
 */
export async function untilDoneOrAborted(run: Promise<void>, signal: AbortSignal | undefined, stop: () => Promise<void>): Promise<void> {
  const settled = run.then(
    () => 'done' as const,
    (error: unknown) => ({ error }),
  );
  let forget = (): void => {};
  const aborted = new Promise<'aborted'>((resolve) => {
    forget = onAbort(signal, () => resolve('aborted'));
  });
  const first = await Promise.race([settled, aborted]);
  forget();
  if (first === 'done') return;
  if (first !== 'aborted' && !signal?.aborted) throw first.error;
  await stop();
  await atMost(settled, LAB_SETTLE_MS);
}

/** The verdict of a run that was not run: it needs what this machine or mode cannot give (skipped, not failed). */
function skipped(why: string): Verdict {
  return {
    status: 'skipped',
    headline: why,
    findings: [],
    harnessErrors: [],
    diff: [],
    state: { id: 'state', title: 'Final state', columns: [], rows: [], empty: 'The run was skipped: nothing ran.' },
    tables: [],
  };
}

/** The verdict of a run whose consumer could not be started at all: the consumer's failure, not the harness's. */
function cannotStart(finding: Finding, empty = 'The run did not start: nothing was read.'): Verdict {
  return {
    status: 'fail',
    headline: finding.text,
    findings: [finding],
    harnessErrors: [],
    diff: [],
    state: { id: 'state', title: 'Final state', columns: [], rows: [], empty },
    tables: [],
  };
}
