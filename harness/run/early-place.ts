// `chaoslab run`'s first sealed place (namespace, firewall, worker), opened from the raw command
// line by the entry point (harness/cli.ts) while the command line's own modules load: the
// worker, a second Node start inside the run's namespace, is then up when the run is. It is a
// guess from the arguments only: the command (commands/run.ts) decides as ever, and closes the
// place if its runs are not sealed, or if it never runs (a usage error: cli.ts).

import { prewarmSealedPlace } from './sealed.js';
import { mightSeal } from './sealing.js';

/** What the arguments after `chaoslab` say of sealing; undefined where they rule a sealed run out (not `run`, --no-seal, help). */
export function sealingAsked(args: readonly string[]): { mode?: 'on'; toxiproxyUrl?: string } | undefined {
  if (args[0] !== 'run' || args.some((arg) => arg === '--no-seal' || arg === '--help' || arg === '-h')) return undefined;
  const at = args.indexOf('--toxiproxy-url');
  const toxiproxyUrl = at >= 0 ? args[at + 1] : args.find((arg) => arg.startsWith('--toxiproxy-url='))?.slice('--toxiproxy-url='.length);
  return { ...(args.includes('--seal') ? { mode: 'on' as const } : {}), ...(toxiproxyUrl === undefined ? {} : { toxiproxyUrl }) };
}

export function openEarlyPlace(args: readonly string[], cwd: string): void {
  const asked = sealingAsked(args);
  // What the place writes (its uid's lease) is root's alone: cli.ts set the umask before this.
  if (asked && mightSeal(asked.mode, asked.toxiproxyUrl)) prewarmSealedPlace(cwd);
}
