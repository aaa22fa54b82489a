// How a run ends, and what its end is called. One termination signal (RunContext.signal) is
// aborted by an interrupt (Ctrl-C), by something that makes the run impossible to judge, and at
// the end of the run whatever ended it; a lab starts no process once it is aborted. An interrupt
// before the verdict makes the run `interrupted`, whatever failed after it.

import { onAbort } from '../base/interrupt.js';
import type { JournalEvent, JournalWriter } from '../record/journal.js';
import type { RunStatus } from '../report/view.js';
import type { Verdict } from '../findings/verdict.js';

export interface Executed {
  status: RunStatus;
  verdict?: Verdict;
  error?: string;
}

/** The run met something that leaves it without a verdict (a stray connection, a fault that could not be applied). */
export class CannotJudge extends Error {
  override name = 'CannotJudge';
}

export class RunEnding {
  private readonly ending = new AbortController();
  private interruptedAt: number | undefined;
  /** Why the run cannot be judged, journaled when it happened. */
  unjudgeable: string | undefined;
  private readonly forget: (() => void)[];

  constructor(
    private readonly interrupt: AbortSignal | undefined,
    private readonly journal: JournalWriter,
    private readonly clock: () => number,
  ) {
    this.forget = [onAbort(interrupt, () => this.interrupted()), onAbort(interrupt, () => this.ending.abort(interrupt?.reason))];
  }

  /** The run's one termination signal, for the lab. */
  get signal(): AbortSignal {
    return this.ending.signal;
  }

  /** Whether an interrupt came (and when it first was seen). */
  interrupted(): boolean {
    if (this.interrupt?.aborted) this.interruptedAt ??= this.clock();
    return this.interruptedAt !== undefined;
  }

  /** Something makes the run impossible to judge: journaled at once, and the run is ended. */
  readonly cannotJudge = (reason: string): void => {
    if (this.ending.signal.aborted) return;
    this.unjudgeable = reason;
    this.journal.write({ type: 'harness-error', message: reason });
    this.ending.abort(new Error(reason));
  };

  /** A verdict known before the run's end (harness/judge/other-lab.ts): the run is stopped there and judged by it. */
  decided: Verdict | undefined;

  /** Ends the run at once with `verdict`: its processes are stopped, no checker is asked. */
  readonly decide = (verdict: Verdict): void => {
    if (this.ending.signal.aborted) return;
    this.decided = verdict;
    this.ending.abort(new Error(`verdict reached early: ${verdict.headline}`));
  };

  /** Throws what keeps the run from its verdict: an interrupt, or a reason it cannot be judged. */
  throwIfEnded(what: string): void {
    if (this.interrupted()) throw new Error(what);
    if (this.unjudgeable !== undefined) throw new CannotJudge(this.unjudgeable);
  }

  /** What a run that threw ends as. */
  outcomeOf(caught: unknown): Executed {
    if (this.unjudgeable !== undefined && !this.interrupted()) {
      // Journaled when it happened, first: what failed after it is its consequence.
      return { status: 'error', error: this.unjudgeable };
    }
    // Whatever failed after the stop failed because of it: no harness error, no verdict.
    if (this.interrupted()) return { status: 'interrupted' };
    const error = caught instanceof Error ? caught.message : String(caught);
    this.journal.write({ type: 'harness-error', message: error });
    return { status: 'error', error };
  }

  /** Ends the termination signal, whatever ended the run: nothing of it may start after this. */
  end(): void {
    for (const forget of this.forget) forget();
    this.ending.abort(new Error('the run ended'));
  }

  runEndEntry(status: RunStatus): JournalEvent {
    return {
      type: 'run-end',
      status,
      ...(status === 'interrupted' ? { interrupted: { by: String(this.interrupt?.reason ?? 'an interrupt'), at: this.interruptedAt ?? this.clock() } } : {}),
    };
  }
}
