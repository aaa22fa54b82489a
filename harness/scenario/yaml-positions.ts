// Where a problem is in the YAML text: follows a path of keys and indexes through the parsed
// document to the node, so every error can name file:line:col.

import type { Document, Node, Pair } from 'yaml';
import { yamlModule } from './yaml-lazy.js';
import { fieldOf, type Segment } from './problems.js';

interface Located {
  node: Node | null;
  keyNode: Node | null;
}

/** Follows `segments` through the YAML tree as far as it goes. */
export function locate(doc: Document, segments: readonly Segment[]): Located {
  const { isMap, isScalar, isSeq } = yamlModule();
  let node: unknown = doc.contents;
  let keyNode: Node | null = null;
  for (const s of segments) {
    if (isMap(node)) {
      const pair = node.items.find((p: Pair) => isScalar(p.key) && String(p.key.value) === String(s));
      if (!pair) return { node: node as Node, keyNode: null };
      keyNode = isScalar(pair.key) ? pair.key : null;
      node = pair.value;
      if (!node) return { node: keyNode, keyNode };
    } else if (isSeq(node) && typeof s === 'number' && node.items[s]) {
      keyNode = null;
      node = node.items[s];
    } else {
      break;
    }
  }
  return { node: (node as Node | null) ?? null, keyNode };
}

export function offsetOf(located: Located, at: 'key' | 'value'): number {
  const { isScalar } = yamlModule();
  const value = located.node?.range?.[0];
  const key = located.keyNode?.range?.[0];
  // An empty value (`events:` and nothing) has no useful position of its own: use the key.
  const emptyValue = isScalar(located.node) && located.node.value === null && located.node.source === '';
  if (at === 'key' || emptyValue) return key ?? value ?? 0;
  return value ?? key ?? 0;
}

/** The dotted path of the key at `offset` (for duplicate-key errors). */
export function fieldAtOffset(doc: Document, offset: number): string {
  const { isMap, isPair, isScalar, isSeq } = yamlModule();
  const segments: Segment[] = [];
  let node: unknown = doc.contents;
  const inside = (n: unknown): boolean => {
    const r = (n as Node | null)?.range;
    return !!r && r[0] <= offset && offset < Math.max(r[1], r[0] + 1);
  };
  for (;;) {
    if (isMap(node)) {
      const pair = node.items.find((p) => inside(p.key) || inside(p.value));
      if (!pair || !isPair(pair)) break;
      segments.push(isScalar(pair.key) ? String(pair.key.value) : '?');
      if (inside(pair.key)) break;
      node = pair.value;
    } else if (isSeq(node)) {
      const index = node.items.findIndex((item) => inside(item));
      if (index < 0) break;
      segments.push(index);
      node = node.items[index];
    } else {
      break;
    }
  }
  return fieldOf(segments);
}
