// Which lab grades a class when neither --lab nor --rubric says (docs/grading.md, "Which lab"):
// the lab its manifests name (`lab:`), or imply — a `server:` is a push server, which only a lab
// with a server under test grades (the feed lab's). Manifests that name or imply different labs
// are an error naming both files; a `server:` that no one lab can grade, an error naming its
// file. A class whose manifests say nothing of a lab (consumers without `lab:`, the defaults
// for client.py, ...) is graded with the registry's first lab, as before.

import type { Manifest } from '../manifest.js';

/** The lab one manifest names or implies, with the words that say why; undefined: it does not say. */
export interface LabDecision {
  lab: string;
  /** The manifest's path. */
  file: string;
  /** "lab: feed", "server: (only the feed lab grades a push server)". */
  why: string;
}

export class ClassLabError extends Error {
  override name = 'ClassLabError';
}

/**
 * The lab `manifest` (read from `file`) names, or its `server` implies among `serverLabs` (the
 * labs with a server under test); undefined when it says nothing of a lab; a string (the error's
 * words) for a `server` that no one lab grades.
 */
export function manifestLab(manifest: Pick<Manifest, 'lab' | 'server'>, file: string, serverLabs: readonly string[]): LabDecision | string | undefined {
  if (manifest.lab !== undefined) return { lab: manifest.lab, file, why: `lab: ${manifest.lab}` };
  if (manifest.server === undefined) return undefined;
  if (serverLabs.length === 1) return { lab: serverLabs[0]!, file, why: `server: (only the ${serverLabs[0]} lab grades a push server)` };
  const which = serverLabs.length === 0 ? 'no lab grades a push server' : `labs ${serverLabs.join(', ')} all grade push servers`;
  return `${file}: server: names a push server, but ${which}: add lab: to the manifest, or give --lab`;
}

/**
 * The lab the manifests agree on, as its first decision says (undefined: none says); a manifest
 * that cannot decide, or two that name different labs, is an error naming the manifests.
 */
export function agreedLab(decisions: readonly (LabDecision | string)[]): LabDecision | undefined {
  const undecided = decisions.find((d): d is string => typeof d === 'string');
  if (undecided !== undefined) throw new ClassLabError(undecided);
  const [first, ...rest] = decisions as readonly LabDecision[];
  if (!first) return undefined;
  const other = rest.find((d) => d.lab !== first.lab);
  if (other)
    throw new ClassLabError(
      `the manifests disagree on the lab: ${first.file} (${first.why}) is the ${first.lab} lab's, ${other.file} (${other.why}) the ${other.lab} lab's: fix the manifests, or give --lab (submissions of another lab are then not graded, and named)`,
    );
  return first;
}
