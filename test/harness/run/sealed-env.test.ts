// A sealed run's worker starts without NODE_EXTRA_CA_CERTS (harness/run/sealed.ts workerEnv):
// Node parses that bundle as it starts, and nothing a sealed run starts makes a TLS connection.
import { spawnSync } from 'node:child_process';
import t from 'tap';
import { workerEnv } from '../../../harness/run/sealed.js';

t.test('the worker’s environment is the harness’s without NODE_EXTRA_CA_CERTS', async (t) => {
  const harness = { PATH: '/usr/bin:/bin', HOME: '/root', NODE_EXTRA_CA_CERTS: '/etc/ssl/certs/ca-certificates.crt', CHAOSLAB_SEAL: 'on' };
  t.same(workerEnv(harness), { PATH: '/usr/bin:/bin', HOME: '/root', CHAOSLAB_SEAL: 'on' });
  t.equal(harness.NODE_EXTRA_CA_CERTS, '/etc/ssl/certs/ca-certificates.crt', 'the harness keeps its own');
  t.same(workerEnv({ PATH: '/bin' }), { PATH: '/bin' }, 'nothing else is taken away');
});

t.test('a Node process started with that environment sees no NODE_EXTRA_CA_CERTS', async (t) => {
  const env = workerEnv({ ...process.env, NODE_EXTRA_CA_CERTS: '/nonexistent/bundle.pem' });
  const seen = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.env.NODE_EXTRA_CA_CERTS))'], { env, encoding: 'utf8' });
  t.equal(seen.stdout, 'undefined');
  t.notMatch(seen.stderr, /extra certs/i, 'and Node did not try to read a bundle');
});
