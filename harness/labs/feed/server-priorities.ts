// The feed lab's push-server finding priorities: which finding leads a server run's verdict and
// headline (findings/priority.ts), for the lone server (server/check.ts) and a scene
// (server/scene/check-scene.ts). A cause names the server author's mistake and the server
// contract section it breaks (publisher/feed/CONTRACT.md); a consequence is what any of several
// causes leaves in a probe's store (the probe is the harness's own reference consumer, so a wrong
// store there is the server's doing, never a consumer's mistake). Codes not listed are symptoms
// (what was seen: a crash, a wrong first frame, a lag past its bound), in the checker's order.

import { CAUSE, CONSEQUENCE, type FindingPriorities } from '../../findings/priority.js';

export const SERVER_PRIORITIES: FindingPriorities = {
  // Events lost between the snapshot and following the outbox (§3), and a bad client's frame
  // that ended the server (§5): whatever else a run shows follows from them.
  'lost-in-snapshot-race': CAUSE + 1,
  'bad-client-crashed-server': CAUSE + 1,
  // A full queue kept growing without a reset (§4): before the memory it cost.
  'no-slow-consumer-reset': CAUSE + 1,
  // §3: what a subscribe is answered with, and in which order rows go.
  'partial-history': CAUSE,
  'revoke-wrong-point': CAUSE,
  'event-order': CAUSE,
  'replay-gap': CAUSE,
  'reset-not-due': CAUSE,
  // §4: a full queue is dropped whole with a reset, which is the last frame.
  'dropped-silently': CAUSE,
  'frames-after-reset': CAUSE,
  'client-wrong-reset': CAUSE,
  'never-reader-kept': CAUSE,
  // §5: heartbeats, the idle close, bad frames.
  'no-ping': CAUSE,
  'ping-late': CAUSE,
  'idle-not-closed': CAUSE,
  'idle-closed-early': CAUSE,
  'reset-on-idle': CAUSE,
  'ping-unanswered': CAUSE,
  'pong-wrong-id': CAUSE,
  'heard-client-closed': CAUSE,
  'sent-after-bad-frame': CAUSE,
  'bad-client-not-closed': CAUSE,
  // §1 and §6: the process.
  'server-not-listening': CAUSE,
  'server-hook-not-fired': CAUSE,
  'server-sigterm-ignored': CAUSE,
  'server-sigterm-status': CAUSE,
  'server-sigterm-slow': CAUSE,
  'no-shutdown-reset': CAUSE,
  // A probe's store at the end, a subscriber's or the crowd's end: what the causes above leave.
  'no-snapshot': CONSEQUENCE,
  'missing-events': CONSEQUENCE,
  'wrong-balance': CONSEQUENCE,
  'applied-twice': CONSEQUENCE,
  'revoke-kept-balance': CONSEQUENCE,
  'imprecise-balance': CONSEQUENCE,
  'wrong-cursor': CONSEQUENCE,
  'wrong-block-hash': CONSEQUENCE,
  'wrong-content': CONSEQUENCE,
  'revoked-kept': CONSEQUENCE,
  'below-snapshot': CONSEQUENCE,
  'foreign-events': CONSEQUENCE,
  'subscriber-incomplete': CONSEQUENCE,
  'crowd-behind': CONSEQUENCE,
};
