#!/usr/bin/env node
// make server-proof: both reference push servers (the `references` of publisher/feed/mutants/
// index.yaml) pass every feed-server-* scenario RUNS times out of RUNS, optionally beside a CPU
// hog. For each reference, one `chaoslab run "feed-server-*" --server <its command> --repeat RUNS
// --jobs JOBS` (every scenario of the catalogue whose name starts feed-server-, so a new one is
// in the proof as soon as its file is there); the references one after the other, so JOBS is the
// load the proof itself puts on the machine, HOG=n busy processes beside it (started here, stopped
// on every way out, and gone with this process whatever ends it).
// Prints a table (scenario × reference: passed/runs) and, for each run that did not pass, its
// headline and its report; writes both to reports/server-proof/<stamp>/server-proof.md, the
// figures as JSON beside it. Exit 0 when every run passed; 1 when one did not; 2 when the proof
// itself could not run (a batch without results.json, no scenario matched, a bad variable).
// RUNS=20 JOBS=2 HOG=0 ONLY=<scenario,...> (names, with or without the feed-server- prefix, or
// globs) SERVERS=<reference,...> (default: every reference of the index). OUT=<dir> (default
// reports/server-proof/<stamp>).
// MUTANTS=all (or MUTANTS=<name,...>): after the references, each server mutant of the index (in
// the languages SERVERS names) runs its designated killer RUNS times, and each run must FAIL for
// the reason the index names: a second table (mutant × killer: caught/runs), and each run that
// let the mutant through. With ONLY, only the mutants whose killer ONLY names (or REFERENCES=no
// to prove the mutants alone).

import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const PREFIX = 'feed-server-';

/** A comma-separated variable as a list (empty entries dropped); `fallback` when unset or empty. */
export const listOf = (value, fallback) => {
  const items = (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return items.length ? items : fallback;
};

/** A whole-number variable of at least `min`; a bad value throws, naming the variable. */
export const wholeOf = (name, value, fallback, min) => {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n < min) throw new Error(`${name} must be a whole number >= ${min}, not "${value}"`);
  return n;
};

/** ONLY's entries as the CLI's scenario arguments: `slow-reader` is `feed-server-slow-reader`; a non-server name is refused. */
export const scenarioArgs = (only) =>
  only
    ? only.map((name) => {
        const full = name.startsWith(PREFIX) ? name : `${PREFIX}${name}`;
        if (!/^[a-z0-9*?-]+$/.test(full)) throw new Error(`ONLY: "${name}" is not a server scenario's name or glob`);
        return full;
      })
    : [`${PREFIX}*`];

/**
 * One reference's batch (its results.json) as cells: per scenario, runs and passes, and each run
 * that did not pass with its headline and report (under `batchDir`). A run an interrupt kept from
 * starting counts as a run that did not pass.
 */
export function tally(results, batchDir) {
  const cells = new Map();
  const cell = (scenario) => {
    if (!cells.has(scenario)) cells.set(scenario, { runs: 0, passed: 0, failures: [] });
    return cells.get(scenario);
  };
  for (const run of results.runs ?? []) {
    const c = cell(run.scenario);
    c.runs++;
    if (run.status === 'pass') c.passed++;
    else
      c.failures.push({
        label: run.label,
        status: run.status,
        headline: run.headline || '(no headline)',
        report: run.runDir ? join(batchDir, run.runDir, 'report.html') : undefined,
      });
  }
  for (const left of results.notStarted ?? []) {
    const c = cell(left.scenario);
    c.runs++;
    c.failures.push({ label: left.label, status: 'not started', headline: 'an interrupt kept it from starting' });
  }
  return cells;
}

/**
 * A mutant's batch on its killer: runs, those caught (FAIL with a finding that matches `reason`),
 * and each run that was not, with its status, headline and report.
 */
export function tallyCaught(results, reason, batchDir) {
  const cell = { runs: 0, caught: 0, missed: [] };
  for (const run of results.runs ?? []) {
    cell.runs++;
    const texts = [...(run.findings ?? []).map((f) => f.text), ...(run.harnessErrors ?? []).map(String)];
    if (run.status === 'fail' && texts.some((text) => reason.test(text))) cell.caught++;
    else
      cell.missed.push({
        label: run.label,
        status: run.status === 'fail' ? 'fail, for another reason' : run.status,
        headline: run.headline || '(no headline)',
        report: run.runDir ? join(batchDir, run.runDir, 'report.html') : undefined,
      });
  }
  for (const left of results.notStarted ?? []) {
    cell.runs++;
    cell.missed.push({ label: left.label, status: 'not started', headline: 'an interrupt kept it from starting' });
  }
  return cell;
}

/** A run that did not go as owed, as a list item: whose, which, its status, headline and report. */
const runLine = (who, f) => `- ${who}, ${f.label}: ${f.status.toUpperCase()} — ${f.headline.replaceAll('\n', ' ')}${f.report ? `\n  report: ${f.report}` : ''}`;

/** The mutants' table (mutant × killer: caught/runs) and each run that let one through, as markdown lines. */
export function renderCaught({ mutants, runs }) {
  const out = ['## Server mutants on their killers', '', '| mutant | killer | caught |', '|---|---|---|'];
  for (const m of mutants) out.push(`| ${m.label} | ${m.killer} | ${cellText(m.cell ? { runs: m.cell.runs, passed: m.cell.caught } : undefined, runs)} |`);
  out.push('');
  const missed = mutants.flatMap((m) => (m.cell?.missed ?? []).map((f) => ({ mutant: m.label, ...f })));
  if (missed.length) {
    out.push('### Runs that did not catch their mutant', '');
    for (const f of missed) out.push(runLine(f.mutant, f));
    out.push('');
  }
  return out.join('\n');
}

/** Every mutant was run `runs` times and caught each time. */
export const allCaught = (mutants, runs) => mutants.every((m) => m.cell !== undefined && m.cell.runs === runs && m.cell.caught === runs);

/**
 * MUTANTS' proofs: each mutant (all, or the names it lists) in the languages of `servers`, once per
 * scenario built to catch it (its killer, and the index's also_caught_by) that `targets` names, as
 * { label, language, command, killer, reason }; an unknown name throws.
 */
export function mutantsOf(all, wanted, servers, targets) {
  if (!wanted) return [];
  const nameOf = (m) => m.label.replace(/ \(.*\)$/, '');
  const names = [...new Set(all.map(nameOf))];
  const picked = wanted.length === 1 && wanted[0] === 'all' ? names : wanted;
  const unknown = picked.filter((name) => !names.includes(name));
  if (unknown.length) throw new Error(`MUTANTS: no server mutant named ${unknown.join(', ')} (the index has ${names.join(', ')})`);
  const named = (killer) => targets.some((glob) => new RegExp(`^${glob.replaceAll('*', '.*').replaceAll('?', '.')}$`).test(killer));
  return all
    .filter((m) => picked.includes(nameOf(m)) && servers.some((s) => s.label === m.language))
    .flatMap((m) =>
      [{ killer: m.killer, reason: m.reason }, ...(m.alsoCaughtBy ?? [])]
        .filter((k) => named(k.killer))
        .map((k) => ({ label: m.label, language: m.language, command: m.command, killer: k.killer, reason: k.reason })),
    );
}

const cellText = (c, runs) =>
  c ? `${c.passed === c.runs && c.runs === runs ? '' : '**'}${c.passed}/${c.runs}${c.passed === c.runs && c.runs === runs ? '' : '**'}` : '–';

/** The proof's table and its failures, as markdown lines; `rows` is [{ reference, cells }] and `runs` the runs each cell is owed. */
export function renderProof({ rows, runs, title, setup }) {
  const scenarios = [...new Set(rows.flatMap((r) => [...r.cells.keys()]))].sort();
  const refs = rows.map((r) => r.reference);
  const out = [
    `# ${title}`,
    '',
    setup,
    '',
    `| scenario | ${refs.join(' | ')} |`,
    `|---|${refs.map(() => '---').join('|')}|`,
    ...scenarios.map((s) => `| ${s} | ${rows.map((r) => cellText(r.cells.get(s), runs)).join(' | ')} |`),
    '',
  ];
  const failures = rows.flatMap((r) => [...r.cells].flatMap(([scenario, c]) => c.failures.map((f) => ({ reference: r.reference, scenario, ...f }))));
  if (failures.length) {
    out.push('## Runs that did not pass', '');
    for (const f of failures) out.push(runLine(f.reference, f));
    out.push('');
  }
  return out.join('\n');
}

/** Every run of every row passed, and each scenario had its `runs` runs under every reference. */
export const allPassed = (rows, runs) =>
  rows.length > 0 && rows.every((r) => r.cells.size > 0 && [...r.cells.values()].every((c) => c.runs === runs && c.passed === runs));

/** Runs the CLI, its lines shown prefixed with `tag`; resolves with its exit status (never rejects). */
function chaoslab(args, tag, children) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(root, 'dist', 'harness', 'cli.js'), ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    const show = (stream, sink) => {
      let rest = '';
      stream.on('data', (chunk) => {
        const lines = (rest + chunk.toString('utf8')).split('\n');
        rest = lines.pop();
        for (const line of lines) sink.write(`[${tag}] ${line}\n`);
      });
      stream.on('end', () => rest && sink.write(`[${tag}] ${rest}\n`));
    };
    show(child.stdout, process.stdout);
    show(child.stderr, process.stderr);
    child.on('close', (code, signal) => {
      children.delete(child);
      resolve(code ?? (signal ? 2 : 0));
    });
  });
}

/** The one batch folder a command wrote under its `--out` (beside the `latest` link). */
const batchIn = (dir) => {
  const found = readdirSync(dir).find((d) => d !== 'latest');
  if (!found) throw new Error(`no batch folder in ${dir}`);
  return join(dir, found);
};

async function main() {
  const env = process.env;
  const { labNamed } = await import('../dist/harness/labs/registry.js');
  const { loadMatrixServers } = await import('../dist/harness/run/mutants.js');
  const { startHogs } = await import('../dist/harness/grade/validity/stability.js');
  const lab = labNamed('feed');
  const indexed = loadMatrixServers(lab);
  const references = indexed.filter((c) => c.kind === 'reference');
  const runs = wholeOf('RUNS', env.RUNS, 20, 1);
  const jobs = wholeOf('JOBS', env.JOBS, 2, 1);
  const hogs = wholeOf('HOG', env.HOG, 0, 0);
  const targets = scenarioArgs(listOf(env.ONLY, undefined));
  const wanted = listOf(
    env.SERVERS,
    references.map((r) => r.label),
  );
  const unknown = wanted.filter((name) => !references.some((r) => r.label === name));
  if (unknown.length) throw new Error(`SERVERS: no reference named ${unknown.join(', ')} (the index has ${references.map((r) => r.label).join(', ')})`);
  const servers = references.filter((r) => wanted.includes(r.label));
  const mutants = mutantsOf(
    indexed.filter((c) => c.kind === 'mutant'),
    listOf(env.MUTANTS, undefined),
    servers,
    targets,
  );
  if (env.MUTANTS && !mutants.length) throw new Error(`MUTANTS=${env.MUTANTS}: no mutant left (ONLY and SERVERS leave none whose killer they name)`);
  // One run of one scenario is not a batch: it writes no results.json to count from.
  if (mutants.length && runs < 2)
    throw new Error(
      `RUNS=${runs} with MUTANTS: a mutant's proof needs RUNS >= 2; for one run, \`node dist/harness/cli.js run <killer> --server '<mutant command>'\``,
    );
  if (!['', 'yes', 'no'].includes(env.REFERENCES ?? '')) throw new Error(`REFERENCES must be yes or no, not "${env.REFERENCES}"`);
  const proven = env.REFERENCES === 'no' ? [] : servers;
  if (!proven.length && !mutants.length) throw new Error('REFERENCES=no without MUTANTS: nothing to prove');
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  const out = env.OUT || join(root, 'reports', 'server-proof', stamp);
  mkdirSync(out, { recursive: true });
  const setup = `\`make server-proof\` RUNS=${runs} JOBS=${jobs} HOG=${hogs}${env.ONLY ? ` ONLY=${env.ONLY}` : ''}: ${targets.join(' ')} against ${proven.map((s) => `${s.label} (\`${s.command}\`)`).join(' and ') || 'no reference'}${mutants.length ? `; ${mutants.length} mutants on their killers` : ''}`;
  console.log(`server-proof: ${setup}; ${out}`);

  const children = new Set();
  let interrupted = false;
  // Ctrl-C reaches the CLI too (same process group): let it stop its runs and write its batch.
  const onSignal = (signal) => {
    interrupted = true;
    if (signal === 'SIGTERM') for (const child of children) child.kill('SIGTERM');
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const hog = hogs ? startHogs(hogs) : undefined;
  const started = Date.now();
  const rows = [];
  let broken = false;
  try {
    for (const server of proven) {
      if (interrupted) break;
      const dir = join(out, server.label);
      const code = await chaoslab(
        ['run', ...targets, '--server', server.command, '--repeat', String(runs), '--jobs', String(jobs), '--out', dir],
        server.label,
        children,
      );
      try {
        const batch = batchIn(dir);
        rows.push({
          reference: server.label,
          code,
          cells: tally(JSON.parse(readFileSync(join(batch, 'results.json'), 'utf8')), relative(process.cwd(), batch)),
        });
      } catch (error) {
        console.error(`server-proof: ${server.label}: chaoslab run exited ${code} without a batch's results (${error.message})`);
        broken = true;
      }
    }
    for (const mutant of mutants) {
      if (interrupted) break;
      const dir = join(out, 'mutants', `${mutant.label} ${mutant.killer}`.replace(/[^a-z0-9]+/gi, '-').replace(/-$/, ''));
      const args = ['run', mutant.killer, '--server', mutant.command, '--repeat', String(runs), '--jobs', String(jobs), '--out', dir];
      const code = await chaoslab(args, mutant.label, children);
      try {
        const batch = batchIn(dir);
        mutant.cell = tallyCaught(JSON.parse(readFileSync(join(batch, 'results.json'), 'utf8')), mutant.reason, relative(process.cwd(), batch));
      } catch (error) {
        console.error(`server-proof: ${mutant.label}: chaoslab run exited ${code} without a batch's results (${error.message})`);
        broken = true;
      }
    }
  } finally {
    hog?.stop();
  }
  const minutes = (Date.now() - started) / 60_000;
  const title = `server-proof ${stamp}`;
  const table = [
    proven.length ? renderProof({ rows, runs, title, setup: `${setup}; ${minutes.toFixed(1)} min.` }) : `# ${title}\n\n${setup}; ${minutes.toFixed(1)} min.\n`,
    ...(mutants.length ? [renderCaught({ mutants, runs })] : []),
  ].join('\n');
  writeFileSync(join(out, 'server-proof.md'), table);
  const cellsJson = rows.map((r) => ({ reference: r.reference, exit: r.code, scenarios: Object.fromEntries(r.cells) }));
  const mutantsJson = mutants.map((m) => ({ mutant: m.label, killer: m.killer, reason: m.reason.source, ...m.cell }));
  writeFileSync(
    join(out, 'server-proof.json'),
    `${JSON.stringify({ stamp, runs, jobs, hogs, targets, minutes, rows: cellsJson, mutants: mutantsJson }, null, 2)}\n`,
  );
  console.log(`\n${table}`);
  const ok = !broken && !interrupted && rows.length === proven.length && (proven.length === 0 || allPassed(rows, runs)) && allCaught(mutants, runs);
  console.log(
    `server-proof: ${ok ? 'ok' : broken ? 'COULD NOT RUN' : interrupted ? 'INTERRUPTED' : 'FAILED'} in ${minutes.toFixed(1)} min — ${join(out, 'server-proof.md')}`,
  );
  return broken ? 2 : ok ? 0 : 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    process.exitCode = await main();
  } catch (error) {
    console.error(`server-proof: COULD NOT RUN — ${error.message}`);
    process.exitCode = 2;
  }
}
