// Turns ajv's errors into problems a person can act on: the field, what was expected, what was
// found, a "did you mean" for a misspelt key. Errors inside a failed oneOf branch and complaints
// about a value of the wrong type are left out: the oneOf or type error says it better.

import type { ErrorObject } from 'ajv';
import { closest, type RawProblem, type Segment } from './problems.js';

/** A lab's words for its own patterns (a fault plan grammar, say); undefined: the generic message. */
export type PatternMessage = (pattern: string, value: string) => string | undefined;

/** Core patterns' words. */
export const NAME_PATTERN = '^[a-z0-9][a-z0-9-]*$';

function pointerSegments(pointer: string, data: unknown): Segment[] {
  if (pointer === '') return [];
  const segments: Segment[] = [];
  let value: unknown = data;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(value)) {
      const index = Number(key);
      segments.push(index);
      value = value[index];
    } else {
      segments.push(key);
      value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
    }
  }
  return segments;
}

function describeValue(value: unknown): string {
  if (value === null || value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return JSON.stringify(value);
  return String(value);
}

const TYPE_WORDS: Record<string, string> = {
  object: 'a mapping',
  array: 'a list',
  integer: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
};

export function schemaProblems(errors: ErrorObject[], data: unknown, labPattern?: PatternMessage): RawProblem[] {
  // Errors from inside a failed oneOf branch only explain why that branch did not match;
  // the oneOf error itself says it better.
  const oneOfPaths = errors.filter((e) => e.keyword === 'oneOf').map((e) => `${e.schemaPath}/`);
  // A value of the wrong type makes every other complaint about it noise.
  const wrongType = new Set(errors.filter((e) => e.keyword === 'type').map((e) => e.instancePath));
  const out: RawProblem[] = [];
  for (const e of errors) {
    if (oneOfPaths.some((p) => e.schemaPath.startsWith(p))) continue;
    if (e.keyword !== 'type' && wrongType.has(e.instancePath)) continue;
    out.push(problemOf(e, pointerSegments(e.instancePath, data), labPattern));
  }
  return out;
}

/** One ajv error in plain words, at the key or at the value it is about. */
function problemOf(e: ErrorObject, segments: RawProblem['segments'], labPattern?: PatternMessage): RawProblem {
  const schema = e.parentSchema as Record<string, unknown> | undefined;
  const got = describeValue(e.data);
  switch (e.keyword) {
    case 'additionalProperties': {
      const key = (e.params as { additionalProperty: string }).additionalProperty;
      const allowed = Object.keys((schema?.properties as object | undefined) ?? {});
      const hint = closest(key, allowed);
      return {
        segments: [...segments, key],
        at: 'key',
        message: `unknown key${hint ? ` (did you mean "${hint}"?)` : ''}; allowed here: ${allowed.join(', ')}`,
      };
    }
    case 'required': {
      const missing = (e.params as { missingProperty: string }).missingProperty;
      return { segments, at: 'key', field: [...segments, missing], message: 'is required' };
    }
    case 'type': {
      const want = String((e.params as { type: string }).type);
      return { segments, at: 'value', message: `must be ${TYPE_WORDS[want] ?? want} (got ${got})` };
    }
    case 'minimum':
    case 'maximum': {
      const min = schema?.minimum as number | undefined;
      const max = schema?.maximum as number | undefined;
      const range = min !== undefined && max !== undefined ? `between ${min} and ${max}` : min !== undefined ? `>= ${min}` : `<= ${max}`;
      return { segments, at: 'value', message: `must be ${range} (got ${got})` };
    }
    case 'minItems':
    case 'maxItems': {
      const min = schema?.minItems as number | undefined;
      const max = schema?.maxItems as number | undefined;
      const n = Array.isArray(e.data) ? e.data.length : 0;
      const range = min !== undefined && max !== undefined ? `${min}..${max}` : min !== undefined ? `at least ${min}` : `at most ${max}`;
      return { segments, at: 'value', message: `must have ${range} items (got ${n})` };
    }
    case 'minLength':
      return { segments, at: 'value', message: 'must not be empty' };
    case 'maxLength':
      return { segments, at: 'value', message: `must be at most ${String(schema?.maxLength)} characters (got ${String(e.data).length})` };
    case 'enum': {
      const allowed = (e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v));
      return { segments, at: 'value', message: `must be one of ${allowed.join(', ')} (got ${got})` };
    }
    case 'pattern':
      return { segments, at: 'value', message: patternMessage(String((e.params as { pattern: string }).pattern), String(e.data), labPattern) };
    case 'oneOf': {
      const branches = ((schema?.oneOf as { required?: string[] }[] | undefined) ?? []).flatMap((b) => b.required ?? []);
      const present = branches.filter((k) => e.data !== null && typeof e.data === 'object' && k in e.data);
      return {
        segments,
        at: 'key',
        message: `must have exactly one of ${branches.map((k) => `"${k}"`).join(' or ')} (got ${present.length === 0 ? 'neither' : present.map((k) => `"${k}"`).join(' and ')})`,
      };
    }
    default:
      return { segments, at: 'value', message: e.message ?? `fails ${e.keyword}` };
  }
}

function patternMessage(pattern: string, value: string, labPattern?: PatternMessage): string {
  const own = labPattern?.(pattern, value);
  if (own !== undefined) return own;
  if (pattern === NAME_PATTERN) {
    return `must be lowercase letters, digits and dashes, starting with a letter or digit (got ${JSON.stringify(value)})`;
  }
  if (pattern === '\\S') return 'must not be blank';
  return `must match /${pattern}/ (got ${JSON.stringify(value)})`;
}
