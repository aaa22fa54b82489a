// The live console. It sees every journal entry as it is written (RunOptions.onJournal) and
// prints a line per milestone (process started/ended, fault applied/lifted, file read, harness
// error) and, for anything that lasts more than a second, what is going on now: the step, the
// active faults, how many events the consumer has committed (acknowledged). On a terminal this
// is one status line redrawn in place, with a progress bar for multi-scenario runs; with
// --quiet or when the output is not a terminal it stays plain and line-based. At the end of
// each scenario: the verdict, the explanation in plain words, the smallest diff; at the end of
// the run: a table (scenario, verdict, time, one-line reason) and where the reports are. Every
// value (names, findings, the consumer's words, paths) goes through `inert` (inert.ts): the only
// escape sequences this console writes are its own colours and status line.

import { dirname, join, relative, resolve } from 'node:path';
import type { JournalEntry } from '../record/journal.js';
import type { Vocabulary } from '../lab-api/lab.js';
import { colorEnabled } from './color.js';
import { type BatchView, totalsLine } from './batch-view.js';
import { seconds, showLine } from '../text/format.js';
import { terminalText as inert } from '../text/inert.js';
import { latestTarget } from './run-folder.js';
import { type RunStatus, type RunView, reasonsOf, type StderrTail } from './view.js';
import { vocabularyFor } from './vocabulary.js';

export interface ConsoleOut {
  write(text: string): unknown;
  columns?: number;
}

export interface ConsoleReporterOptions {
  /** A terminal: redraw a status line in place, use colour. */
  tty: boolean;
  /** Print only the results (no live lines, no status). */
  quiet: boolean;
  /** In a batch, also each run's milestones (default: a line per run started and finished). */
  verbose?: boolean;
  out: ConsoleOut;
  /** Paths are shown relative to this (default: process.cwd()). */
  cwd?: string;
  /** Default: on a terminal unless NO_COLOR is set, and wherever FORCE_COLOR is (report/color.ts). */
  color?: boolean;
  /** Milliseconds clock (default Date.now). */
  now?: () => number;
  /** Heartbeat period in ms (default 250 on a terminal, 1000 otherwise); false: no timer, call tick(). */
  interval?: number | false;
}

/** What the runner returns, as far as the console needs it. */
export interface FinishedRun {
  status: RunStatus;
  runDir: string;
  error?: string;
  /** The run as its reports show it (absent when the harness failed before rendering). */
  view?: RunView;
}

export interface ScenarioOutcome {
  name: string;
  status: RunStatus;
  durationMs: number;
  /** One line: why (or the pass statement). */
  reason: string;
  runDir?: string;
  /** What the console printed when it finished: the verdict, why, the diff, the consumer's stderr. */
  detail?: string[];
}

export interface ConsoleReporter {
  scenarioStarted(name: string, position?: { index: number; total: number }): void;
  /** Bound: pass it directly as RunOptions.onJournal. */
  onJournal: (entry: JournalEntry) => void;
  scenarioFinished(name: string, result: FinishedRun): ScenarioOutcome;
  finalTable(outcomes?: ScenarioOutcome[]): void;
  /** Ctrl-C/SIGTERM came: ends the status line with a newline and says what happens now. */
  interrupted(signal: string): void;
  /** The end of a batch: the runs that did not pass, again, in full; every run with `verbose`; then one line of totals. */
  batchFinished(outcomes: ScenarioOutcome[], batch: BatchView, options?: { verbose?: boolean }): void;
  /** The heartbeat: redraws the status line (terminal) or prints a "still …" line after a quiet second. */
  tick(): void;
  close(): void;
}

interface Live {
  name: string;
  startedAt: number;
  step: string;
  faults: Set<string>;
  consumerStreams: Set<string>;
  committed: Set<number>;
  vocabulary?: Vocabulary;
  events?: number;
  unknownShown: Map<string, number>;
}

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const WORD = { pass: 'PASS', fail: 'FAIL', error: 'ERROR', interrupted: 'INTERRUPTED', skipped: 'SKIPPED' } as const;
const COLOR = { pass: '32', fail: '31', error: '33', interrupted: '35', skipped: '36' } as const;

const clip = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, Math.max(1, max - 1))}…`);

/** The consumer's last stderr lines, indented under its verdict. */
export const stderrLines = (tail: StderrTail): string[] => [
  `  The consumer said (stderr of incarnation ${tail.incarnation}, last ${tail.lines.length} lines):`,
  ...(tail.omitted ? [`    │ [… ${tail.omitted} earlier lines …]`] : []),
  ...tail.lines.map((l) => `    │ ${inert(l)}`),
];

/** What the console prints when a scenario finishes: the verdict, why, the smallest diff. */
export function outcomeLines(
  name: string,
  result: FinishedRun,
  elapsedMs: number,
  paint: (code: string, text: string) => string = (_code, text) => text,
): { status: RunStatus; durationMs: number; headline: string; lines: string[] } {
  const x = result.view;
  const status = x?.status ?? result.status;
  const durationMs = x?.durationMs ?? elapsedMs;
  const headline = inert(x?.headline ?? result.error ?? (status === 'pass' ? 'passed' : 'no explanation: the run has no verdict'));
  const lines = [`${paint(COLOR[status] ?? COLOR.error, WORD[status] ?? inert(String(status)))}  ${inert(name)}  (${seconds(durationMs)})`];
  if (status === 'pass') {
    lines.push(`  ${headline}`);
  } else {
    lines.push(`  Why: ${headline}`);
    for (const reason of (x ? reasonsOf(x) : []).map(inert).filter((r) => r !== headline)) lines.push(`  - ${reason}`);
    if (x?.diff.length) lines.push('  Smallest diff:', ...x.diff.map((d) => `    ${inert(d)}`));
    if (x?.stderrTail) lines.push(...stderrLines(x.stderrTail));
  }
  return { status, durationMs, headline, lines };
}

export function createConsoleReporter(options: ConsoleReporterOptions): ConsoleReporter {
  const { out, quiet } = options;
  const tty = options.tty && !quiet;
  const now = options.now ?? Date.now;
  const cwd = options.cwd ?? process.cwd();
  const color = options.color ?? colorEnabled(options.tty);
  const paint = (code: string, text: string): string => (color ? `\x1b[${code}m${text}\x1b[0m` : text);
  const width = (): number => Math.max(40, (out.columns ?? 0) || 120);
  const show = (path: string): string => inert(relative(cwd, path) || '.');

  /** Scenarios running now (several with --jobs); `live` is the newest, the one journal entries belong to. */
  const running = new Map<string, Live>();
  let live: Live | undefined;
  let total = 0;
  let finished = 0;
  let statusDrawn = false;
  let lastOutputAt = now();
  let frame = 0;
  const outcomes: ScenarioOutcome[] = [];
  let timer: NodeJS.Timeout | undefined;

  const clearStatus = (): void => {
    if (statusDrawn) out.write('\r\x1b[2K');
    statusDrawn = false;
  };
  const print = (text: string): void => {
    clearStatus();
    out.write(`${text}\n`);
    lastOutputAt = now();
    if (tty && live) drawStatus();
  };
  // A batch shows a line per run; each run's milestones only with --verbose.
  const chatty = (): boolean => total < 2 || options.verbose === true;
  const milestone = (text: string): void => {
    if (quiet || !live || !chatty()) return;
    print(`  ${inert(live.name)} [${seconds(now() - live.startedAt)}] ${inert(text)}`);
  };

  const statusText = (): string => {
    if (!live) return '';
    const parts = [live.step];
    if (live.faults.size) parts.push(`fault${live.faults.size > 1 ? 's' : ''} ${[...live.faults].join(', ')} active`);
    // The lab's word for its progress: ledger consumers commit (and acknowledge), feed consumers resume from durable cursors.
    if (live.committed.size || live.consumerStreams.size)
      parts.push(`${live.committed.size}${live.events ? `/${live.events}` : ''} ${live.vocabulary?.progress.word ?? 'committed'}`);
    return parts.join(' · ');
  };
  const progressBar = (): string => {
    if (total < 2) return '';
    const cells = 16;
    const done = Math.round((Math.min(finished, total) / total) * cells);
    const others = running.size > 1 ? ` (${running.size} running)` : '';
    return `[${'█'.repeat(done)}${'░'.repeat(cells - done)}] ${finished}/${total} done${others} · `;
  };
  function drawStatus(): void {
    if (!tty || !live) return;
    const line = `${SPINNER[frame++ % SPINNER.length]} ${progressBar()}${live.name} ${((now() - live.startedAt) / 1000).toFixed(1)} s · ${statusText()}`;
    out.write(`\r\x1b[2K${clip(inert(line), width() - 1)}`);
    statusDrawn = true;
  }

  const tick = (): void => {
    if (!live || quiet) return;
    if (tty) drawStatus();
    else if (chatty() && now() - lastOutputAt >= 1000) print(`  ${inert(live.name)} [${seconds(now() - live.startedAt)}] still ${inert(statusText())}`);
  };

  const who = (e: { role?: string; incarnation?: number }): string => (e.role === 'control' ? 'control' : `consumer #${e.incarnation ?? '?'}`);

  const onJournal = (entry: JournalEntry): void => {
    const s = live;
    if (!s) return;
    const e = entry as JournalEntry & Record<string, unknown>;
    switch (entry.type) {
      case 'run-start':
        s.step = 'loading the scenario';
        s.vocabulary = vocabularyFor(entry.protocol);
        break;
      case 'scenario': {
        const events = (entry.plan as { lab?: { events?: unknown[] } } | undefined)?.lab?.events;
        if (Array.isArray(events)) s.events = events.length;
        s.step = 'starting Toxiproxy';
        break;
      }
      case 'toxiproxy':
        s.step = 'starting the publisher';
        milestone(`toxiproxy ${entry.version} at ${entry.url}${entry.owned ? '' : ' (already running)'}`);
        break;
      case 'stream':
        if (entry.role === 'consumer') s.consumerStreams.add(entry.stream);
        break;
      case 'proxy':
        if (entry.action === 'create') s.step = 'starting the consumers';
        break;
      case 'process-start': {
        if (entry.role === 'consumer') s.step = `consumer #${entry.incarnation} running`;
        const fault = entry.env?.CHAOSLAB_FAULT;
        milestone(`${who(entry)} started (pid ${entry.pid}${fault ? `, fault ${fault}` : ''})`);
        break;
      }
      case 'process-stopped':
        s.step = `${who(entry)} stopped itself; reading its file`;
        milestone(`${who(entry)} stopped itself (SIGSTOP)`);
        break;
      case 'process-continued':
        s.step = `${who(entry)} running`;
        milestone(`${who(entry)} continued`);
        break;
      case 'process-exit': {
        const how = entry.killedBy
          ? entry.killedBy === 'deadline'
            ? 'killed at the deadline'
            : `killed by the ${entry.killedBy}`
          : entry.signal
            ? `killed by ${entry.signal}`
            : `exited ${entry.code}`;
        if (entry.role === 'consumer') s.step = `consumer #${entry.incarnation} ended; reading its file`;
        milestone(`${who(entry)} ${how} after ${seconds(entry.durationMs)}`);
        break;
      }
      case 'store-read': {
        if (entry.when === 'final') {
          s.step = 'checking the result';
          break;
        }
        const what = s.vocabulary?.describeStore(entry.store) ?? 'read';
        // A lab's own moments (the feed's read at each subscribe) in its words.
        const moment =
          entry.when === 'while-stopped' ? ' while stopped' : entry.when === 'after-exit' ? '' : ` (${s.vocabulary?.readMoments?.[entry.when] ?? entry.when})`;
        milestone(`${who(entry)}'s file${moment}: ${what}`);
        break;
      }
      case 'wire':
        if (entry.kind === 'recv' && !entry.error && s.consumerStreams.has(entry.stream) && s.vocabulary) {
          const { cls, position } = s.vocabulary.classify(entry.line);
          if (cls === s.vocabulary.progress.cls && position !== undefined) s.committed.add(position);
        } else if (entry.kind === 'recv' && entry.error) {
          milestone(`${entry.stream} sent a line that breaks the grammar: ${showLine(entry.line).slice(0, 60)} (${entry.error})`);
        }
        break;
      case 'verdict':
        s.step = 'writing the reports';
        break;
      case 'harness-error':
        milestone(`harness error: ${entry.message}`);
        break;
      case 'seal':
      case 'room':
      case 'leftovers':
        // The firewall's counters, a room's disk use, the uid's leftovers: the verdict says it when they matter.
        break;
      case 'run-end':
        s.step = 'done';
        break;
      default: {
        const type = String(e.type);
        if (type === 'fault') {
          const name = String(e.name ?? e.kind ?? 'fault');
          const label = `${name}${e.kind && e.kind !== name ? ` (${String(e.kind)})` : ''}`;
          const detail = typeof e.detail === 'string' ? ` ${e.detail}` : e.detail !== undefined ? ` ${JSON.stringify(e.detail)}` : '';
          if (e.kind === 'signal') {
            milestone(`fault ${label}:${detail}`);
          } else if (e.action === 'lift') {
            s.faults.delete(name);
            milestone(`fault ${label} lifted`);
          } else {
            s.faults.add(name);
            milestone(`fault ${label} applied${detail}`);
          }
          break;
        }
        const step = typeof e.step === 'string' ? e.step : typeof e.name === 'string' ? e.name : undefined;
        if (step) s.step = `${type} ${step}`;
        const shown = s.unknownShown.get(type) ?? 0;
        s.unknownShown.set(type, shown + 1);
        if (shown < 3) milestone(`${type}${step ? ` ${step}` : ''}`);
      }
    }
  };

  const scenarioStarted = (name: string, at?: { index: number; total: number }): void => {
    if (at) total = Math.max(total, at.total);
    live = { name, startedAt: now(), step: 'starting', faults: new Set(), consumerStreams: new Set(), committed: new Set(), unknownShown: new Map() };
    running.set(name, live);
    if (!quiet && at && at.total > 1 && !tty) print(`[${at.index + 1}/${at.total}] ${inert(name)}`);
    else if (!quiet && !tty) print(`  ${inert(name)}: starting`);
    if (tty) drawStatus();
    const period = options.interval ?? (tty ? 250 : 1000);
    if (period !== false && !quiet && !timer) {
      timer = setInterval(tick, period);
      timer.unref();
    }
  };

  const scenarioFinished = (name: string, result: FinishedRun): ScenarioOutcome => {
    const was = running.get(name);
    const startedAt = was?.startedAt ?? now();
    running.delete(name);
    finished++;
    if (!was || was === live) live = [...running.values()].pop();
    clearStatus();
    const { status, durationMs, headline, lines } = outcomeLines(name, result, now() - startedAt, paint);
    // In a batch, one line per run while it goes (the failures come again in full at the end).
    if (total > 1) print(`${lines[0]}${status === 'pass' ? '' : `  ${clip(headline, Math.max(20, width() - name.length - 30))}`}`);
    else print(`\n${lines.join('\n')}`);
    const outcome: ScenarioOutcome = { name, status, durationMs, reason: status === 'pass' ? '' : headline, runDir: result.runDir, detail: lines };
    outcomes.push(outcome);
    return outcome;
  };

  const finalTable = (given?: ScenarioOutcome[]): void => {
    const rows = given ?? outcomes;
    if (rows.length === 0) return;
    clearStatus();
    const head = ['scenario', 'verdict', 'time', 'reason'];
    const cells = rows.map((r) => [inert(r.name), WORD[r.status] ?? inert(String(r.status)), seconds(r.durationMs), inert(r.reason) || '—']);
    const w = [0, 1, 2].map((i) => Math.max(head[i]!.length, ...cells.map((c) => c[i]!.length)));
    const reasonRoom = Math.max(20, width() - w[0]! - w[1]! - w[2]! - 8);
    const fmt = (c: string[], colorIt: boolean): string => {
      const verdict = c[1]!.padEnd(w[1]!);
      const status = rows.find((r) => WORD[r.status] === c[1])?.status;
      return `${c[0]!.padEnd(w[0]!)}  ${colorIt && status ? paint(COLOR[status], verdict) : verdict}  ${c[2]!.padStart(w[2]!)}  ${clip(c[3]!, reasonRoom)}`;
    };
    const lines = ['', fmt(head, false), ...cells.map((c) => fmt(c, true))];
    const passed = rows.filter((r) => r.status === 'pass').length;
    const skipped = rows.filter((r) => r.status === 'skipped').length;
    if (rows.length > 1) lines.push(`${passed}/${rows.length} passed${skipped ? `, ${skipped} skipped` : ''}`);
    const dirs = rows.map((r) => r.runDir).filter((d): d is string => Boolean(d));
    const last = dirs[dirs.length - 1];
    if (last) {
      const parent = dirname(resolve(last));
      const latest = latestTarget(parent) === resolve(last) ? join(parent, 'latest') : undefined;
      if (dirs.length === 1) lines.push(`report: ${show(join(last, 'report.html'))}${latest ? `  (also ${show(latest)}/report.html)` : ''}`);
      else {
        lines.push('reports:');
        for (const r of rows) if (r.runDir) lines.push(`  ${inert(r.name).padEnd(w[0]!)}  ${show(join(r.runDir, 'report.html'))}`);
        if (latest) lines.push(`  latest: ${show(latest)}`);
      }
    }
    out.write(`${lines.join('\n')}\n`);
    lastOutputAt = now();
  };

  const interrupted = (signal: string): void => {
    if (statusDrawn) out.write('\n');
    statusDrawn = false;
    print(
      `chaoslab: ${signal}: stopping — nothing new starts, running scenarios stop and their reports are written (${signal === 'SIGINT' ? 'Ctrl-C' : signal} again: stop at once)`,
    );
  };

  const batchFinished = (rows: ScenarioOutcome[], batch: BatchView, opts: { verbose?: boolean } = {}): void => {
    clearStatus();
    const lines: string[] = [];
    // Skipped runs did not fail: listed apart, with the reason, and they colour nothing.
    const bad = rows.filter((r) => r.status !== 'pass' && r.status !== 'skipped');
    const skipped = rows.filter((r) => r.status === 'skipped');
    if (skipped.length)
      lines.push('', `Skipped (${skipped.length}):`, ...skipped.map((r) => `  ${paint(COLOR.skipped, WORD.skipped)}  ${inert(r.name)}: ${inert(r.reason)}`));
    if (bad.length) {
      lines.push('', `Did not pass (${bad.length}):`);
      for (const r of bad)
        lines.push(
          '',
          ...(r.detail ?? [`${paint(COLOR[r.status] ?? COLOR.error, WORD[r.status] ?? inert(String(r.status)))}  ${inert(r.name)}`]),
          ...(r.runDir ? [`  report: ${show(join(r.runDir, 'report.html'))}`] : []),
        );
    }
    if (batch.notStarted?.length) lines.push('', `Not started (interrupted): ${batch.notStarted.map((n) => inert(n.label)).join(', ')}`);
    if (lines.length) out.write(`${lines.join('\n')}\n`);
    if (opts.verbose) finalTable(rows);
    const worst = bad[0]?.status;
    out.write(`\n${paint(worst ? (COLOR[worst] ?? COLOR.error) : COLOR.pass, inert(totalsLine(batch)))} — ${show(join(batch.dir, 'index.html'))}\n`);
    lastOutputAt = now();
  };

  const close = (): void => {
    if (timer) clearInterval(timer);
    timer = undefined;
    clearStatus();
  };

  return { scenarioStarted, onJournal, scenarioFinished, finalTable, batchFinished, interrupted, tick, close };
}
