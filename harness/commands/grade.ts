// `chaoslab grade`: grades a class (every immediate sub-folder of <dir>, each a submission with
// its manifest: a consumer, a push server, or both) or one command (--consumer) against a rubric; see harness/grade/ and
// ./grade-action.ts. Exit 0 when grading completed, whatever the scores; 2 when the grader
// could not do its job (bad rubric, sealing unavailable without --unsealed, a harness error, a
// manifest naming another lab than the rubric's).
import type { Command } from 'commander';
import { DEFAULT_LAB_HELP, positiveInt, STORE_LIMIT_FLAGS, STORE_LIMIT_HELP, sizeOption } from './options.js';
import type { GradeOptions } from './grade-action.js';

export function register(program: Command): void {
  program
    .command('grade')
    .description('grade a class of submissions (each sub-folder of <dir>, with a chaoslab.json/.yaml manifest) or one --consumer against a rubric')
    .argument('[dir]', 'the class folder: each immediate sub-folder is one submission')
    .option('--consumer <command>', 'grade this one command, run from the current directory, instead of a class folder')
    .option('--name <name>', 'with --consumer: the submission name in the outputs', 'consumer')
    .option(
      '--rubric <file>',
      "the rubric (repeatable: rubrics graded together; default: the lab's rubrics/<lab>.yaml, with rubrics/<lab>-server.yaml when a manifest names a server)",
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option(
      '--lab <name>',
      `the lab whose rubric is used (default: the lab the manifests name with lab:, or imply with server:, else ${DEFAULT_LAB_HELP}); with --rubric, it must be the rubric's lab`,
    )
    .option(
      '--jobs <n>',
      "a submission's runs at the same time (default: the machine's processors, os.availableParallelism(), times the rubric's jobs_per_processor, at most the rubric's runs)",
      positiveInt,
    )
    .option(
      '--processors <n>',
      "the processors the default --jobs counts (default: os.availableParallelism(), which does not see a container's CPU quota on every Node version)",
      positiveInt,
    )
    .option('--shard <i/n>', "grade only shard i of n (1-based; a stable hash of each submission's folder name)")
    .option('--out <dir>', 'where results are written: <out>/<submission>/results.json …, <out>/grades.csv, <out>/index.html', 'grades')
    .option('--unsealed', 'grade even where sealing is unavailable (every output then says the run was not sealed)')
    .option('--deadline <seconds>', "each submission's deadline for its runs (the build has its own)", positiveInt, 1800)
    .option('--build-deadline <seconds>', "each submission's build deadline", positiveInt, 600)
    .option(
      '--build-network',
      "sealed builds get the host's network (default: a network namespace of their own with nothing in it; the grader's output says which)",
    )
    .option(
      '--build-cache <dir>',
      'where built submissions are kept by a hash of their files and build (default: .chaoslab-build-cache beside --out); an unchanged submission is not built again',
    )
    .option('--no-build-cache', 'build every submission, and keep nothing')
    .option(STORE_LIMIT_FLAGS, STORE_LIMIT_HELP, sizeOption())
    .option('--submission <name>', "grade only this sub-folder of the class folder (a grade line's replay command uses it)")
    .option('--only <scenario>', "grade only this rubric scenario (repeatable; a scenario's replay command uses it)", (v: string, prev: string[] = []) => [
      ...prev,
      v,
    ])
    .action(async (dir: string | undefined, opts: GradeOptions) => (await import('./grade-action.js')).gradeAction(dir, opts));
}
