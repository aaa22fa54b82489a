// The `server.under_test.clients` key of a server scenario: clients the harness drives itself
// over raw TCP, each through its own proxy, to test the server's duties towards slow, bad and
// half-open clients (server contract sections 4 and 5). Their schema and their plan.

import type { JSONSchema } from 'json-schema-to-ts';

export const CLIENT_KINDS = ['slow-reader', 'never-reads', 'garbage', 'oversized', 'half-open', 'pinger'] as const;
export type ClientKind = (typeof CLIENT_KINDS)[number];

export const clientSchema = {
  type: 'object',
  description:
    "A client the harness drives itself (raw TCP, through a proxy of its own; every frame it receives is journaled on the wire as stream `client:<name>`). slow-reader: subscribes like the probe and reads at `reads_per_second` (default a tenth of the script's event rate), answering pings, pinging every idle_ms/3; never-reads: subscribes and reads nothing until the script is over, then drains what reached it; garbage: sends a line that is not JSON as its first frame; oversized: sends a 2 MiB line as its first frame; half-open: subscribes, reads, then sends nothing (it ignores pings); pinger: subscribes, pings every ping_ms/2 and answers the server's pings.",
  additionalProperties: false,
  required: ['name', 'kind'],
  properties: {
    name: { type: 'string', pattern: '^[a-z][a-z0-9-]{0,31}$', description: 'Unique among the clients: its proxy and its wire stream are named after it.' },
    kind: { type: 'string', enum: CLIENT_KINDS, description: 'What it does (see `clients`).' },
    quiet: {
      type: 'boolean',
      description: 'Follow an account that is not on the chain (a snapshot, then only heartbeats) instead of the probe’s topics. Default false.',
    },
    instance: {
      type: 'integer',
      minimum: 1,
      maximum: 4,
      description:
        'In a scene (instances, probes, steps): the server instance its proxy leads to; it stays with that instance whatever the steps do. Default 1.',
    },
    reads_per_second: {
      type: 'integer',
      minimum: 1,
      maximum: 1_000_000,
      description: 'slow-reader only: lines it reads a second; default a tenth of the script’s event rate for its accounts.',
    },
  },
} as const satisfies JSONSchema;

export interface ClientPlan {
  name: string;
  kind: ClientKind;
  quiet: boolean;
  /** The server instance it connects to (a scene's; 1 for a lone server). */
  instance: number;
  /** slow-reader: lines a second. */
  readsPerSecond?: number;
}

/** An account no seeded chain holds (addresses are drawn at random): a quiet client's topic. */
export const QUIET_ACCOUNT = `0x${'e'.repeat(40)}`;
