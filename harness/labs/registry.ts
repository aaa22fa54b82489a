// The labs, by the name a scenario's `protocol` gives, all loaded once when this module is
// (lab-folders.ts finds them by folder), for whatever needs them at once: commands, catalogue,
// reports. The core reaches labs only through these functions, lab-folders.ts and the interface
// in harness/lab-api/lab.ts (test/harness/labs/boundary.test.ts holds every other module to that).

import type { Lab } from '../lab-api/lab.js';
import { loadAllLabs } from './lab-folders.js';

export { LAB_DIRS_VARIABLE } from './lab-folders.js';

const LABS: readonly Lab[] = await loadAllLabs();

/** Lab names, the default (for a scenario without `protocol`, and commands that need one lab) first. */
export const labNames = (): string[] => LABS.map((lab) => lab.name);

export const labNamed = (name: string): Lab | undefined => LABS.find((lab) => lab.name === name);

export const allLabs = (): readonly Lab[] => LABS;

/** Whether a scenario's program under test is its lab's push server (`--server`), not a consumer. */
export const testsServer = (scenario: { protocol: string; lab: unknown }): boolean => labNamed(scenario.protocol)?.server?.testsServer(scenario.lab) ?? false;
