// The labs, by the name a scenario's `protocol` gives. The one module that imports labs: the core
// reaches them only through this map and the interface in harness/lab-api/lab.ts
// (test/harness/labs/boundary.test.ts holds every other module to that).

import type { Lab } from '../lab-api/lab.js';
import { feedLab } from './feed/index.js';
import { ledgerLab } from './ledger/index.js';

const LABS: readonly Lab[] = [ledgerLab, feedLab];

/** Lab names, the default (for a scenario without `protocol`) first. */
export const labNames = (): string[] => LABS.map((lab) => lab.name);

export const labNamed = (name: string): Lab | undefined => LABS.find((lab) => lab.name === name);

export const allLabs = (): readonly Lab[] => LABS;
