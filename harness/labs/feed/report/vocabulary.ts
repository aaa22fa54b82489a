// How the reports speak the feed protocol: the kinds of NDJSON frame and their colours, a frame's
// position (the block number of its cursor), which traffic is routine (events sent in chain
// order, heartbeats), and a store in a few words.

import type { Vocabulary } from '../../../lab-api/lab.js';
import { frameBreak } from '../check/grammar.js';
import { newFeedLabeller, stringMember } from './labels.js';
import { describeView, viewOf } from '../check/state.js';
import type { FeedStoreSnapshot } from '../check/store-reader.js';
import { positionOf } from './words.js';
import { drawStormFigure } from '../storm/figure.js';
import { drawMemoryFigure } from './memory-figure.js';
import { drawLagFigure } from './lag-plot.js';

const OPS = ['subscribe', 'snapshot', 'event', 'revoke', 'reset', 'ping', 'pong'] as const;
const OP_SET = new Set<string>(OPS);

/** The cursor member a frame is positioned by. */
const POSITION_MEMBER: Record<string, string> = { event: 'cursor', snapshot: 'cursor', subscribe: 'cursor', revoke: 'fromCursor' };

export const feedVocabulary: Vocabulary = {
  drawFigure: (figure) => drawStormFigure(figure) ?? drawMemoryFigure(figure) ?? drawLagFigure(figure),
  lineClasses: [
    { name: 'subscribe', color: '#7a2fa8', legend: 'subscribe' },
    { name: 'snapshot', color: '#0f7c8c', legend: 'snapshot' },
    { name: 'event', color: '#1f5fbf', legend: 'event' },
    { name: 'revoke', color: '#c26a00', legend: 'revoke' },
    { name: 'reset', color: '#c0162b', legend: 'reset' },
    { name: 'ping', color: '#8a8a8a', legend: 'ping' },
    { name: 'pong', color: '#4f9a5f', legend: 'pong' },
  ],

  classify(line) {
    const op = stringMember(line, 'op');
    if (op === undefined || !OP_SET.has(op)) return { cls: 'other' };
    const member = POSITION_MEMBER[op];
    const cursor = member === undefined ? undefined : stringMember(line, member);
    const position = positionOf(cursor);
    // The block is the position (bands read "event blocks 9…12"); the cursor is what findings name.
    return position === undefined ? { cls: op } : { cls: op, position, key: cursor! };
  },

  broken: frameBreak,

  newRanker() {
    const highestSent = new Map<string, number>();
    return ({ stream, direction, cls, position }) => {
      if (cls === 'ping' || cls === 'pong') return 'routine';
      if (cls === 'event' && direction === 'send') {
        if (position === undefined) return 'irregular';
        // In chain order (the same block or a later one): routine; a resend, a replay or a new branch: worth seeing.
        const highest = highestSent.get(stream);
        if (highest !== undefined && position < highest) return 'irregular';
        highestSent.set(stream, position);
        return 'routine';
      }
      if (cls === 'subscribe' || cls === 'snapshot' || cls === 'revoke' || cls === 'reset' || cls === 'other') return 'landmark';
      return 'irregular'; // an event the consumer sent: odd
    };
  },

  describeStore(raw) {
    const store = (raw ?? {}) as Partial<FeedStoreSnapshot>;
    if (!store.exists) return 'no file';
    if (store.refused) return `not read: ${store.refused.kind}`;
    if (store.error) return `unreadable (${store.error})`;
    if (!Array.isArray(store.state) || !Array.isArray(store.events) || !Array.isArray(store.balances)) return 'not a feed store read';
    return describeView(viewOf(store as FeedStoreSnapshot));
  },

  // A feed consumer acknowledges nothing, and resuming says little (most runs subscribe once): its
  // progress on the wire is the events the server delivered to it, each cursor once.
  progress: { cls: 'event', word: 'events delivered', direction: 'send' },

  newLabeller: newFeedLabeller,
  readMoments: { 'at-subscribe': 'read at subscribe', converging: 'read while converging' },
  positionWord: 'blocks',
};
