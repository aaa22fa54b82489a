// The exported scenario JSON Schema (schemas/): current with the source, every catalogue file
// points an editor at it on its first line and validates against it, and it judges files the way
// the loader does.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import t from 'tap';
import { parse } from 'yaml';
import { labNames } from '../../../harness/labs/registry.js';
import {
  COMBINED_FILE,
  combinedSchema,
  exportedSchemas,
  labSchemaFile,
  SCHEMA_DIR,
  schemaHeaderFor,
  staleSchemas,
  writeSchemas,
} from '../../../harness/catalogue/export-schema.js';
import { loadScenario } from '../../../harness/catalogue/load.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const SCHEMAS = path.join(ROOT, SCHEMA_DIR);
const CATALOGUE = path.join(ROOT, 'scenarios');

const catalogueFiles = (): { lab: string; file: string }[] =>
  readdirSync(CATALOGUE).flatMap((lab) =>
    readdirSync(path.join(CATALOGUE, lab))
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => ({ lab, file: path.join(CATALOGUE, lab, f) })),
  );

/** A strict ajv (as the loader's) with every exported file compiled from disk. */
function validators() {
  const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false });
  const read = (name: string) => JSON.parse(readFileSync(path.join(SCHEMAS, name), 'utf8')) as object;
  return {
    combined: ajv.compile(read(COMBINED_FILE)),
    lab: Object.fromEntries(labNames().map((lab) => [lab, ajv.compile(read(labSchemaFile(lab)))])),
  };
}

t.test('the files in schemas/ are current with the source', async (t) => {
  const stale = staleSchemas(SCHEMAS);
  t.same(stale, [], `schemas/ is out of date (${stale.join(', ')}): run make schema`);
  t.same([...exportedSchemas().keys()].sort(), [COMBINED_FILE, ...labNames().map(labSchemaFile)].sort(), 'one file per lab plus the combined one');
});

t.test('staleSchemas names a missing or edited file; writeSchemas makes the folder current', async (t) => {
  const dir = t.testdir({});
  t.same(staleSchemas(dir).sort(), [...exportedSchemas().keys()].sort(), 'an empty folder: every file is stale');
  t.same(writeSchemas(dir).sort(), [...exportedSchemas().keys()].sort());
  t.same(staleSchemas(dir), [], 'current after writing');
  const ledger = path.join(dir, labSchemaFile('ledger'));
  writeFileSync(ledger, readFileSync(ledger, 'utf8').replace('"name"', '"nom"'));
  t.same(staleSchemas(dir), [labSchemaFile('ledger')], 'a hand edit is found');
});

t.test('every catalogue file starts with the yaml-language-server line naming its lab schema', async (t) => {
  const files = catalogueFiles();
  t.ok(files.length > 30, `${files.length} catalogue files`);
  for (const { lab, file } of files) {
    const first = readFileSync(file, 'utf8').split('\n')[0];
    t.equal(first, schemaHeaderFor(lab), `${path.relative(ROOT, file)}: first line`);
    const target = path.resolve(path.dirname(file), first!.replace(/^# yaml-language-server: \$schema=/, ''));
    t.equal(target, path.join(SCHEMAS, labSchemaFile(lab)), `${path.relative(ROOT, file)}: the line points at the exported file`);
  }
});

t.test('every catalogue file validates against its lab schema and the combined one', async (t) => {
  const v = validators();
  for (const { lab, file } of catalogueFiles()) {
    const data = parse(readFileSync(file, 'utf8'));
    const name = path.relative(ROOT, file);
    t.ok(v.lab[lab]!(data), `${name} against ${labSchemaFile(lab)}: ${JSON.stringify(v.lab[lab]!.errors)}`);
    t.ok(v.combined(data), `${name} against ${COMBINED_FILE}: ${JSON.stringify(v.combined.errors)}`);
  }
});

t.test('the combined schema picks the lab by protocol, the default lab without one', async (t) => {
  const v = validators();
  const ledger = parse(readFileSync(path.join(CATALOGUE, 'ledger', 'ack-crash.yaml'), 'utf8')) as Record<string, unknown>;
  const feed = parse(readFileSync(path.join(CATALOGUE, 'feed', 'feed-happy-path.yaml'), 'utf8')) as Record<string, unknown>;
  const { protocol: _p, ...ledgerWithoutProtocol } = ledger;
  t.ok(v.combined(ledgerWithoutProtocol), 'no protocol: the ledger lab (the default)');
  t.notOk(v.combined({ ...ledger, protocol: 'feed' }), 'ledger keys under protocol: feed are refused');
  t.notOk(v.combined({ ...feed, protocol: 'ledger' }), 'feed keys under protocol: ledger are refused');
  t.notOk(v.combined({ ...ledger, protocol: 'nosuchlab' }), 'an unknown protocol is refused');
  t.notOk(v.combined({ ...ledger, timeout_msec: 100 }), 'an unknown key is refused');
  const combined = combinedSchema();
  t.same(combined.if, { type: 'object', required: ['protocol'], properties: { protocol: { const: 'feed' } } });
  t.same(combined.then, { $ref: '#/definitions/feed' }, 'protocol: feed picks the feed lab');
  t.same(combined.else, { $ref: '#/definitions/ledger' }, 'anything else: the default lab');
});

t.test('the loader reads a file with the yaml-language-server line like any other', async (t) => {
  const text = readFileSync(path.join(CATALOGUE, 'ledger', 'ack-crash.yaml'), 'utf8');
  t.ok(text.startsWith(schemaHeaderFor('ledger')));
  const dir = t.testdir({ 'ack-crash.yaml': text, 'bad.yaml': `${schemaHeaderFor('ledger')}\nname: bad\ndescription: x\nevents: {deltas: [1]}\nwindow: 2\n` });
  const scenario = loadScenario(path.join(dir, 'ack-crash.yaml'));
  t.equal(scenario.name, 'ack-crash');
  t.equal(scenario.source, text, 'the source keeps the line, for the report');
  t.throws(() => loadScenario(path.join(dir, 'bad.yaml')), /bad\.yaml:5:1: window: unknown key/, 'line numbers count the header line');
});
