// What a lab plugs into the harness (as a workload does in Maelstrom). The core — CLI, runner
// skeleton, supervisor, Toxiproxy, faults, journal, batches, report shell — knows labs only
// through this interface; `harness/labs/registry.ts` is the one module that imports them.
//
// A lab supplies: its part of the scenario file (schema, semantic checks, the resolved plan), the
// fault trigger points its publisher fires, its process model (how the publisher, the control and
// the consumer processes are started, restarted and stopped), its checker, and the vocabulary the
// reports need to speak its language.

import type { TranscriptEntry } from '../../publisher/transcript.js';
import type { ChaosModel } from './chaos-model.js';
import type { FaultEngine } from '../faults/engine.js';
import type { FaultTarget } from '../faults/effect.js';
import type { JournalWriter } from '../record/journal.js';
import type { StoreGuard } from '../sandbox/store-file.js';
import type { ProcessRunner } from '../processes/processes.js';
import type { SealedServer } from '../processes/server-seal.js';
import type { RawProblem } from '../scenario/problems.js';
import type { PatternMessage } from '../scenario/schema-problems.js';
import type { CoreFile, LabSchemaPart } from '../scenario/schema.js';
import type { FaultPointSpec } from '../scenario/fault-points.js';
import type { ConsumerSignature } from '../judge/other-lab.js';
import type { Scenario } from '../scenario/types.js';

export type { FaultPointSpec };
import type { HostPort, ProxyHandle } from '../toxiproxy/adapter.js';
import type { Figure, ProcessRef, Verdict } from '../findings/verdict.js';

/** The lab's part of loading a scenario. `file` has passed the schema. */
export interface LabScenario<Plan> {
  schema: LabSchemaPart;
  patternMessage?: PatternMessage;
  /** How many positions the script has (seq-valued points must be below it). */
  positions(file: CoreFile & Record<string, unknown>): number;
  /** Checks the schema cannot express, for the lab's own keys. */
  semanticProblems(file: CoreFile & Record<string, unknown>): RawProblem[];
  /** The lab's part of the run plan, every default filled; durations are already scaled. */
  resolve(file: CoreFile & Record<string, unknown>, timeScale: number): Plan;
}

/** What the runner hands a lab for one run. */
export interface RunContext<Plan> {
  scenario: Scenario<Plan>;
  runId: string;
  runDir: string;
  /** Command line of the consumer under test, and of the trusted control consumer. */
  consumerCommand: string;
  controlCommand: string;
  /** In a scenario that tests the lab's push server (`Lab.server`): the server's command line (`--server`, else the lab's reference). */
  serverCommand?: string;
  /**
   * A sealed run that tests a server: how its server processes are sealed (their own uid and
   * room, the port they serve, what they may only read). Undefined when unsealed.
   */
  serverSeal?: SealedServer;
  journal: JournalWriter;
  /** Milliseconds since the run started (the journal's clock). */
  clock(): number;
  log(line: string): void;
  processes: ProcessRunner;
  /**
   * The run's termination: aborted when the run ends, however it ends (its end, an error, an
   * interrupt, something that leaves it without a verdict). A lab's loops check it before each
   * process they start and race every await that can hang against it (`untilEnded`).
   */
  signal: AbortSignal;
  /**
   * A consumer process's room: a folder of its own in the run folder, for its database and
   * nothing else (the journal, the control's database and the reports stay the harness's).
   */
  room(name: string): string;
  /**
   * How the consumer's store is read in this run (harness/sandbox/store-file.ts): a regular file
   * directly in its room, within the size limit, sealed as its uid. The control's store is the
   * harness's own and is read without it.
   */
  consumerStore: StoreGuard;
  /** The publisher's transcript sink: journals it with bounds; `owner` names the process behind each new connection. */
  wire(ownerOf: (entry: TranscriptEntry) => ProcessRef | undefined): (entry: TranscriptEntry) => void;
  /** A Toxiproxy proxy in front of `upstream`, journaled, removed when the run ends. */
  proxy(role: string, upstream: HostPort): Promise<ProxyHandle>;
  /** The engine for the scenario's faults, aimed at `target`; everything is lifted when the run ends. */
  faults(target: FaultTarget): FaultEngine;
  /** Registers something to undo when the run ends (a publisher to close), newest first. */
  defer(undo: () => Promise<void> | void): void;
}

export interface Vocabulary {
  /** Kinds of wire line, in legend order, with their colour. */
  lineClasses: { name: string; color: string; legend: string }[];
  /**
   * A wire line's kind (one of `lineClasses`, or `other`) and the position it names, if any;
   * `key`, where a position is coarser than what findings name (a block holds many cursors), the
   * exact identity a finding's `subject.cursors` is matched against for highlights.
   */
  classify(line: string): { cls: string; position?: number; key?: string };
  /**
   * Why a line breaks the protocol's grammar, in a few words, or undefined for a valid line.
   * `send` lines went from the publisher to a consumer, `recv` lines the other way. Reports draw
   * broken lines in the error colour; only the lab knows its grammar, so the core asks it.
   * `cut`: characters the journal left out of this line (harness/record/wire-journal.ts), so that a
   * long valid line cut short is not taken for a broken one.
   */
  broken?(line: string, direction: 'send' | 'recv', cut?: number): string | undefined;
  /**
   * A fresh judge of how telling each line is, fed every wire line in order: `routine` lines
   * (in-order traffic) collapse in long diagrams, `landmark` lines always show.
   */
  newRanker(): (line: { stream: string; conn: number; direction: 'send' | 'recv'; cls: string; position?: number }) => 'routine' | 'irregular' | 'landmark';
  /** A store as read by the harness, in a few words: "last 9, total 12, 10 rows". */
  describeStore(store: unknown): string;
  /**
   * The kind of line whose distinct keys (else positions) count the consumer's progress, and the
   * word for it; `direction` is whose line it is: `recv` (default) from the consumer, `send` to it.
   */
  progress: { cls: string; word: string; direction?: 'send' | 'recv' };
  /**
   * A fresh labeller, fed every wire line in order: the few words the diagram writes on a line's
   * arrow ("reset stale-cursor", "revoke 40:0…42:3, 3 events"), or undefined for the line itself.
   * The tooltip always keeps the exact bytes. For protocols whose lines are too long to read
   * clipped (JSON frames).
   */
  newLabeller?(): (line: { stream: string; direction: 'send' | 'recv'; line: string; cls: string }) => string | undefined;
  /** Words for the moments a lab reads a store at (`store-read.when`) beyond the core's, e.g. `at-subscribe`: "read at subscribe". */
  readMoments?: Record<string, string>;
  /** The word for a collapsed band's range of positions, e.g. "blocks" (default: none, "EVENT 100…9000"). */
  positionWord?: string;
  /**
   * A figure of the verdict as SVG, drawn by the lab that made it (every text in it escaped), or
   * undefined when it is not one of the lab's: report.html shows it, the core never reads its data.
   */
  drawFigure?(figure: Figure): string | undefined;
}

/**
 * A lab whose scenarios may test its push server instead of a consumer: the server runs as an OS
 * process under test (`--server CMD`), its clients are the lab's reference consumers.
 */
export interface LabServer<Plan> {
  /** The reference server: the default server under test. */
  referenceCommand: string;
  /** Its server mutants: mutant, killer scenario, the bug in one sentence. */
  mutantIndex: string;
  /** The server scenario every server mutant must pass (a near miss), as `happyPath` is for consumers. */
  happyPath: string;
  /** Random server fault schedules for `chaoslab chaos --server`, loaded only when that command runs. */
  chaos?: () => Promise<ChaosModel>;
  /** Whether this scenario's program under test is the server, not the consumer. */
  testsServer(plan: Plan): boolean;
}

export interface Lab<Plan = unknown> {
  name: string;
  /** One line for `chaoslab list` and the docs. */
  title: string;
  scenario: LabScenario<Plan>;
  faultPoints: Record<string, FaultPointSpec>;
  /** The lab's process model: starts the publisher, the control and the consumer processes, drives them to the end. */
  run(ctx: RunContext<Plan>): Promise<void>;
  /**
   * The verdict, from what the harness itself saw (`ctx.journal.entries`) and the stores, read
   * independently. May be async, so that a lab imports its checkers only for a run (and can fetch
   * them while the run goes on).
   */
  check(ctx: RunContext<Plan>): Verdict | Promise<Verdict>;
  vocabulary: Vocabulary;
  /**
   * The real time a run of this plan lasts by its script alone, in ms, where the lab runs at a set
   * pace (feed: blocks at a period, the storm's rounds); absent or 0: it is bound by the CPU.
   * Batches start their longest runs first, so that no long run starts last beside idle jobs.
   */
  scriptMs?(plan: Plan): number;
  /** The largest consumer store (file + WAL) the checker reads; default DEFAULT_STORE_LIMIT_BYTES (64 MiB); `--store-limit` overrides it. */
  storeLimitBytes?: number;
  /**
   * The lab a scenario file without `protocol` speaks (format v1 had one lab), and so the first in
   * the registry's order: the default of commands that need one lab. At most one lab says so.
   */
  isDefault?: boolean;
  /** The folder of its scenario files (absolute): `scenarios/<lab>/` for a lab of the catalogue. */
  scenariosDir: string;
  /**
   * The folder of its consumers (absolute): `consumer/<lab>/`, mutants in its `mutants/`, run as
   * `python3 <folder>/mutants/<name>.py` and `node dist/<folder>/mutants/<name>.js` from the project root.
   */
  consumerDir: string;
  /** The reference consumer: the default consumer under test, and the control. */
  referenceCommand: string;
  /** Its mutant index: `<consumerDir>/mutants/index.yaml`. */
  mutantIndex: string;
  /** The scenario every mutant must pass (a near miss). */
  happyPath: string;
  /**
   * How its consumers show themselves (their first line, their variables): a consumer run against
   * another lab's scenario is named for what it is, and its run stopped (harness/judge/other-lab.ts).
   */
  consumerSignature?: ConsumerSignature;
  /** Its push server under test, when some of its scenarios test a server. */
  server?: LabServer<Plan>;
  /** Random fault schedules for `chaoslab chaos`, loaded only when that command runs (fast-check is large). */
  chaos?: () => Promise<ChaosModel>;
}

/** Erases a lab's plan type, so labs of different plans sit in one registry. */
export const defineLab = <Plan>(lab: Lab<Plan>): Lab => lab as unknown as Lab;
