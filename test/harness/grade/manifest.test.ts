// Submission manifests: chaoslab.json / .yaml, the defaults (and the grader saying which),
// mistakes that name the file and the field, and manifests that are no plain file (a link, a
// FIFO, a socket), refused by name without reading (or blocking on) what they lead to.
import { execFileSync } from 'node:child_process';
import { chmodSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { DEFAULTS, ManifestError, MANIFEST_MAX_BYTES, manifestHow, parseManifest, readManifest } from '../../../harness/grade/manifest.js';

t.test('chaoslab.json and chaoslab.yaml', async (t) => {
  const dir = t.testdir({
    j: { 'chaoslab.json': JSON.stringify({ lab: 'ledger', command: ' ./run ', build: 'go build -o run .' }) },
    y: { 'chaoslab.yaml': 'lab: feed\ncommand: python3 main.py\n' },
  });
  t.same(readManifest(join(dir, 'j')), { lab: 'ledger', command: './run', build: 'go build -o run .', source: 'chaoslab.json' });
  t.same(readManifest(join(dir, 'y')), { lab: 'feed', command: 'python3 main.py', source: 'chaoslab.yaml' });
});

t.test('without a manifest: the first default that fits, and it says which', async (t) => {
  const dir = t.testdir({
    py: { 'client.py': '', 'consumer.mjs': '' },
    mjs: { 'consumer.mjs': '' },
    go: { 'go.mod': 'module x', 'main.go': '' },
    none: { 'README.md': '' },
    folder: { 'client.py': {} },
  });
  t.same(readManifest(join(dir, 'py')), { command: 'python3 client.py', source: 'no manifest: the default for client.py' });
  t.equal(readManifest(join(dir, 'mjs')).command, 'node consumer.mjs');
  t.same(readManifest(join(dir, 'go')), {
    command: './consumer',
    build: 'go build -o consumer .',
    source: 'no manifest: the default for go.mod (build `go build -o consumer .`)',
  });
  t.throws(() => readManifest(join(dir, 'none')), { name: 'ManifestError', message: /none: no chaoslab\.json or chaoslab\.yaml, and none of client\.py, / });
  t.throws(() => readManifest(join(dir, 'folder')), ManifestError, 'a folder named client.py is no default');
  t.ok(DEFAULTS.every((d) => d.command.length > 0));
});

t.test('a server: beside the consumer or alone; how it starts, in words', async (t) => {
  const dir = t.testdir({
    both: { 'chaoslab.yaml': 'lab: feed\ncommand: python3 client.py\nserver: python3 server.py\n' },
    alone: { 'chaoslab.json': JSON.stringify({ server: 'node server.js', build: 'npm ci' }) },
    neither: { 'chaoslab.json': JSON.stringify({ lab: 'feed' }) },
    empty: { 'chaoslab.json': JSON.stringify({ server: ' ' }) },
  });
  const both = readManifest(join(dir, 'both'));
  t.same(both, { lab: 'feed', command: 'python3 client.py', server: 'python3 server.py', source: 'chaoslab.yaml' });
  t.equal(manifestHow(both), 'chaoslab.yaml: consumer `python3 client.py`, server `python3 server.py`');
  const alone = readManifest(join(dir, 'alone'));
  t.same(alone, { server: 'node server.js', build: 'npm ci', source: 'chaoslab.json' });
  t.equal(manifestHow(alone), 'chaoslab.json: server `node server.js`');
  t.equal(manifestHow({ source: 'chaoslab.json', command: 'x' }), 'chaoslab.json: `x`', 'a consumer alone: the words of old');
  t.throws(() => readManifest(join(dir, 'neither')), /chaoslab\.json: command: must be a non-empty string \(required\)/);
  t.throws(() => readManifest(join(dir, 'empty')), /chaoslab\.json: server: must be a non-empty string$/);
});

t.test('mistakes name the file and the field', async (t) => {
  const bad = (file: string, text: string, pattern: RegExp) => t.throws(() => parseManifest(file, text, file), { name: 'ManifestError', message: pattern });
  bad('s/chaoslab.json', '{', /^s\/chaoslab\.json: not valid JSON/);
  bad('s/chaoslab.yaml', 'command: [', /^s\/chaoslab\.yaml: not valid YAML/);
  bad('s/chaoslab.json', '[]', /must be a mapping with lab, command/);
  bad('s/chaoslab.json', '{"lab":"ledger"}', /^s\/chaoslab\.json: command: must be a non-empty string \(required\)/);
  bad('s/chaoslab.json', '{"command":"x","build":7}', /build: must be a non-empty string$/);
  bad('s/chaoslab.json', '{"command":"x\\ny"}', /command: must be one line/);
  bad('s/chaoslab.json', '{"command":"x","run":"y"}', /run: unknown field \(lab, command, server, build\)/);
  const dir = t.testdir({ 'chaoslab.json': '{"command":"a"}', 'chaoslab.yaml': 'command: b' });
  t.throws(() => readManifest(dir), { message: /chaoslab\.json and chaoslab\.yaml both exist/ });
});

t.test('a manifest that is no plain file is refused by name, its content never read', async (t) => {
  const dir = t.testdir({
    secret: '{"command": "SECRET-c41d"}',
    linked: {},
    dangling: {},
    piped: {},
    socket: {},
    big: { 'chaoslab.json': `{"command": "x", "lab": "${'y'.repeat(MANIFEST_MAX_BYTES)}"}` },
  });
  chmodSync(join(dir, 'secret'), 0o600);
  symlinkSync(join(dir, 'secret'), join(dir, 'linked', 'chaoslab.json'));
  symlinkSync(join(dir, 'nowhere'), join(dir, 'dangling', 'chaoslab.yaml'));
  execFileSync('mkfifo', [join(dir, 'piped', 'chaoslab.json')]);
  // Bound by a relative name: the fixture's absolute path is longer than a socket's may be.
  execFileSync('python3', ['-c', 'import socket; socket.socket(socket.AF_UNIX).bind("chaoslab.json")'], { cwd: join(dir, 'socket') });
  const refused = (name: string, what: RegExp) => {
    const error = t.throws(() => readManifest(join(dir, name)), ManifestError) as unknown as Error;
    t.match(error.message, what, name);
    t.notMatch(error.message, /SECRET/, `${name}: nothing of what it leads to`);
  };
  refused('linked', /linked\/chaoslab\.json: is a symbolic link, not a file: it was not read$/);
  refused('dangling', /dangling\/chaoslab\.yaml: is a symbolic link, not a file/);
  // Opened without blocking: this returns at once (a blocking open would hang the test).
  refused('piped', /piped\/chaoslab\.json: is a named pipe \(FIFO\), not a file/);
  refused('socket', /socket\/chaoslab\.json: is a socket, not a file/);
  refused('big', /big\/chaoslab\.json: is \d+ bytes, more than the 65536 a manifest may have/);
});
