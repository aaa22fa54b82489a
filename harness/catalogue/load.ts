// Loading scenario files: YAML -> the lab's JSON Schema (core part + lab part) -> semantic checks
// -> a `Scenario` with every default filled. A bad file never half-loads: every problem found is
// collected into one ScenarioError, each with file:line:col and the dotted field path, e.g.
//   scenarios/ledger/x.yaml:12:5: consumer.incarnations[0].fault: must look like <action>@<point>:<seq> (got "exit@ack")

import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Lab } from '../lab-api/lab.js';
import { labNamed, labNames } from '../labs/registry.js';
import { faultProblems, resolveFault } from '../scenario/faults.js';
import { displayPath, fieldOf, type RawProblem, ScenarioError, type ScenarioProblem } from '../scenario/problems.js';
import { type ChaosOriginFile, CORE_DEFAULTS, type CoreFile } from '../scenario/schema.js';
import { schemaProblems } from '../scenario/schema-problems.js';
import type { Scenario } from '../scenario/types.js';
import { validatorOf } from './validator.js';
import { fieldAtOffset, locate, offsetOf } from '../scenario/yaml-positions.js';
import { yamlModule } from '../scenario/yaml-lazy.js';
import { projectRoot, scenariosDir } from '../base/paths.js';
import { vouchedLoad } from './catalogue-index.js';

export { ScenarioError, type ScenarioProblem, formatProblem } from '../scenario/problems.js';
export type { FaultEffect, FaultPlan, Scenario, Trigger } from '../scenario/types.js';

/** Larger files are refused before parsing: a scenario is a few kilobytes (100 000 explicit deltas take about 700 KB). */
export const MAX_SCENARIO_BYTES = 1024 * 1024;

/** Reads, validates and resolves one scenario file; throws ScenarioError listing every problem. */
export function loadScenario(filePath: string): Scenario {
  const absolute = path.resolve(filePath);
  const shown = displayPath(absolute);
  const refuse = (message: string): never => {
    throw new ScenarioError([{ file: shown, line: 1, column: 1, field: '', message }]);
  };
  let source = '';
  try {
    const size = statSync(absolute).size;
    if (size > MAX_SCENARIO_BYTES)
      refuse(`the file is ${size} bytes; a scenario file may have at most ${MAX_SCENARIO_BYTES} (use events.generate for long scripts)`);
    source = readFileSync(absolute, 'utf8');
  } catch (error) {
    if (error instanceof ScenarioError) throw error;
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : String((error as Error).message);
    refuse(`cannot read scenario file: ${reason}`);
  }
  // A catalogue file as the build loaded it: what the code below would give, without YAML.
  const vouched = vouchedLoad(absolute, source, scenariosDir, projectRoot);
  if (vouched) return vouched;

  const { isScalar, LineCounter, parseDocument } = yamlModule();
  const lineCounter = new LineCounter();
  const doc = parseDocument(source, { lineCounter, prettyErrors: false, uniqueKeys: true, strict: true });
  const problemAt = (offset: number, field: string, message: string): ScenarioProblem => {
    const { line, col } = lineCounter.linePos(offset);
    return { file: shown, line, column: col, field, message };
  };
  const finish = (raw: RawProblem[]): ScenarioProblem[] =>
    raw
      .map((p) => problemAt(offsetOf(locate(doc, p.segments), p.at), fieldOf(p.field ?? p.segments), p.message))
      .sort((a, b) => a.line - b.line || a.column - b.column);

  const yamlProblems = [...doc.errors, ...doc.warnings].map((e) => {
    const offset = e.pos[0];
    const field = e.code === 'DUPLICATE_KEY' ? fieldAtOffset(doc, offset) : '';
    const message = e.code === 'DUPLICATE_KEY' ? 'duplicate key (each key may appear only once)' : `YAML: ${e.message}`;
    return problemAt(offset, field, message);
  });
  if (yamlProblems.length > 0) throw new ScenarioError(yamlProblems);

  if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null)) {
    throw new ScenarioError([problemAt(0, '', 'the file is empty; a scenario needs at least name, description and events')]);
  }

  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    throw new ScenarioError([problemAt(0, '', `YAML: ${(error as Error).message}`)]);
  }
  // The lab decides the rest of the schema; an unknown protocol is reported by the schema itself.
  const protocol = (data as { protocol?: unknown } | null)?.protocol;
  const lab = labNamed(typeof protocol === 'string' ? protocol : labNames()[0]!) ?? labNamed(labNames()[0]!)!;
  const validate = validatorOf(lab);
  if (!validate(data)) throw new ScenarioError(finish(schemaProblems(validate.errors ?? [], data, lab.scenario.patternMessage)));
  const file = data as CoreFile & Record<string, unknown>;
  const semantic = [...coreProblems(file, absolute, lab), ...lab.scenario.semanticProblems(file)];
  if (semantic.length > 0) throw new ScenarioError(finish(semantic));

  const timeScale = file.time_scale ?? 1;
  return {
    file: absolute,
    source,
    name: file.name,
    description: file.description.trim(),
    protocol: lab.name,
    timeoutMs: file.timeout_ms ?? CORE_DEFAULTS.timeoutMs,
    deadlineMs: file.deadline_ms ?? CORE_DEFAULTS.deadlineMs,
    timeScale,
    ...(file.socket_buffer_bytes === undefined ? {} : { socketBufferBytes: file.socket_buffer_bytes }),
    faults: (file.faults ?? []).flatMap((f) => resolveFault(f, lab.faultPoints, timeScale)),
    lab: lab.scenario.resolve(file, timeScale),
    ...(file.chaos ? { chaos: chaosOriginOf(file.chaos) } : {}),
  };
}

/** A repro's `chaos` key as planned: the program it failed with (consumer or server), its seed and path. */
function chaosOriginOf(c: ChaosOriginFile): NonNullable<Scenario['chaos']> {
  return { ...(c.consumer ? { consumer: c.consumer } : {}), ...(c.server ? { server: c.server } : {}), seed: c.seed, path: c.path };
}

/** What the core checks: the name matches the file, a catalogue file sits in its lab's folder, the faults. */
function coreProblems(file: CoreFile, filePath: string, lab: Lab): RawProblem[] {
  const out: RawProblem[] = [];
  const baseName = path.basename(filePath).replace(/\.ya?ml$/, '');
  if (/\.ya?ml$/.test(filePath) && file.name !== baseName) {
    out.push({ segments: ['name'], at: 'value', message: `must equal the file name "${baseName}" (got "${file.name}")` });
  }
  const folder = path.basename(path.dirname(filePath));
  if (path.basename(path.dirname(path.dirname(filePath))) === 'scenarios' && labNamed(folder) && folder !== lab.name) {
    out.push({
      segments: ['protocol'],
      at: 'value',
      message: `this file is in the ${folder} lab's folder, but speaks ${lab.name}: set \`protocol: ${folder}\``,
    });
  }
  const positions = lab.scenario.positions(file as CoreFile & Record<string, unknown>);
  out.push(...faultProblems(file.faults ?? [], lab.faultPoints, positions));
  return out;
}
