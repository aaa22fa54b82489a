// Whether runs are sealed: decided once per harness process from a probe of the machine (docs/
// sandbox.md) and the asked mode (`--seal`, `--no-seal`, CHAOSLAB_SEAL), and said in every
// run's journal and report.

import { externalToxiproxyUrl } from '../toxiproxy/server.js';
import { decideSealing, probeSealing, type SealingDecision, type SealMode, sealModeFromEnv } from '../sandbox/probe.js';

let decided: Promise<SealingDecision> | undefined;
let decidedFor: string | undefined;

/**
 * The decision for `mode` (default: CHAOSLAB_SEAL, else auto). An external Toxiproxy (the
 * `--toxiproxy-url` given, else TOXIPROXY_URL) cannot serve a run's own namespace.
 */
export function sealing(mode: SealMode = sealModeFromEnv(), given?: string): Promise<SealingDecision> {
  const toxiproxyUrl = externalToxiproxyUrl(given);
  const key = `${mode} ${toxiproxyUrl ?? ''}`;
  if (decided && decidedFor === key) return decided;
  decidedFor = key;
  decided = (async () => {
    if (toxiproxyUrl !== undefined && mode !== 'off') {
      const why = `an external Toxiproxy (${toxiproxyUrl}) is outside a sealed run's own network namespace`;
      if (mode === 'on') throw new Error(`sealed mode was asked for, but ${why}: unset TOXIPROXY_URL or run with --no-seal`);
      return {
        sealed: false,
        note: `sealed mode not used: ${why}; runs are honest for honest code only; connections around the proxy are found through /proc`,
      };
    }
    // Off needs no probe: decideSealing does not look at it then.
    if (mode === 'off') return decideSealing(mode, { available: false, tools: {}, cgroups: { notes: [] }, ipv6: false, tookMs: 0 });
    return decideSealing(mode, await probeSealing());
  })();
  return decided;
}

/**
 * Whether runs may be sealed, as far as is known without the probe: root, sealing not asked off,
 * no external Toxiproxy. The run command opens the first run's place on this, while the probe runs.
 */
export function mightSeal(mode: SealMode = sealModeFromEnv(), given?: string): boolean {
  return mode !== 'off' && externalToxiproxyUrl(given) === undefined && process.getuid?.() === 0;
}

export type { SealMode };
