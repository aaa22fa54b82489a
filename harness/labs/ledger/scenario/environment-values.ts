// Which CHAOSLAB_* values the ledger contract accepts (section 1): the scenario loader refuses a
// `consumer.env` that is not bad on purpose, and the checker names what a consumer was given.

import { FAULT_PLAN_PATTERN } from './schema.js';

const FAULT_PLAN = new RegExp(FAULT_PLAN_PATTERN);
const POSITIVE = /^[1-9][0-9]*$/;

/** Why `value` is not a valid `name` under the contract (section 1), or undefined when it is valid. */
export function badValue(name: string, value: string): string | undefined {
  switch (name) {
    case 'CHAOSLAB_PORT':
      return POSITIVE.test(value) && Number(value) <= 65535 ? undefined : 'not a TCP port 1..65535';
    case 'CHAOSLAB_TIMEOUT_MS':
      return POSITIVE.test(value) && Number(value) <= 2 ** 31 - 1 ? undefined : 'not a positive number of milliseconds';
    case 'CHAOSLAB_FAULT':
      return FAULT_PLAN.test(value) ? undefined : value === '' ? 'set but empty' : 'not a fault plan';
    default:
      return value === '' ? 'empty' : undefined;
  }
}
