// The lab's words for the reports, by the protocol a journal names; a journal of a lab this
// harness does not have still renders, with every line shown as plain.

import type { Vocabulary } from '../lab-api/lab.js';
import { labNamed } from '../labs/registry.js';

const plain: Vocabulary = {
  lineClasses: [],
  classify: () => ({ cls: 'other' }),
  newRanker: () => () => 'landmark',
  describeStore: () => 'read',
  progress: { cls: '', word: 'done' },
};

export const vocabularyFor = (protocol: string): Vocabulary => labNamed(protocol)?.vocabulary ?? plain;
