// A submission's platform files kept current while it is graded: written before the first run
// (every test "not run to its end"), again after each run finishes, and last with the final
// scores. A platform that stops the grader at its time limit still finds a whole, valid
// results.json with every test that finished (platforms.ts writes atomically).

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Sealing } from './class/class-data.js';
import type { GradeData } from './platforms/grade-data.js';
import { writePlatformFiles } from './platforms/platforms.js';
import { chaoslabVersion, type Provenance, type ReplayTarget, replayCommand, scenarioSeeds, scenarioSetHash } from './provenance.js';
import { type Rubric, rubricFiles } from './rubric.js';
import type { RunOutcome, SubmissionScore } from './score.js';
import { runsStillWanted, scoreSubmission } from './score.js';
import type { Scenario } from '../scenario/types.js';

export interface ProgressSetup {
  rubric: Rubric;
  scenarios: ReadonlyMap<string, Scenario>;
  sealing: Sealing;
  /** The grading's options that change a verdict, as command-line words (replay commands repeat them). */
  replayOptions: readonly string[];
}

export type ProgressSource = { name: string; folder: string } | { name: string; command: string; cwd: string };

const BUILD_LOG_TAIL_LINES = 40;

export class Progress {
  private readonly started = Date.now();
  private readonly outcomes = new Map<string, RunOutcome[]>();
  private submissionHash: string | undefined;
  private how = 'not started yet';

  constructor(
    private readonly setup: ProgressSetup,
    private readonly source: ProgressSource,
    private readonly studentDir: string,
    private readonly staffDir: string,
  ) {}

  /** Before any run: every test there, none run yet. */
  begin(): void {
    this.write(
      scoreSubmission(this.source.name, this.setup.rubric, new Map(), this.how),
      this.setup.rubric.tests.map((t) => t.name),
    );
  }

  /** The submission's files, hashed from the grader's copy before its build (provenance.ts). */
  setSubmissionHash(hash: string): void {
    this.submissionHash = hash;
  }

  /** One run of `test` finished: the files again, with every test whose runs are all done. */
  finished(test: string, outcome: RunOutcome, how: string): void {
    this.how = how;
    this.outcomes.set(test, [...(this.outcomes.get(test) ?? []), outcome]);
    // Still wanting runs: the first k, or re-runs of a failure, or a replacement for a harness error.
    const pending = this.setup.rubric.tests.filter((t) => runsStillWanted(t, this.outcomes.get(t.name) ?? []) > 0).map((t) => t.name);
    this.write(scoreSubmission(this.source.name, this.setup.rubric, this.outcomes, how), pending);
  }

  /** The final scores, with their provenance: written, and returned for the class outputs. */
  end(score: SubmissionScore): SubmissionScore {
    const final = this.withProvenance(score);
    this.write(final, []);
    return final;
  }

  private write(score: SubmissionScore, pending: readonly string[]): void {
    const data: GradeData = {
      score: this.withProvenance(score),
      rubric: this.setup.rubric,
      sealing: this.setup.sealing,
      executionSeconds: (Date.now() - this.started) / 1000,
      pending,
      ...this.buildLog(),
    };
    writePlatformFiles(this.studentDir, this.staffDir, data);
  }

  private withProvenance(score: SubmissionScore): SubmissionScore {
    const { rubric, scenarios, replayOptions } = this.setup;
    const target: ReplayTarget =
      'folder' in this.source
        ? { classDir: dirname(resolve(this.source.folder)), name: this.source.name }
        : { command: this.source.command, cwd: this.source.cwd, name: this.source.name };
    const provenance: Provenance = {
      chaoslab: version(),
      lab: rubric.lab,
      scenarioSetHash: scenarioSetHash(rubric, scenarios),
      ...(this.submissionHash ? { submissionHash: this.submissionHash } : {}),
      seeds: Object.fromEntries(rubric.tests.map((t) => [t.name, scenarios.has(t.name) ? scenarioSeeds(scenarios.get(t.name)!) : []])),
      replay: replayCommand(target, rubricFiles(rubric), replayOptions),
    };
    return {
      ...score,
      provenance,
      scenarios: score.scenarios.map((s) => ({ ...s, replay: replayCommand(target, rubricFiles(rubric), replayOptions, s.name) })),
    };
  }

  private buildLog(): Pick<GradeData, 'buildLog'> {
    const path = join(this.studentDir, 'build.log');
    if (!existsSync(path)) return {};
    const tail = readFileSync(path, 'utf8').split('\n').slice(-BUILD_LOG_TAIL_LINES).join('\n');
    return { buildLog: { path, tail } };
  }
}

let cachedVersion: string | undefined;
/** Asked of git once per grading. */
const version = (): string => (cachedVersion ??= chaoslabVersion());
