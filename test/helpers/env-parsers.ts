// What a reference consumer's own environment parser (the one its main loop calls before anything
// is opened or connected) says of many environments at once: TypeScript's in the test's process,
// Python's in one python3 process for all of them. The process-level tests then need only a few
// bad environments to show that a refusal is exit 64 with nothing opened.
import { execFileSync } from 'node:child_process';

export interface EnvParsers {
  /** TypeScript's parser, and the error class it refuses with. */
  ts: { parse: (env: Record<string, string>) => unknown; refusal: abstract new (...args: never[]) => Error };
  /** Python's: the folder to put on sys.path, the module holding `parse_env` and `EnvError`. */
  python: { dir: string; module: string };
}

/** Each environment's refusal message, or null where the parser of consumer `c` (ts or python) accepts it. */
export function parserVerdicts(c: { name: string }, envs: Record<string, string>[], parsers: EnvParsers): (string | null)[] {
  if (c.name === 'ts')
    return envs.map((env) => {
      try {
        parsers.ts.parse(env);
        return null;
      } catch (error) {
        return error instanceof parsers.ts.refusal ? error.message : `not a refusal: ${String(error)}`;
      }
    });
  if (c.name !== 'python') throw new Error(`no parser to ask for consumer ${c.name}`);
  const script = [
    'import json, sys',
    'sys.path.insert(0, sys.argv[1])',
    `from ${parsers.python.module} import EnvError, parse_env`,
    'for env in json.load(sys.stdin):',
    '    try:',
    '        parse_env(env)',
    '        print(json.dumps(None))',
    '    except EnvError as err:',
    '        print(json.dumps(str(err)))',
  ].join('\n');
  const out = execFileSync('python3', ['-c', script, parsers.python.dir], { input: JSON.stringify(envs), encoding: 'utf8' });
  return out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as string | null);
}
