// `make grade-validity` for a whole lab: the validity proof (./proof.ts) of each program the lab
// has under test — its consumers, and its push servers when it has a server under test (the
// feed lab) — each its own class, rubric and two gradings, held against one mutant matrix run
// for both. `program` proves one of them; ONLY= names mutants of either index, and a program
// none of whose mutants is named is left out.

import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { labNamed, labNames } from '../../labs/registry.js';
import type { Lab } from '../../lab-api/lab.js';
import { loadMatrixConsumers, loadMatrixServers, type MatrixProgram, mutantName } from '../../run/mutants.js';
import { exitStatusOf, type Validity } from './compare.js';
import { ProofError, type ProofOptions, proveValidity, runMatrix } from './proof.js';

const PROGRAMS: readonly MatrixProgram[] = ['consumer', 'server'];

export interface ProgramProof {
  program: MatrixProgram;
  /** The names of ONLY= that are this program's mutants (undefined: every mutant). */
  only?: string[];
}

/** One program's proof: its verdict and its folder (validity.md, the class, the gradings). */
export interface ProgramValidity {
  program: MatrixProgram;
  out: string;
  validity: Validity;
}

/** Which programs to prove, each with its share of ONLY=; a bad program or a name of neither index is a ProofError. */
export function proofPrograms(
  lab: Pick<Lab, 'name' | 'mutantIndex' | 'consumerDir' | 'server'>,
  program: string | undefined,
  only: readonly string[] | undefined,
): ProgramProof[] {
  if (program !== undefined && !PROGRAMS.includes(program as MatrixProgram))
    throw new ProofError(`PROGRAM: unknown program "${program}"; programs: ${PROGRAMS.join(', ')}`);
  if (program === 'server' && !lab.server) throw new ProofError(`PROGRAM: the ${lab.name} lab has no push server under test`);
  const programs = program !== undefined ? [program as MatrixProgram] : PROGRAMS.filter((p) => p === 'consumer' || lab.server !== undefined);
  const names = (p: MatrixProgram) =>
    new Set((p === 'server' ? loadMatrixServers(lab) : loadMatrixConsumers(lab)).map(mutantName).filter((n) => n !== undefined));
  if (only === undefined) return programs.map((p) => ({ program: p }));
  const known = new Map(programs.map((p) => [p, names(p)]));
  const unknown = only.filter((n) => !programs.some((p) => known.get(p)!.has(n)));
  if (unknown.length)
    throw new ProofError(`ONLY: no mutant ${unknown.join(', ')}; mutants: ${programs.map((p) => `${p}s ${[...known.get(p)!].join(', ')}`).join('; ')}`);
  return programs.flatMap((p) => {
    const mine = only.filter((n) => known.get(p)!.has(n));
    return mine.length ? [{ program: p, only: mine }] : [];
  });
}

/**
 * The proof of each program `proofPrograms` picks: one alone in `out` as before; both in
 * `out/consumer/` and `out/server/`, against one matrix (MATRIX=, or run once into `out/matrix/`).
 */
export async function proveLabValidity(opts: Omit<ProofOptions, 'program'> & { program?: string }): Promise<ProgramValidity[]> {
  const lab = labNamed(opts.lab);
  if (!lab) throw new ProofError(`unknown lab "${opts.lab}"; labs: ${labNames().join(', ')}`);
  const { program, only, ...common } = opts;
  const parts = proofPrograms(lab, program, only);
  if (parts.length === 1) {
    const [part] = parts as [ProgramProof];
    return [
      { program: part.program, out: opts.out, validity: await proveValidity({ ...common, program: part.program, ...(part.only ? { only: part.only } : {}) }) },
    ];
  }
  if (opts.rubric) throw new ProofError('RUBRIC: one rubric grades one program: give PROGRAM=consumer or PROGRAM=server with it');
  const out = resolve(opts.out);
  if (existsSync(out) && readdirSync(out).length > 0) throw new ProofError(`${out} is not empty: give the proof a new folder`);
  mkdirSync(out, { recursive: true });
  let matrix = opts.matrix;
  if (matrix === undefined) {
    const started = Date.now();
    matrix = await runMatrix({ ...common, ...(only ? { only } : {}) }, out, undefined);
    opts.log(`the mutant matrix (both programs): done in ${Math.round((Date.now() - started) / 1000)} s`);
  }
  const proofs: ProgramValidity[] = [];
  for (const part of parts) {
    const dir = join(out, part.program);
    opts.log(`\n== the ${part.program}s: into ${dir}`);
    const validity = await proveValidity({ ...common, program: part.program, matrix, out: dir, ...(part.only ? { only: part.only } : {}) });
    proofs.push({ program: part.program, out: dir, validity });
  }
  return proofs;
}

/** The exit status of several proofs: 1 when one is not valid, else 2 when one is not judged, else 0. */
export const labExitStatus = (proofs: readonly Pick<ProgramValidity, 'validity'>[]): number => {
  const statuses = proofs.map((p) => exitStatusOf(p.validity));
  return statuses.includes(1) ? 1 : statuses.includes(2) ? 2 : 0;
};
