// The ledger lab (seed 000): a scripted publisher with a finite retention log, a line protocol
// (RESUME, EVENT, ACK, RESYNC), consumers that run to their exit and are restarted by the harness.

import { join } from 'node:path';
import type { ChaosModel } from '../../lab-api/chaos-model.js';
import { defineLab, type RunContext } from '../../lab-api/lab.js';
import { projectRoot, shellQuote } from '../../base/paths.js';
import { LEDGER_FAULT_POINTS } from './scenario/fault-points.js';
import { type LedgerPlan, ledgerScenario } from './scenario/load.js';
import { ledgerVocabulary } from './report/vocabulary.js';

// The checker loads while the run's processes start: the run fetches it, the verdict awaits it.
const checker = () => import('./check-run.js');

export const ledgerLab = defineLab<LedgerPlan>({
  name: 'ledger',
  title: 'ledger lab: RESUME/EVENT/ACK/RESYNC over a line protocol; consumers run to their exit and are restarted',
  scenario: ledgerScenario,
  faultPoints: LEDGER_FAULT_POINTS,
  // Imported when a run starts: loading and listing scenarios need none of the publisher.
  run: async (ctx) => {
    void checker().catch(() => {}); // a checker that cannot load is the verdict's error
    return (await import('./run/run.js')).runLedger(ctx);
  },
  check: async (ctx: RunContext<LedgerPlan>) => (await checker()).checkRun(ctx),
  vocabulary: ledgerVocabulary,
  isDefault: true,
  scenariosDir: join(projectRoot, 'scenarios', 'ledger'),
  consumerDir: join(projectRoot, 'consumer', 'ledger'),
  referenceCommand: `node ${shellQuote(join(projectRoot, 'dist', 'consumer', 'ledger', 'typescript', 'client.js'))}`,
  mutantIndex: join(projectRoot, 'consumer', 'ledger', 'mutants', 'index.yaml'),
  happyPath: 'happy-path',
  consumerSignature: {
    opens: (line) => /^RESUME\b/.test(line),
    variables: ['CHAOSLAB_HOST', 'CHAOSLAB_PORT', 'CHAOSLAB_DB', 'CHAOSLAB_TIMEOUT_MS', 'CHAOSLAB_FAULT'],
  },
  chaos: async () => (await import('./chaos/chaos.js')).ledgerChaos as ChaosModel,
});
