/**
 * The deployment files as far as this machine can check them: the Kubernetes manifests
 * (deploy/kubernetes/) validated against Kubernetes' own schemas by kubernetes-models and checked
 * for what docs/operations.md promises (two replicas on PostgreSQL, probes on routes the server
 * has, a PodDisruptionBudget and a Service selecting the pods, secrets by reference, non-root),
 * and the systemd unit (deploy/systemd/toolgate.service) by `systemd-analyze verify` where it
 * exists, and for its hardening directives always. Nothing is applied or started: no cluster here.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Deployment } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { Service } from 'kubernetes-models/v1';
import { parseAllDocuments } from 'yaml';
import { ROOT } from '../support/cli.js';

const KUBE = join(ROOT, 'deploy', 'kubernetes');
const UNIT = join(ROOT, 'deploy', 'systemd', 'toolgate.service');

interface Validating {
  validate(): void;
}
const MODELS: Record<string, (data: never) => Validating> = {
  'apps/v1 Deployment': (d) => new Deployment(d),
  'v1 Service': (d) => new Service(d),
  'policy/v1 PodDisruptionBudget': (d) => new PodDisruptionBudget(d),
};

// biome-ignore lint/suspicious/noExplicitAny: manifests are read as plain YAML and probed by path
type Doc = any;

function manifests(): Doc[] {
  const out: Doc[] = [];
  for (const file of readdirSync(KUBE).filter((f) => f.endsWith('.yaml'))) {
    for (const doc of parseAllDocuments(readFileSync(join(KUBE, file), 'utf8'))) {
      assert.deepEqual(doc.errors, [], file);
      out.push({ ...doc.toJS(), __file: file });
    }
  }
  return out;
}

function validate(doc: Doc): void {
  const { __file, ...data } = doc;
  const model = MODELS[`${data.apiVersion} ${data.kind}`];
  assert.ok(model, `${__file}: no schema for ${data.apiVersion} ${data.kind}`);
  model(data as never).validate();
}

test('every Kubernetes manifest validates against its schema, and a wrong field does not', () => {
  const docs = manifests();
  assert.deepEqual(docs.map((d) => d.kind).sort(), [
    'Deployment',
    'PodDisruptionBudget',
    'Service',
  ]);
  for (const doc of docs) validate(doc);
  // The check has teeth: a probe port of the wrong type and a replica count as text are refused.
  const deployment = docs.find((d) => d.kind === 'Deployment');
  const broken = structuredClone(deployment);
  broken.spec.replicas = 'two';
  assert.throws(() => validate(broken));
  const unknown = structuredClone(deployment);
  unknown.spec.template.spec.containers[0].ports[0].containerPort = { port: 8080 };
  assert.throws(() => validate(unknown));
});

test('the Deployment runs two non-root replicas on PostgreSQL with secrets by reference, probes on /healthz and /readyz, and a PDB and Service select its pods', () => {
  const docs = manifests();
  const deployment = docs.find((d) => d.kind === 'Deployment');
  const pdb = docs.find((d) => d.kind === 'PodDisruptionBudget');
  const service = docs.find((d) => d.kind === 'Service');
  assert.equal(deployment.spec.replicas, 2);
  assert.equal(deployment.spec.strategy.rollingUpdate.maxUnavailable, 0);
  const labels = deployment.spec.template.metadata.labels;
  assert.deepEqual(deployment.spec.selector.matchLabels, labels);
  assert.deepEqual(pdb.spec.selector.matchLabels, labels);
  assert.equal(pdb.spec.minAvailable, 1);
  assert.deepEqual(service.spec.selector, labels);

  const pod = deployment.spec.template.spec;
  assert.equal(pod.securityContext.runAsNonRoot, true);
  assert.equal(pod.securityContext.runAsUser, 65532);
  const [container] = pod.containers;
  assert.equal(container.securityContext.allowPrivilegeEscalation, false);
  assert.equal(container.securityContext.readOnlyRootFilesystem, true);
  assert.deepEqual(container.securityContext.capabilities.drop, ['ALL']);
  assert.equal(service.spec.ports[0].targetPort, container.ports[0].name);

  const secretRef = (name: string) =>
    container.env.find((e: Doc) => e.name === name)?.valueFrom?.secretKeyRef;
  for (const name of ['TOOLGATE_DB', 'TOOLGATE_ADMIN_TOKEN', 'TOOLGATE_MASTER_KEY']) {
    assert.equal(secretRef(name)?.name, 'toolgate-secrets', `${name} comes from a Secret`);
    assert.equal(
      container.env.find((e: Doc) => e.name === name).value,
      undefined,
      `${name} is not written in the manifest`,
    );
  }
  // The probes name routes the server has (src/edge/rest/server.ts), on the container's port.
  const server = readFileSync(join(ROOT, 'src', 'edge', 'rest', 'server.ts'), 'utf8');
  for (const probe of [container.readinessProbe, container.livenessProbe]) {
    assert.ok(server.includes(`'${probe.httpGet.path}',`), probe.httpGet.path);
    assert.equal(probe.httpGet.port, container.ports[0].name);
  }
  assert.equal(container.readinessProbe.httpGet.path, '/readyz');
  // The data folder and /tmp are the only writable places, and the signing keys are shared.
  const mounts = container.volumeMounts.map((m: Doc) => m.mountPath).sort();
  assert.deepEqual(mounts, ['/data', '/tmp']);
  assert.equal(pod.volumes.find((v: Doc) => v.name === 'keys').secret.secretName, 'toolgate-keys');
});

const REQUIRED_DIRECTIVES: Record<string, RegExp> = {
  User: /^toolgate$/,
  NoNewPrivileges: /^yes$/,
  ProtectSystem: /^strict$/,
  ReadWritePaths: /^\/var\/lib\/toolgate$/,
  PrivateTmp: /^yes$/,
  ProtectHome: /^yes$/,
  CapabilityBoundingSet: /^$/,
  Environment: /TOOLGATE_DATA_DIR=\/var\/lib\/toolgate/,
  // Not `yes`: bubblewrap creates these namespaces for every namespace sandbox.
  RestrictNamespaces: /^user pid ipc uts net cgroup mnt$/,
  KillSignal: /^SIGTERM$/,
};

test('the systemd unit carries the hardening directives, and systemd-analyze verify finds nothing to say', async (t) => {
  const directives = new Map<string, string[]>();
  for (const line of readFileSync(UNIT, 'utf8').split('\n')) {
    const m = /^([A-Za-z]+)=(.*)$/.exec(line.trim());
    if (m?.[1]) directives.set(m[1], [...(directives.get(m[1]) ?? []), m[2] ?? '']);
  }
  for (const [key, pattern] of Object.entries(REQUIRED_DIRECTIVES)) {
    const values = directives.get(key) ?? [];
    assert.ok(
      values.some((v) => pattern.test(v)),
      `${key}= ${pattern} (has ${JSON.stringify(values)})`,
    );
  }
  // Left off on purpose, said in the unit: each would stop bubblewrap (namespace sandbox).
  for (const key of [
    'ProtectKernelTunables',
    'ProtectKernelLogs',
    'ProtectHostname',
    'PrivateUsers',
  ]) {
    assert.equal(directives.get(key)?.includes('yes') ?? false, false, `${key}=yes`);
  }
  assert.equal(directives.get('RestrictNamespaces')?.includes('yes'), false);

  // verify checks every key and that the commands exist: the unit's /opt/toolgate is this
  // checkout here (its node_modules/.bin/node and dist/ are the ones the unit runs).
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-unit-'));
  try {
    const unit = join(dir, 'toolgate.service');
    writeFileSync(
      unit,
      readFileSync(UNIT, 'utf8').replaceAll('/opt/toolgate', ROOT.replace(/\/$/, '')),
    );
    const ran = await new Promise<{ code: number | string; stderr: string } | null>((done) =>
      execFile('systemd-analyze', ['verify', unit], (err, _stdout, stderr) => {
        if ((err as { code?: unknown } | null)?.code === 'ENOENT') done(null);
        else done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr });
      }),
    );
    if (ran === null) {
      t.diagnostic('no systemd-analyze here: the directives above were checked by parsing only');
      return;
    }
    const said = ran.stderr
      .split('\n')
      .filter((l) => l.includes('toolgate.service'))
      .join('\n');
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(said, '', 'systemd-analyze verify has nothing to say about the unit');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
