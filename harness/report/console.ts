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

import { relative } from 'node:path';
import type { JournalEntry } from '../record/journal.js';
import { colorEnabled } from './color.js';
import type { BatchView } from './batch-view.js';
import { seconds } from '../text/format.js';
import { terminalText as inert } from '../text/inert.js';
import { followEntry, type Live, newLive, statusText } from './console-live.js';
import {
  batchEndLines,
  batchTotalsLine,
  type ConsoleLook,
  clip,
  type FinishedRun,
  finalTableLines,
  outcomeLines,
  type ScenarioOutcome,
} from './console-lines.js';

export { type FinishedRun, outcomeLines, type ScenarioOutcome, stderrLines } from './console-lines.js';

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
  /** How a path is printed, instead (the reports folder as the user gave it: base/paths.ts's reportsPathShower). */
  showPath?: (path: string) => string;
  /** Default: on a terminal unless NO_COLOR is set, and wherever FORCE_COLOR is (report/color.ts). */
  color?: boolean;
  /** Milliseconds clock (default Date.now). */
  now?: () => number;
  /** Heartbeat period in ms (default 250 on a terminal, 1000 otherwise); false: no timer, call tick(). */
  interval?: number | false;
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

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export function createConsoleReporter(options: ConsoleReporterOptions): ConsoleReporter {
  const reporter = new LiveConsole(options);
  const { scenarioStarted, onJournal, scenarioFinished, finalTable, batchFinished, interrupted, tick, close } = reporter;
  return { scenarioStarted, onJournal, scenarioFinished, finalTable, batchFinished, interrupted, tick, close };
}

/** The console's state: the scenarios running, the status line drawn or not, the heartbeat. Its methods are bound (arrow properties). */
class LiveConsole implements ConsoleReporter {
  private readonly out: ConsoleOut;
  private readonly quiet: boolean;
  private readonly tty: boolean;
  private readonly now: () => number;
  private readonly look: ConsoleLook;
  /** Scenarios running now (several with --jobs); `live` is the newest, the one journal entries belong to. */
  private readonly running = new Map<string, Live>();
  private live: Live | undefined;
  private total = 0;
  private finished = 0;
  private statusDrawn = false;
  private lastOutputAt: number;
  private frame = 0;
  private readonly outcomes: ScenarioOutcome[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: ConsoleReporterOptions) {
    const { out } = options;
    this.out = out;
    this.quiet = options.quiet;
    this.tty = options.tty && !options.quiet;
    this.now = options.now ?? Date.now;
    const cwd = options.cwd ?? process.cwd();
    const color = options.color ?? colorEnabled(options.tty);
    this.look = {
      paint: (code, text) => (color ? `\x1b[${code}m${text}\x1b[0m` : text),
      width: () => Math.max(40, (out.columns ?? 0) || 120),
      show: (path) => inert(options.showPath ? options.showPath(path) : relative(cwd, path) || '.'),
    };
    this.lastOutputAt = this.now();
  }

  private clearStatus(): void {
    if (this.statusDrawn) this.out.write('\r\x1b[2K');
    this.statusDrawn = false;
  }

  private print(text: string): void {
    this.clearStatus();
    this.out.write(`${text}\n`);
    this.lastOutputAt = this.now();
    if (this.tty && this.live) this.drawStatus();
  }

  // A batch shows a line per run; each run's milestones only with --verbose.
  private chatty(): boolean {
    return this.total < 2 || this.options.verbose === true;
  }

  private readonly milestone = (text: string): void => {
    const live = this.live;
    if (this.quiet || !live || !this.chatty()) return;
    this.print(`  ${inert(live.name)} [${seconds(this.now() - live.startedAt)}] ${inert(text)}`);
  };

  private progressBar(): string {
    if (this.total < 2) return '';
    const cells = 16;
    const done = Math.round((Math.min(this.finished, this.total) / this.total) * cells);
    const others = this.running.size > 1 ? ` (${this.running.size} running)` : '';
    return `[${'█'.repeat(done)}${'░'.repeat(cells - done)}] ${this.finished}/${this.total} done${others} · `;
  }

  private drawStatus(): void {
    const live = this.live;
    if (!this.tty || !live) return;
    const spinner = SPINNER[this.frame++ % SPINNER.length];
    const line = `${spinner} ${this.progressBar()}${live.name} ${((this.now() - live.startedAt) / 1000).toFixed(1)} s · ${statusText(live)}`;
    this.out.write(`\r\x1b[2K${clip(inert(line), this.look.width() - 1)}`);
    this.statusDrawn = true;
  }

  readonly tick = (): void => {
    const live = this.live;
    if (!live || this.quiet) return;
    if (this.tty) this.drawStatus();
    else if (this.chatty() && this.now() - this.lastOutputAt >= 1000)
      this.print(`  ${inert(live.name)} [${seconds(this.now() - live.startedAt)}] still ${inert(statusText(live))}`);
  };

  readonly onJournal = (entry: JournalEntry): void => {
    if (this.live) followEntry(this.live, entry, this.milestone);
  };

  readonly scenarioStarted = (name: string, at?: { index: number; total: number }): void => {
    if (at) this.total = Math.max(this.total, at.total);
    this.live = newLive(name, this.now());
    this.running.set(name, this.live);
    if (!this.quiet && at && at.total > 1 && !this.tty) this.print(`[${at.index + 1}/${at.total}] ${inert(name)}`);
    else if (!this.quiet && !this.tty) this.print(`  ${inert(name)}: starting`);
    if (this.tty) this.drawStatus();
    const period = this.options.interval ?? (this.tty ? 250 : 1000);
    if (period !== false && !this.quiet && !this.timer) {
      this.timer = setInterval(this.tick, period);
      this.timer.unref();
    }
  };

  readonly scenarioFinished = (name: string, result: FinishedRun): ScenarioOutcome => {
    const was = this.running.get(name);
    const startedAt = was?.startedAt ?? this.now();
    this.running.delete(name);
    this.finished++;
    if (!was || was === this.live) this.live = [...this.running.values()].pop();
    this.clearStatus();
    const { status, durationMs, headline, lines } = outcomeLines(name, result, this.now() - startedAt, this.look.paint);
    // In a batch, one line per run while it goes (the failures come again in full at the end).
    if (this.total > 1) this.print(`${lines[0]}${status === 'pass' ? '' : `  ${clip(headline, Math.max(20, this.look.width() - name.length - 30))}`}`);
    else this.print(`\n${lines.join('\n')}`);
    const outcome: ScenarioOutcome = { name, status, durationMs, reason: status === 'pass' ? '' : headline, runDir: result.runDir, detail: lines };
    this.outcomes.push(outcome);
    return outcome;
  };

  readonly finalTable = (given?: ScenarioOutcome[]): void => {
    const rows = given ?? this.outcomes;
    if (rows.length === 0) return;
    this.clearStatus();
    this.out.write(`${finalTableLines(rows, this.look).join('\n')}\n`);
    this.lastOutputAt = this.now();
  };

  readonly interrupted = (signal: string): void => {
    if (this.statusDrawn) this.out.write('\n');
    this.statusDrawn = false;
    this.print(
      `chaoslab: ${signal}: stopping — nothing new starts, running scenarios stop and their reports are written (${signal === 'SIGINT' ? 'Ctrl-C' : signal} again: stop at once)`,
    );
  };

  readonly batchFinished = (rows: ScenarioOutcome[], batch: BatchView, opts: { verbose?: boolean } = {}): void => {
    this.clearStatus();
    const lines = batchEndLines(rows, batch, this.look);
    if (lines.length) this.out.write(`${lines.join('\n')}\n`);
    if (opts.verbose) this.finalTable(rows);
    this.out.write(`\n${batchTotalsLine(rows, batch, this.look)}\n`);
    this.lastOutputAt = this.now();
  };

  readonly close = (): void => {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.clearStatus();
  };
}
