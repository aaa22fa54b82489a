// The few words the diagram writes on a feed frame's arrow: a JSON frame clipped to an arrow's
// width says `{"op":"reset","reason":"st…`, so the lab names it instead — "reset stale-cursor",
// "event 57:3 again", "revoke 40:0…42:3 ×3" (the 3 delivered events it voids). The tooltip keeps the exact bytes. A
// labeller remembers, per stream, the events it saw sent and not since voided, so a revoke names
// the band of delivered events it voids and a resend says "again".

import { shortCursor } from './words.js';

/** A string member's value by a quick scan ("name":"value"), without parsing the line: this runs for every wire line. */
export function stringMember(line: string, name: string): string | undefined {
  const key = `"${name}":`;
  let i = line.indexOf(key);
  if (i < 0) return undefined;
  i += key.length;
  while (line[i] === ' ') i++;
  if (line[i] !== '"') return undefined;
  const end = line.indexOf('"', i + 1);
  return end < 0 ? undefined : line.slice(i + 1, end);
}

/** A heartbeat's id (a number or a string) by a quick scan. */
const idOf = (line: string): string | undefined => /"id":\s*("?)([^",}\s]{1,20})\1/.exec(line)?.[2];

export type FeedLabeller = (line: { stream: string; direction: 'send' | 'recv'; line: string; cls: string }) => string | undefined;

export function newFeedLabeller(): FeedLabeller {
  /** Per stream: the cursors of events sent and not voided since (by a revoke, or replaced by a snapshot). */
  const held = new Map<string, Set<string>>();
  const heldOn = (stream: string): Set<string> => {
    let s = held.get(stream);
    if (!s) held.set(stream, (s = new Set()));
    return s;
  };
  return ({ stream, direction, line, cls }) => {
    switch (cls) {
      case 'event': {
        const cursor = stringMember(line, 'cursor');
        if (cursor === undefined) return undefined;
        const type = stringMember(line, 'type');
        const words = `event ${shortCursor(cursor)}${type ? ` ${type}` : ''}`;
        if (direction !== 'send') return words;
        const sent = heldOn(stream);
        if (sent.has(cursor)) return `${words} again`;
        sent.add(cursor);
        return words;
      }
      case 'revoke': {
        const from = stringMember(line, 'fromCursor');
        if (from === undefined) return undefined;
        if (direction !== 'send') return `revoke from ${shortCursor(from)}`;
        const sent = heldOn(stream);
        const voided = [...sent].filter((c) => c >= from).sort();
        for (const c of voided) sent.delete(c);
        // Short enough for an arrow between neighbouring lanes (~27 characters), even at block 9999.
        if (voided.length === 0) return `revoke ${shortCursor(from)}…: none sent`;
        const band = voided.length === 1 ? shortCursor(voided[0]) : `${shortCursor(voided[0])}…${shortCursor(voided.at(-1))}`;
        return `revoke ${band} ×${voided.length}`;
      }
      case 'snapshot': {
        const cursor = stringMember(line, 'cursor');
        if (direction === 'send') heldOn(stream).clear(); // the snapshot replaces the state: what came before can no longer be voided
        return cursor === undefined ? 'snapshot' : `snapshot at ${shortCursor(cursor)}`;
      }
      case 'subscribe': {
        const cursor = stringMember(line, 'cursor');
        return cursor === undefined ? 'subscribe, cursor null' : `subscribe from ${shortCursor(cursor)}`;
      }
      case 'reset': {
        const reason = stringMember(line, 'reason');
        return reason === undefined ? 'reset' : `reset ${reason}`;
      }
      case 'ping':
      case 'pong': {
        const id = idOf(line);
        return id === undefined ? cls : `${cls} ${id}`;
      }
      default:
        return undefined;
    }
  };
}
