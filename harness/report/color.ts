// Whether the console uses colour: on a terminal unless NO_COLOR says no (https://no-color.org),
// and anywhere FORCE_COLOR says yes (CI logs render ANSI colour though they are not terminals).
// FORCE_COLOR wins over NO_COLOR, as in Node's own tty.getColorDepth.

export function colorEnabled(tty: boolean, env: NodeJS.ProcessEnv = process.env): boolean {
  const force = env.FORCE_COLOR;
  if (force !== undefined) return !['0', 'false'].includes(force.toLowerCase());
  if (env.NO_COLOR) return false;
  return tty;
}
