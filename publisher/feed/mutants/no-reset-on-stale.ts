#!/usr/bin/env node
// Server mutant "no-reset-on-stale": it never asks whether retention deleted rows above where a
// connection reads, so a cursor older than the retention window is answered with a replay of
// what is left above it instead of `reset stale-cursor`. The consumer gets the rows retention
// kept and believes it holds the whole history: a partial history served as complete.
//
// It breaks this sentence of the server contract (section 3): "a cursor older than the window:
// retention deleted a followed account's row above it … `reset stale-cursor`, then close. Never
// serve a partial history as if it were complete" — the seed's second scene (3 hours away, a
// 1-hour replay window). A cursor of another chain or an unknown hash is still reset.
//
// The one step replaced is the outbox reader's retention question, for the subscribe and for
// the catch-up alike (as the Python twin replaces its outbox). Replacing only the subscribe's
// answer left the catch-up's own check in place: on a busy machine a block whose retention
// deleted a row between the two reads turned the replay into the right reset, and the mutant
// passed its killer.
//
// Killed by: feed-server-stale-cursor — a probe away longer than the window resubscribes with its
// old cursor; the wire check finds events where `reset stale-cursor` was due.
// Python twin: no-reset-on-stale.py.

import { OutboxReader } from '../outbox/reader.js';
import { runServer } from '../server/program.js';

// BUG: retention is never consulted; whatever it left above the cursor is served as the history.
OutboxReader.prototype.prunedAfter = () => undefined;

await runServer();
