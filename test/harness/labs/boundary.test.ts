// The lab seam, held by its imports: no core module imports a lab, only the registry does (by
// folder, harness/labs/registry.ts); a lab imports no other lab and not the registry; publishers
// and consumers stand alone (no harness).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import t from 'tap';

const ROOT = resolve(import.meta.dirname, '../../..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.(ts|py)$/.test(name) ? [path] : [];
  });
}

/** Every relative import of a TypeScript file, as a path from the project root. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:import|export)\s[^'"]*?from\s+'(\.[^']+)'|import\('(\.[^']+)'\)/g)].map((m) =>
    relative(ROOT, resolve(dirname(file), m[1] ?? m[2]!)),
  );
}

const labs = readdirSync(join(ROOT, 'harness', 'labs')).filter((name) => statSync(join(ROOT, 'harness', 'labs', name)).isDirectory());
/** The folders that belong to lab `name`. */
const labFolders = (name: string) => [`harness/labs/${name}/`, `publisher/${name}/`, `consumer/${name}/`, `protocol/${name}/`];
const labOf = (path: string): string | undefined => labs.find((name) => labFolders(name).some((folder) => path.startsWith(folder)));

t.test('the labs found', async (t) => {
  t.ok(labs.includes('ledger'), `labs: ${labs.join(', ')}`);
});

t.test('no core module imports a lab; only the registry does', async (t) => {
  const core = sources(join(ROOT, 'harness')).filter((f) => !relative(ROOT, f).startsWith('harness/labs/'));
  t.ok(core.length > 20, `${core.length} core modules checked`);
  const offences = core.flatMap((file) => importsOf(file).flatMap((target) => (labOf(target) ? [`${relative(ROOT, file)} imports ${target}`] : [])));
  t.same(offences, [], 'core modules import no lab folder');
  // The registry imports them by folder (no import of a lab is written anywhere): it has every one.
  const { labNames } = await import('../../../harness/labs/registry.js');
  t.same([...labNames()].sort(), [...labs].sort(), 'the registry holds every lab folder, and nothing else');
});

t.test('a lab imports no other lab, and not the registry', async (t) => {
  const offences: string[] = [];
  for (const lab of labs) {
    for (const folder of labFolders(lab)) {
      let files: string[] = [];
      try {
        files = sources(join(ROOT, folder)).filter((f) => f.endsWith('.ts'));
      } catch {
        continue;
      }
      for (const file of files) {
        for (const target of importsOf(file)) {
          const other = labOf(target);
          if (other && other !== lab) offences.push(`${relative(ROOT, file)} imports ${target} (lab ${other})`);
          if (target === 'harness/labs/registry.js') offences.push(`${relative(ROOT, file)} imports the registry`);
        }
      }
    }
  }
  t.same(offences, []);
});

t.test('publishers and consumers stand alone: they never import the harness', async (t) => {
  const files = [...sources(join(ROOT, 'publisher')), ...sources(join(ROOT, 'consumer'))].filter((f) => f.endsWith('.ts'));
  t.ok(files.length > 10, `${files.length} files checked`);
  const offences = files.flatMap((file) =>
    importsOf(file).flatMap((target) => (target.startsWith('harness/') ? [`${relative(ROOT, file)} imports ${target}`] : [])),
  );
  t.same(offences, []);
});

t.test('the check itself sees an offending import', async (t) => {
  const dir = t.testdir({ 'x.ts': "import { ledgerLab } from '../../../harness/labs/ledger/index.js';\nexport const y = await import('./z.js');\n" });
  const found = importsOf(join(dir, 'x.ts'));
  t.equal(found.length, 2);
  t.ok(found.some((p) => p.endsWith('harness/labs/ledger/index.js')));
});
