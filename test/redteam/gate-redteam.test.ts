/**
 * Replays the gate red-team corpora through the real REST API: a Fastify server listening on
 * 127.0.0.1, real `fetch` (raw `node:http` where a path must reach the server unnormalized), one
 * toolgate per corpus file on a fresh database, the demo catalog plus gate-setup.yaml applied
 * over POST /v1/apply, agent keys issued over REST. Every case is its own named test; a case
 * marked `known_bug` is skipped with that reason, so the suite stays green and the bug visible
 * (TOOLGATE_REDTEAM_KNOWN_BUGS=run runs them, to see which a fix has made pass).
 *
 * Besides what each step expects, every gate answer is checked for what must hold of all of
 * them: a denial is in the audit log with the same code and rule, an allowed or pending call has
 * its audit records, and no answer names a tool outside the caller's session set unless the
 * caller named it first.
 *
 * The data format (gate-attacks.json, gate-benign.json) is described by the `Case` and `Step`
 * types below. Strings in `http` paths, headers and bodies may hold `{session}`,
 * `{session:<alias>}`, `{approval:<saved>}`, `{call:<saved>}`, `{key:<agent>}` and
 * `{admin_token}`. Argument values may be `{ "$repeat": [text, n] }` (a long string),
 * `{ "$array": [text, n] }` (n strings, `{j}` in text replaced by the index) or
 * `{ "$deep": { "depth": n, "array"?: true } }` (nesting sent as raw JSON text, so the runner
 * needs no recursion to build it). In the copies of a `race`, `{i}` in any string of the call
 * becomes the copy's index. Run ids named in a case get a per-case suffix.
 *
 * Decisions (`approve`, `approve_all`, `reject`, `approve_change`) are made as operator accounts
 * through the admin API (what REST does once a personal token has authenticated the operator):
 * `approver` names the account, default `reviewer` (an approver with no second factor). A step
 * with `auth` (an agent trying) or `over: "rest"` goes over REST instead, with that credential or
 * the bootstrap admin token.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { parseAllDocuments, stringify } from 'yaml';
import { ERROR_CODES, isToolgateError } from '../../src/core/index.js';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { totpAt } from '../../src/domain/decisions/index.js';
import { BOOTSTRAP_OPERATOR } from '../../src/domain/operators/index.js';
import { buildServer } from '../../src/edge/rest/index.js';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { type Backend, backends } from '../support/backends.js';
import { confirmDeciders, operator } from '../support/operators.js';
import { makePathWorkspace } from '../support/path-workspace.js';
import { approvePendingReviews, REVIEWER as SETUP_REVIEWER } from '../support/reviews.js';

// ---------------------------------------------------------------------------------------------
// The data format

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

interface Expect {
  readonly status: number;
  readonly code?: string;
  /** `details.rule` of a gate answer. */
  readonly rule?: string;
  /**
   * The rule the audit record keeps when the answer withholds the reason (a tool quarantined
   * after the session opened answers `resolve.not_registered`); by default the answer's rule.
   */
  readonly audited_rule?: string;
  readonly kind?: 'allow' | 'pending_approval';
  /** RegExp source the error message must match. */
  readonly message_match?: string;
  /** RegExp source one of `warnings` must match; `false`: no warnings at all. */
  readonly warning_match?: string | false;
  /** Partial deep match of `output` / `rendered` / the whole body. */
  readonly output?: Json;
  readonly rendered?: Json;
  readonly body?: Json;
  /** `output.<key>` must match the RegExp source. */
  readonly output_regex?: Readonly<Record<string, string>>;
  /** None of these may occur in the response text; all of `text_includes` must. */
  readonly text_excludes?: readonly string[];
  readonly text_includes?: readonly string[];
  /** Byte-identical (but for call_id) to the answer for a tool name nobody registered. */
  readonly same_as_unknown?: true;
  /** The approval id differs from / equals the one saved under this name. */
  readonly new_approval?: string;
  readonly same_approval?: string;
  /** The call id equals the one saved under this name (an idempotent replay). */
  readonly same_call?: string;
}

interface CallStep {
  readonly call?: Json;
  readonly as?: string;
  readonly session?: string;
  readonly arguments?: Json;
  readonly idempotency_key?: Json;
  readonly model?: Json;
  /** Extra top-level members of the call envelope. */
  readonly envelope?: Readonly<Record<string, Json>>;
  /** Envelope members left out. */
  readonly omit?: readonly string[];
  readonly expect: Expect;
  readonly save?: string;
}

/** Issues the agent a new key: later steps as it are another principal of the same agent. */
interface IssueKeyStep {
  readonly issue_key: string;
}

interface OpenSessionStep {
  readonly open_session: string;
  readonly as: string;
  readonly on_behalf_of?: string;
  readonly run_id?: string;
  readonly ttl_seconds?: number;
}

/** Who decides when a step names no approver: an approver account with no second factor. */
const REVIEWER = operator('reviewer');

type TotpMode = 'valid' | 'replay' | 'previous' | 'wrong' | 'malformed' | 'none';

interface ApproveStep {
  readonly approve: string;
  readonly approver?: string;
  /** `valid` advances the clock one TOTP step first; `other:<approver>` is that one's code. */
  readonly totp?: TotpMode | `other:${string}` | `literal:${string}`;
  readonly reason?: string;
  readonly extra?: Readonly<Record<string, Json>>;
  readonly auth?: string;
  /** Over REST with the bootstrap admin token (wire-level checks), not as an operator. */
  readonly over?: 'rest';
  readonly expect?: Expect;
}

interface ApproveChangeStep {
  /** The subject of a pending four-eyes change, e.g. `grant iam:grant to tier-bot`. */
  readonly approve_change: string;
  readonly approver: string;
  readonly totp?: ApproveStep['totp'];
  readonly expect?: Expect;
}

interface RejectStep {
  readonly reject: string;
  readonly reason?: string;
  readonly expect?: Expect;
}

type AdminAction =
  | 'grant'
  | 'revoke_grant'
  | 'deprecate'
  | 'retire'
  | 'quarantine'
  | 'release'
  | 'apply'
  | 'revoke_key'
  | 'register'
  | 'activate';

interface AdminStep {
  readonly admin: AdminAction;
  readonly agent?: string;
  readonly capabilities?: readonly string[];
  readonly tool?: string;
  readonly version?: string;
  readonly window_days?: number;
  readonly documents?: readonly Json[];
  /** For `register`: a clone of a gate-setup.yaml tool. */
  readonly template?: string;
  readonly draft?: boolean;
  readonly expect?: Expect;
}

interface HttpStep {
  readonly http: {
    readonly method: string;
    readonly path: string;
    readonly body?: Json;
    /** A body sent as this exact text. */
    readonly text?: string;
    readonly content_type?: string;
    /** `agent:<name>`, `admin`, `none`, `raw:<Authorization value>`, `forged:<agent>`,
     * `tampered:<agent>`, `revoked:<agent>`, `header:<name>:<value>`. */
    readonly auth: string;
    /** Send the path byte for byte (node:http), without URL normalization. */
    readonly raw_path?: boolean;
  };
  readonly expect: Expect;
  readonly save?: string;
}

interface RaceStep {
  /** How many copies of `step`; `{i}` in its string arguments becomes the copy's index. */
  readonly race: number;
  readonly step: CallStep;
  /** Sessions the copies are spread over, round robin (default: the step's own). */
  readonly sessions?: readonly string[];
  readonly sequential?: boolean;
  /**
   * "200", "202", or "<status> <code> <rule>" → how many answers of that kind, exactly or as an
   * inclusive [min, max] where the interleaving decides (a kind not listed must not occur).
   */
  readonly expect_counts: Readonly<Record<string, Count>>;
  /** How many distinct call ids the 200 answers carry (one execution per idempotency key). */
  readonly distinct_allowed_calls?: number;
  /** How many distinct approval ids the 202 answers carry. */
  readonly distinct_approvals?: number;
  readonly save_all?: string;
}

interface ParallelStep {
  readonly parallel: readonly CallStep[];
  readonly expect_counts: Readonly<Record<string, Count>>;
}

type Count = number | readonly [number, number];

interface ApproveAllStep {
  /** Approves every approval saved by a race's `save_all`. */
  readonly approve_all: string;
}

interface AdvanceStep {
  readonly advance_seconds: number;
}

interface ApprovalStatusStep {
  readonly approval_status: string;
  readonly is: string;
}

type Step =
  | CallStep
  | OpenSessionStep
  | IssueKeyStep
  | ApproveStep
  | ApproveChangeStep
  | RejectStep
  | AdminStep
  | HttpStep
  | RaceStep
  | ParallelStep
  | ApproveAllStep
  | AdvanceStep
  | ApprovalStatusStep;

interface SessionDef {
  readonly as: string;
  readonly on_behalf_of?: string;
  readonly run_id?: string;
  readonly ttl_seconds?: number;
}

interface Case {
  readonly name: string;
  readonly category: string;
  /** The agent of steps that name none. */
  readonly as?: string;
  readonly setup?: {
    /** Tools cloned from gate-setup.yaml under fresh ids, registered before the first step. */
    readonly tools?: readonly {
      template: string;
      id: string;
      version?: string;
      /** Replaces the template's description (e.g. with a poisoned one). */
      description?: string;
    }[];
    readonly sessions?: Readonly<Record<string, SessionDef>>;
  };
  readonly steps: readonly Step[];
  /** Also replayed on PostgreSQL (the benign corpus always is). */
  readonly pg?: boolean;
  readonly known_bug?: string;
  /** The bug shows on these backends only; elsewhere the case runs. */
  readonly known_bug_backends?: readonly string[];
}

// ---------------------------------------------------------------------------------------------
// Fixtures

const ADMIN_TOKEN = 'redteam-admin-token-0123456789abcdef';
/** Set to run the `known_bug` cases too, e.g. to see whether a fix made one pass. */
const RUN_KNOWN_BUGS = process.env.TOOLGATE_REDTEAM_KNOWN_BUGS === 'run';
const START = Date.parse('2026-06-01T00:00:10Z');
/** Written literally in gate-setup.yaml: `$` then `{WORKSPACE}`. */
const WORKSPACE_PLACEHOLDER = '$' + '{WORKSPACE}';
const TOTP_STEP_MS = 30_000;
const UNKNOWN_TOOL = 'zz_unregistered_baseline';
const GATE_DENY_CODES = new Set([
  'TOOL_NOT_REGISTERED',
  'TOOL_RETIRED',
  'INPUT_INVALID',
  'GRANT_MISSING',
  'POLICY_DENIED',
  'RATE_LIMITED',
  'BUDGET_EXCEEDED',
  'TOXIC_FLOW',
  'APPROVAL_INVALID',
  'IDEMPOTENCY_CONFLICT',
  'OUTPUT_INVALID',
  'EXECUTION_FAILED',
]);
const CATEGORIES = {
  attacks: [
    'schema-smuggling',
    'unregistered-tool-probing',
    'grant-self-escalation',
    'approval-tampering',
    'rate-limit-budget-evasion',
    'ssrf-path',
    'lifecycle',
    'multi-step-injection',
  ],
  benign: [
    'demo-tools',
    'approvals',
    'url-arguments',
    'path-arguments',
    'on-behalf-of',
    'lifecycle',
    'idempotency',
    'limits',
    'fronts',
    'known-bug',
  ],
} as const;

const here = (file: string) => new URL(file, import.meta.url);
const DEMO_CATALOG = readFileSync(here('../../demo/catalog.yaml'), 'utf8');
const SETUP_TEXT = readFileSync(here('./gate-setup.yaml'), 'utf8');
const corpora = {
  attacks: JSON.parse(readFileSync(here('./gate-attacks.json'), 'utf8')) as Case[],
  benign: JSON.parse(readFileSync(here('./gate-benign.json'), 'utf8')) as Case[],
};

/**
 * Every case is its own conversation, yet the cases share one world and its agents: without
 * this, instruction-like text one attack case brought in would be remembered for the (agent,
 * user) over a day (`ceilings.untrusted_window_seconds`) and hold the benign cases after it for
 * approval. Each agent remembers untrusted text for its run only here; the memory across runs is
 * tested in test/gate/after-injection.test.ts and test/gate/provenance.test.ts.
 */
function ownConversations(text: string): string {
  return parseAllDocuments(text)
    .map((doc) => {
      const value = doc.toJS() as { kind?: string; spec?: Record<string, Json> } | null;
      if (value?.kind === 'Agent' && value.spec && value.spec.ceilings === undefined) {
        value.spec.ceilings = { untrusted_window_seconds: 0 };
      }
      return stringify(value);
    })
    .join('---\n');
}

/** Tool specs of gate-setup.yaml by id: the templates `setup.tools` clones. */
const SETUP_TOOLS = new Map<string, Record<string, Json>>();
for (const doc of parseAllDocuments(SETUP_TEXT)) {
  const value = doc.toJS() as { kind?: string; spec?: Record<string, Json> } | null;
  if (value?.kind === 'Tool' && value.spec) SETUP_TOOLS.set(String(value.spec.id), value.spec);
}

// ---------------------------------------------------------------------------------------------
// Helpers

interface Reply {
  readonly status: number;
  readonly text: string;
  readonly contentLength: string;
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field
  readonly body: any;
}

/** True when every member of `expected` is in `actual` (arrays: element by element, prefix). */
function partialMatch(actual: unknown, expected: unknown, where = ''): string | null {
  if (expected === null || typeof expected !== 'object') {
    return Object.is(actual, expected)
      ? null
      : `${where || '/'}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length < expected.length)
      return `${where || '/'}: expected an array of at least ${expected.length}, got ${JSON.stringify(actual)}`;
    for (const [i, e] of expected.entries()) {
      const miss = partialMatch(actual[i], e, `${where}/${i}`);
      if (miss) return miss;
    }
    return null;
  }
  if (typeof actual !== 'object' || actual === null || Array.isArray(actual))
    return `${where || '/'}: expected an object, got ${JSON.stringify(actual)}`;
  for (const [k, e] of Object.entries(expected)) {
    if (!Object.hasOwn(actual, k)) return `${where}/${k}: missing`;
    const miss = partialMatch((actual as Record<string, unknown>)[k], e, `${where}/${k}`);
    if (miss) return miss;
  }
  return null;
}

/**
 * Serializes a call body, expanding `$repeat`, `$array` and `$deep` and keeping own `__proto__`
 * members as data (never as a prototype). Deep nesting is spliced in as text: JSON.stringify
 * would recurse once per level.
 */
function serializeWithExpansions(value: Json, vary?: number): string {
  const raws: string[] = [];
  const expand = (v: Json): Json => {
    if (typeof v === 'string') return vary === undefined ? v : v.replaceAll('{i}', String(vary));
    if (v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) return v.map(expand);
    const keys = Object.keys(v);
    if (keys.length === 1 && keys[0] === '$repeat') {
      const [text, n] = v.$repeat as [string, number];
      return text.repeat(n);
    }
    if (keys.length === 1 && keys[0] === '$array') {
      const [item, n] = v.$array as [string, number];
      return Array.from({ length: n }, (_, j) => item.replaceAll('{j}', String(j)));
    }
    if (keys.length === 1 && keys[0] === '$deep') {
      const { depth, array } = v.$deep as { depth: number; array?: boolean };
      const text = array
        ? `${'['.repeat(depth)}1${']'.repeat(depth)}`
        : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
      raws.push(text);
      return `\u0000RAW${raws.length - 1}\u0000`;
    }
    const out: { [key: string]: Json } = {};
    for (const [k, x] of Object.entries(v)) {
      Object.defineProperty(out, k, {
        value: expand(x),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  };
  let text = JSON.stringify(expand(value));
  raws.forEach((raw, i) => {
    text = text.replace(`"\\u0000RAW${i}\\u0000"`, raw);
  });
  return text;
}

function isCall(step: Step): step is CallStep {
  return 'expect' in step && !('http' in step) && ('call' in step || 'omit' in step);
}

function describeReply(r: Reply): string {
  return `${r.status} ${r.text.length > 600 ? `${r.text.slice(0, 600)}…` : r.text}`;
}

// ---------------------------------------------------------------------------------------------
// One toolgate with its server, for one corpus on one backend

class World {
  tg: Gateway | null = null;
  app: FastifyInstance | null = null;
  inspector: Store | null = null;
  base = '';
  workspace = '';
  dropDb: (() => Promise<void>) | null = null;
  nowMs = START;
  approverToken = '';
  /** Enrolled through the admin API when the world starts. */
  readonly totpSecrets = new Map<string, string>();
  readonly lastTotp = new Map<string, string>();
  readonly keys = new Map<string, { apiKey: string; keyId: string }>();
  readonly revokedKeys = new Map<string, string>();
  readonly toolIds = new Set<string>();

  async start(backend: Backend): Promise<void> {
    const fresh = await backend.fresh();
    this.dropDb = fresh.drop;
    this.workspace = await makePathWorkspace('toolgate-gate-redteam-');
    const executor = demoExecutor()
      .register('rt.echo', (a) => ({ status: 'ok', echo: a }))
      .register('rt.fetch', (a) => ({ status: 'ok', url: String(a.url) }))
      .register('rt.read', (a) => ({ status: 'ok', path: String(a.path) }))
      .register('rt.send', () => ({ status: 'sent' }))
      .register('rt.search', () => ({ status: 'ok', results: [] }));
    this.tg = await openGateway({
      db: fresh.url,
      executor,
      clock: () => new Date(this.nowMs),
      masterKey: MasterKey.generate(),
      // Every case is its own conversation, and the cases share one world without closing their
      // sessions: the per-agent caps (tested in test/http/agent-caps.test.ts) would otherwise
      // count the whole corpus as one agent's sessions.
      caps: { maxSessionsPerAgent: 1_000_000, maxPendingApprovalsPerAgent: 1_000_000 },
    });
    for (const approver of ['sec-approver', 'second-approver']) {
      // A second factor belongs to an operator account.
      await this.tg.admin.operators.create(BOOTSTRAP_OPERATOR, {
        id: approver,
        roles: ['approver'],
      });
      const e = await this.tg.admin.secondFactor.enroll(BOOTSTRAP_OPERATOR, approver);
      this.totpSecrets.set(approver, e.secret);
    }
    this.inspector = await openStore(fresh.url);
    // The race cases send up to 40 calls of one agent at once to test the gate's atomicity; the
    // admission shares in front of it (tested in test/http/admission.test.ts) would answer some of
    // them 429/503 before the gate decides, depending on the host's speed.
    this.app = await buildServer(this.tg, {
      adminToken: ADMIN_TOKEN,
      admission: { maxInFlight: 256, maxInFlightPerCaller: 256, maxEventLoopDelayMs: 0 },
    });
    this.base = await this.app.listen({ host: '127.0.0.1', port: 0 });
    await this.tg.operators.create(BOOTSTRAP_OPERATOR, { id: 'reviewer', roles: ['approver'] });
    this.approverToken = (
      await this.tg.operators.issueToken(BOOTSTRAP_OPERATOR, {
        name: 'red team',
        expiresInDays: 366,
        operatorId: 'reviewer',
      })
    ).token;
    // Confirmed the documented way (after the bootstrap token's last account: the world's first
    // admin is then set up), so both approvers count in a two-approver change.
    await confirmDeciders(this.tg.admin, ['sec-approver', 'second-approver'], new Date(this.nowMs));
    for (const text of [
      ownConversations(DEMO_CATALOG),
      ownConversations(SETUP_TEXT.replaceAll(WORKSPACE_PLACEHOLDER, this.workspace)),
    ]) {
      const r = await this.send('POST', '/v1/apply', {
        text,
        contentType: 'application/yaml',
        auth: 'admin',
      });
      assert.equal(r.status, 200, describeReply(r));
    }
    // The corpus is about the gate: its restricted tools start reviewed, as a live catalog's are.
    await this.approveReviews();
    await this.approveChanges();
    // The demo's refund_order carries its own credential (a minted JWT): without its signing
    // secret every refund would stop at CREDENTIAL_UNAVAILABLE, before the rules under test.
    await this.tg.secrets.set(
      { toolId: 'refund_order', name: 'payments-api' },
      'redteam-demo-payments-signing-key-0123456789abcdef',
      { id: 'redteam-admin', via: 'library' },
    );
    const agents = await this.send('GET', '/v1/agents', { auth: 'admin' });
    for (const a of agents.body.agents as { id: string }[]) await this.issueKey(a.id);
    const tools = await this.send('GET', '/v1/tools', { auth: 'admin' });
    for (const t of tools.body.tools as { id: string }[]) this.toolIds.add(t.id);
  }

  /**
   * Privileged grants and irreversible tools wait for approvers (four eyes, C4): both
   * test approvers approve every pending change, each with a TOTP code of a fresh 30 s step.
   */
  /** Approves every pending security review as a test approver (the library, not REST). */
  async approveReviews(): Promise<void> {
    assert.ok(this.tg);
    // Not the `reviewer` account: the bootstrap token set that one up, and what the token
    // registers an account it set up does not review (attack round 11, F3).
    await approvePendingReviews(this.tg, { ...SETUP_REVIEWER, id: 'setup-reviewer' });
  }

  async approveChanges(): Promise<void> {
    const pending = await this.send('GET', '/v1/changes?status=pending', { auth: 'admin' });
    // A gateway without the change desk has nothing waiting.
    if (pending.status === 404) return;
    assert.equal(pending.status, 200, describeReply(pending));
    for (const change of pending.body.changes as { id: string; required: number }[]) {
      for (const approver of ['sec-approver', 'second-approver'].slice(0, change.required)) {
        this.nowMs += TOTP_STEP_MS;
        const r = await this.decide((admin) =>
          admin.changes.approve(change.id, operator(approver), this.totp(approver, this.nowMs)),
        );
        assert.equal(r.status, 200, describeReply(r));
      }
    }
  }

  async stop(): Promise<void> {
    await this.app?.close();
    await this.inspector?.close();
    await this.tg?.close();
    await this.dropDb?.();
    if (this.workspace)
      await rm(this.workspace, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  }

  async issueKey(agent: string): Promise<void> {
    const r = await this.send('POST', `/v1/agents/${agent}/keys`, { auth: 'admin' });
    assert.equal(r.status, 201, describeReply(r));
    this.keys.set(agent, { apiKey: r.body.api_key, keyId: r.body.key_id });
  }

  key(agent: string): string {
    const k = this.keys.get(agent);
    if (!k) throw new Error(`no key for agent ${agent} (not in the setup?)`);
    return k.apiKey;
  }

  authHeader(auth: string): Record<string, string> {
    if (auth === 'none') return {};
    if (auth === 'admin') return { authorization: `Bearer ${ADMIN_TOKEN}` };
    // Deciding approvals and changes takes an approver's account; the admin token never is one.
    if (auth === 'approver') return { authorization: `Bearer ${this.approverToken}` };
    const [kind, ...rest] = auth.split(':');
    const arg = rest.join(':');
    switch (kind) {
      case 'agent':
        return { authorization: `Bearer ${this.key(arg)}` };
      case 'raw':
        return { authorization: arg };
      case 'forged': {
        // The agent's real key id with a secret of the right shape that was never issued.
        const keyId = this.keys.get(arg)?.keyId ?? '';
        return { authorization: `Bearer tgk_${keyId}_${'A'.repeat(43)}` };
      }
      case 'tampered': {
        const k = this.key(arg);
        const last = k.at(-1) === 'A' ? 'B' : 'A';
        return { authorization: `Bearer ${k.slice(0, -1)}${last}` };
      }
      case 'revoked':
        return { authorization: `Bearer ${this.revokedKeys.get(arg) ?? 'none'}` };
      case 'header': {
        const [name, ...value] = arg.split(':');
        return { [name ?? 'x']: value.join(':') };
      }
      default:
        throw new Error(`unknown auth ${auth}`);
    }
  }

  /** One request; `fetch` unless the path must reach the server exactly as written. */
  async send(
    method: string,
    urlPath: string,
    options: {
      auth: string;
      body?: unknown;
      text?: string;
      contentType?: string;
      rawPath?: boolean;
    },
  ): Promise<Reply> {
    const headers: Record<string, string> = { ...this.authHeader(options.auth) };
    let payload: string | undefined;
    if (options.text !== undefined) payload = options.text;
    else if (options.body !== undefined) payload = JSON.stringify(options.body);
    if (payload !== undefined) headers['content-type'] = options.contentType ?? 'application/json';
    let status: number;
    let text: string;
    let contentLength: string;
    if (options.rawPath) {
      ({ status, text, contentLength } = await new Promise<{
        status: number;
        text: string;
        contentLength: string;
      }>((resolve, reject) => {
        const url = new URL(this.base);
        const req = httpRequest(
          { host: url.hostname, port: url.port, method, path: urlPath, headers },
          (res) => {
            let data = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => {
              data += chunk;
            });
            res.on('end', () =>
              resolve({
                status: res.statusCode ?? 0,
                text: data,
                contentLength: String(res.headers['content-length'] ?? ''),
              }),
            );
          },
        );
        req.on('error', reject);
        if (payload !== undefined) req.write(payload);
        req.end();
      }));
    } else {
      const res = await fetch(this.base + urlPath, {
        method,
        headers,
        ...(payload !== undefined ? { body: payload } : {}),
      });
      status = res.status;
      text = await res.text();
      contentLength = res.headers.get('content-length') ?? '';
    }
    let body: unknown = text;
    try {
      body = text === '' ? '' : JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status, text, contentLength, body };
  }

  /** Replaces `{session}`, `{key:x}`… in a string, opening the sessions it names first. */
  async fill(text: string, run: CaseRun): Promise<string> {
    const pattern = /\{(session|approval|call|key|admin_token)(?::([^}]+))?\}/g;
    for (const m of text.matchAll(pattern))
      if (m[1] === 'session') await run.session(m[2] ?? run.defaultAlias());
    return text.replace(pattern, (_m, kind: string, arg: string | undefined) => {
      switch (kind) {
        case 'session':
          return run.sessionIdSync(arg ?? run.defaultAlias());
        case 'approval':
          return run.saved(arg ?? '').approval_id;
        case 'call':
          return run.saved(arg ?? '').call_id;
        case 'key':
          return this.key(arg ?? '');
        default:
          return ADMIN_TOKEN;
      }
    });
  }

  async fillDeep(value: Json, run: CaseRun): Promise<Json> {
    if (typeof value === 'string') return this.fill(value, run);
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) return Promise.all(value.map((v) => this.fillDeep(v, run)));
    const out: { [key: string]: Json } = {};
    for (const [k, v] of Object.entries(value)) out[k] = await this.fillDeep(v, run);
    return out;
  }

  async auditOf(
    callId: string,
  ): Promise<{ kind: string; code: string | null; rule: string | null }[]> {
    if (!this.inspector) throw new Error('not started');
    // Durable when the call answered; in the chain once integrated (PostgreSQL stages records
    // for the fleet's sequencer: docs/architecture.md §5).
    await this.inspector.audit.settled();
    return this.inspector.db
      .selectFrom('audit_log')
      .select(['kind', 'code', 'rule'])
      .where('call_id', '=', callId)
      .orderBy('seq')
      .execute();
  }

  /**
   * A decision through the admin API as an operator account, answered as REST would: the value
   * with 200, a refusal with its catalogue status and `{ code, message, details }`.
   */
  async decide(fn: (admin: Gateway['admin']) => Promise<unknown>): Promise<Reply> {
    if (!this.tg) throw new Error('not started');
    let status = 200;
    let body: unknown;
    try {
      body = await fn(this.tg.admin);
    } catch (err) {
      if (!isToolgateError(err)) throw err;
      status = ERROR_CODES[err.code].http;
      body = { code: err.code, message: err.message, details: err.details };
    }
    const text = JSON.stringify(body);
    return { status, text, contentLength: String(Buffer.byteLength(text)), body };
  }

  totp(approver: string, at: number): string {
    const secret = this.totpSecrets.get(approver);
    if (!secret) throw new Error(`no TOTP secret for ${approver}`);
    return totpAt(secret, new Date(at));
  }
}

/** The state of one case: its sessions, saved answers and unknown-tool baselines. */
class CaseRun {
  readonly #w: World;
  readonly #c: Case;
  readonly #index: number;
  readonly #sessions = new Map<string, { id: string; agent: string; tools: Set<string> }>();
  readonly #saved = new Map<string, { approval_id: string; call_id: string }>();
  readonly #savedAll = new Map<string, string[]>();
  readonly #baselines = new Map<string, { text: string; length: string }>();

  constructor(world: World, c: Case, index: number) {
    this.#w = world;
    this.#c = c;
    this.#index = index;
  }

  defaultAlias(): string {
    if (!this.#c.as) throw new Error(`case ${this.#c.name}: a step names no agent`);
    return this.#c.as;
  }

  #def(alias: string): SessionDef {
    return this.#c.setup?.sessions?.[alias] ?? { as: alias };
  }

  saved(name: string): { approval_id: string; call_id: string } {
    const s = this.#saved.get(name);
    if (!s) throw new Error(`nothing saved as ${name}`);
    return s;
  }

  sessionIdSync(alias: string): string {
    const s = this.#sessions.get(alias);
    if (!s) throw new Error(`session ${alias} is not open yet (use it in a call first)`);
    return s.id;
  }

  async session(alias: string): Promise<{ id: string; agent: string; tools: Set<string> }> {
    const open = this.#sessions.get(alias);
    if (open) return open;
    const def = this.#def(alias);
    return this.#open(alias, def);
  }

  async #open(alias: string, def: SessionDef) {
    const body: Record<string, unknown> = {};
    if (def.on_behalf_of !== undefined) body.on_behalf_of = def.on_behalf_of;
    if (def.run_id !== undefined) body.run_id = `${def.run_id}.c${this.#index}`;
    if (def.ttl_seconds !== undefined) body.ttl_seconds = def.ttl_seconds;
    const r = await this.#w.send('POST', '/v1/sessions', { auth: `agent:${def.as}`, body });
    assert.equal(r.status, 201, `opening session ${alias}: ${describeReply(r)}`);
    const s = {
      id: String(r.body.id),
      agent: def.as,
      tools: new Set((r.body.tools as { id: string }[]).map((t) => t.id)),
    };
    this.#sessions.set(alias, s);
    return s;
  }

  async run(): Promise<void> {
    for (const t of this.#c.setup?.tools ?? []) {
      const spec = SETUP_TOOLS.get(t.template);
      assert.ok(spec, `no template tool ${t.template} in gate-setup.yaml`);
      const clone = {
        ...spec,
        id: t.id,
        name: t.id,
        version: t.version ?? '1.0.0',
        ...(t.description !== undefined ? { description: t.description } : {}),
      };
      const r = await this.#w.send('POST', '/v1/apply', {
        auth: 'admin',
        body: [{ kind: 'Tool', spec: clone }],
      });
      assert.equal(r.status, 200, describeReply(r));
      this.#w.toolIds.add(t.id);
    }
    await this.#w.approveReviews();
    // An approval belongs to the principal, in any of its runs (docs/operators-and-approvals.md):
    // a case that asks for approvals gets a key of its own, so an approval another case left
    // approved, pending or rejected for the same call is not this case's.
    if (this.#c.as && JSON.stringify(this.#c.steps).includes('pending_approval'))
      await this.#w.issueKey(this.#c.as);
    for (const [i, step] of this.#c.steps.entries()) {
      try {
        await this.#step(step);
      } catch (err) {
        if (err instanceof Error) err.message = `step ${i + 1}: ${err.message}`;
        throw err;
      }
    }
  }

  async #step(step: Step): Promise<void> {
    if ('race' in step) return this.#race(step);
    if ('parallel' in step) return this.#parallel(step);
    if ('open_session' in step) {
      await this.#open(step.open_session, {
        as: step.as,
        ...(step.on_behalf_of !== undefined ? { on_behalf_of: step.on_behalf_of } : {}),
        ...(step.run_id !== undefined ? { run_id: step.run_id } : {}),
        ...(step.ttl_seconds !== undefined ? { ttl_seconds: step.ttl_seconds } : {}),
      });
      return;
    }
    if ('issue_key' in step) return this.#w.issueKey(step.issue_key);
    if ('approve' in step) return this.#approve(step);
    if ('approve_change' in step) return this.#approveChange(step);
    if ('approve_all' in step) {
      for (const id of this.#savedAll.get(step.approve_all) ?? []) {
        const r = await this.#w.decide((admin) => admin.approvals.approve(id, REVIEWER));
        assert.equal(r.status, 200, describeReply(r));
      }
      return;
    }
    if ('reject' in step) {
      const id = this.saved(step.reject).approval_id;
      const r = await this.#w.decide((admin) =>
        admin.approvals.reject(id, REVIEWER, step.reason ?? 'refused by the red-team reviewer'),
      );
      return this.#check(r, step.expect ?? { status: 200 });
    }
    if ('admin' in step) return this.#admin(step);
    if ('http' in step) {
      const h = step.http;
      const r = await this.#w.send(h.method, await this.#w.fill(h.path, this), {
        auth: await this.#w.fill(h.auth, this),
        ...(h.body !== undefined ? { body: await this.#w.fillDeep(h.body, this) } : {}),
        ...(h.text !== undefined ? { text: await this.#w.fill(h.text, this) } : {}),
        ...(h.content_type !== undefined ? { contentType: h.content_type } : {}),
        ...(h.raw_path ? { rawPath: true } : {}),
      });
      await this.#check(r, step.expect);
      if (step.save) this.#save(step.save, r);
      return;
    }
    if ('advance_seconds' in step) {
      this.#w.nowMs += step.advance_seconds * 1000;
      return;
    }
    if ('approval_status' in step) {
      const id = this.saved(step.approval_status).approval_id;
      const r = await this.#w.send('GET', `/v1/approvals/${id}`, { auth: 'admin' });
      assert.equal(r.body.status, step.is, describeReply(r));
      return;
    }
    if (isCall(step)) {
      const { reply, session, requestText } = await this.#call(step);
      await this.#check(reply, step.expect, { session, requestText });
      if (step.save) this.#save(step.save, reply);
      return;
    }
    throw new Error(`unknown step ${JSON.stringify(step)}`);
  }

  #save(name: string, r: Reply): void {
    this.#saved.set(name, {
      approval_id: String(r.body?.approval_id ?? r.body?.id ?? ''),
      call_id: String(r.body?.call_id ?? r.body?.details?.call_id ?? ''),
    });
  }

  async #call(
    step: CallStep,
    vary?: number,
    aliasOverride?: string,
  ): Promise<{ reply: Reply; session: { id: string; tools: Set<string> }; requestText: string }> {
    const alias = aliasOverride ?? step.session ?? step.as ?? this.defaultAlias();
    const session = await this.session(alias);
    const agent = step.as ?? session.agent;
    const envelope: { [key: string]: Json } = {};
    if ('call' in step && step.call !== undefined) envelope.tool = step.call;
    envelope.arguments = step.arguments === undefined ? {} : step.arguments;
    if (step.idempotency_key !== undefined) envelope.idempotency_key = step.idempotency_key;
    if (step.model !== undefined) envelope.model = step.model;
    for (const [k, v] of Object.entries(step.envelope ?? {})) envelope[k] = v;
    for (const k of step.omit ?? []) delete envelope[k];
    const requestText = serializeWithExpansions(envelope, vary);
    const reply = await this.#w.send('POST', `/v1/sessions/${session.id}/calls`, {
      auth: `agent:${agent}`,
      text: requestText,
    });
    return { reply, session, requestText };
  }

  async #baseline(session: {
    id: string;
    agent: string;
  }): Promise<{ text: string; length: string }> {
    const hit = this.#baselines.get(session.id);
    if (hit) return hit;
    const r = await this.#w.send('POST', `/v1/sessions/${session.id}/calls`, {
      auth: `agent:${session.agent}`,
      body: { tool: UNKNOWN_TOOL, arguments: {} },
    });
    const b = { text: normalizeCallId(r.text), length: r.contentLength };
    this.#baselines.set(session.id, b);
    return b;
  }

  async #check(
    r: Reply,
    e: Expect,
    call?: { session: { id: string; tools: Set<string> }; requestText: string },
  ): Promise<void> {
    const what = describeReply(r);
    assert.equal(r.status, e.status, `status: ${what}`);
    if (e.code !== undefined) assert.equal(r.body?.code, e.code, `code: ${what}`);
    if (e.rule !== undefined) assert.equal(r.body?.details?.rule, e.rule, `rule: ${what}`);
    if (e.kind !== undefined) assert.equal(r.body?.kind, e.kind, `kind: ${what}`);
    if (e.message_match !== undefined)
      assert.match(String(r.body?.message), new RegExp(e.message_match), what);
    if (e.warning_match === false) assert.deepEqual(r.body?.warnings, [], what);
    else if (e.warning_match !== undefined) {
      const re = new RegExp(e.warning_match);
      assert.ok(
        (r.body?.warnings as string[] | undefined)?.some((w) => re.test(w)),
        what,
      );
    }
    for (const [field, expected] of [
      ['output', e.output],
      ['rendered', e.rendered],
    ] as const) {
      if (expected === undefined) continue;
      const miss = partialMatch(r.body?.[field], expected);
      assert.equal(miss, null, `${field}: ${miss} in ${what}`);
    }
    if (e.body !== undefined) {
      const miss = partialMatch(r.body, e.body);
      assert.equal(miss, null, `body: ${miss} in ${what}`);
    }
    for (const [key, source] of Object.entries(e.output_regex ?? {}))
      assert.match(String(r.body?.output?.[key]), new RegExp(source), what);
    for (const text of e.text_excludes ?? [])
      assert.ok(!r.text.includes(text), `the answer names ${JSON.stringify(text)}: ${what}`);
    for (const text of e.text_includes ?? [])
      assert.ok(r.text.includes(text), `the answer lacks ${JSON.stringify(text)}: ${what}`);
    if (e.same_call !== undefined)
      assert.equal(r.body?.call_id, this.saved(e.same_call).call_id, what);
    if (e.new_approval !== undefined) {
      assert.notEqual(r.body?.approval_id, this.saved(e.new_approval).approval_id, what);
      assert.ok(r.body?.approval_id, what);
    }
    if (e.same_approval !== undefined)
      assert.equal(r.body?.approval_id, this.saved(e.same_approval).approval_id, what);
    if (!call) return;
    if (e.same_as_unknown) {
      const session = [...this.#sessions.values()].find((s) => s.id === call.session.id);
      assert.ok(session);
      const baseline = await this.#baseline(session);
      assert.equal(normalizeCallId(r.text), baseline.text, 'differs from an unknown tool');
      assert.equal(r.contentLength, baseline.length, 'length differs from an unknown tool');
    }
    await this.#invariants(r, call, e.audited_rule);
  }

  /** What holds of every gate answer: audited as decided, and naming only the caller's tools. */
  async #invariants(
    r: Reply,
    call: { session: { tools: Set<string> }; requestText: string },
    auditedRule?: string,
  ): Promise<void> {
    const what = describeReply(r);
    for (const id of this.#w.toolIds) {
      if (call.session.tools.has(id) || call.requestText.includes(id)) continue;
      assert.ok(!r.text.includes(id), `the answer names ${id}, outside the session's set: ${what}`);
    }
    const callId: unknown = r.body?.call_id ?? r.body?.details?.call_id;
    if (typeof callId !== 'string') return;
    const rows = await this.#w.auditOf(callId);
    if (r.status === 200) {
      assert.ok(
        rows.some((x) => x.kind === 'call.pre'),
        `no call.pre audit for ${what}`,
      );
    } else if (r.status === 202) {
      assert.ok(
        rows.some((x) => x.kind === 'call.pending_approval'),
        `no pending audit: ${what}`,
      );
    } else if (GATE_DENY_CODES.has(String(r.body?.code))) {
      const denied = rows.find((x) => x.kind === 'call.denied' || x.kind === 'call.post');
      assert.ok(denied, `denial not audited: ${what}`);
      assert.equal(denied.code, r.body.code, `audited code: ${what}`);
      assert.equal(denied.rule, auditedRule ?? r.body.details.rule, `audited rule: ${what}`);
    }
  }

  /** The TOTP code a step sends, or undefined for none. */
  #totpFor(approver: string, mode: ApproveStep['totp'] = 'none'): string | undefined {
    const w = this.#w;
    if (mode === 'valid') {
      // A fresh 30 s step, so a code from an earlier case is never a replay.
      w.nowMs += TOTP_STEP_MS;
      const code = w.totp(approver, w.nowMs);
      w.lastTotp.set(approver, code);
      return code;
    }
    // Any other code may be refused: the approver's next attempt then waits (backoff),
    // so each case's attempt is made after the wait, as a person would.
    if (mode !== 'none') w.nowMs += TOTP_STEP_MS;
    if (mode === 'replay') return w.lastTotp.get(approver) ?? '000000';
    if (mode === 'previous') return w.totp(approver, w.nowMs - TOTP_STEP_MS);
    if (mode === 'wrong') {
      const live = new Set([-1, 0, 1].map((d) => w.totp(approver, w.nowMs + d * TOTP_STEP_MS)));
      let n = 0;
      while (live.has(String(n).padStart(6, '0'))) n++;
      return String(n).padStart(6, '0');
    }
    if (mode === 'malformed') return '12345a';
    if (mode.startsWith('other:')) {
      w.nowMs += TOTP_STEP_MS;
      return w.totp(mode.slice('other:'.length), w.nowMs);
    }
    if (mode.startsWith('literal:')) return mode.slice('literal:'.length);
    return undefined;
  }

  async #approve(step: ApproveStep): Promise<void> {
    const body: Record<string, unknown> = { ...(step.extra ?? {}) };
    if (step.approver !== undefined) body.approver = step.approver;
    if (step.reason !== undefined) body.reason = step.reason;
    const totp = this.#totpFor(step.approver ?? '', step.totp);
    if (totp !== undefined) body.totp = totp;
    const id = this.#saved.get(step.approve)?.approval_id ?? step.approve;
    const w = this.#w;
    const r =
      step.auth !== undefined || step.over === 'rest'
        ? await w.send('POST', `/v1/approvals/${encodeURIComponent(id)}/approve`, {
            // Over REST a decision takes an approver's personal token unless the case names another.
            auth: step.auth ? await w.fill(step.auth, this) : 'approver',
            body,
          })
        : await w.decide((admin) =>
            admin.approvals.approve(id, operator(step.approver ?? REVIEWER.id), {
              ...(typeof body.totp === 'string' ? { totp: body.totp } : {}),
              ...(step.reason !== undefined ? { reason: step.reason } : {}),
            }),
          );
    await this.#check(r, step.expect ?? { status: 200, body: { status: 'approved' } });
  }

  /** One approver's approval of the pending four-eyes change whose subject is given. */
  async #approveChange(step: ApproveChangeStep): Promise<void> {
    const w = this.#w;
    const list = await w.send('GET', '/v1/changes?status=pending', { auth: 'admin' });
    const change = (list.body.changes as { id: string; subject: string }[]).find(
      (c) => c.subject === step.approve_change,
    );
    assert.ok(change, `no pending change "${step.approve_change}": ${describeReply(list)}`);
    const totp = this.#totpFor(step.approver, step.totp) ?? '';
    const r = await w.decide((admin) =>
      admin.changes.approve(change.id, operator(step.approver), totp),
    );
    await this.#check(r, step.expect ?? { status: 200 });
  }

  async #admin(step: AdminStep): Promise<void> {
    const w = this.#w;
    const version = step.version ?? '1.0.0';
    const toolPath = `/v1/tools/${step.tool}/versions/${version}`;
    let r: Reply;
    switch (step.admin) {
      case 'grant':
      case 'revoke_grant':
        r = await w.send(step.admin === 'grant' ? 'POST' : 'DELETE', '/v1/grants', {
          auth: 'admin',
          body: { agent: step.agent, capabilities: step.capabilities },
        });
        break;
      case 'deprecate':
        r = await w.send('POST', `${toolPath}/deprecate`, {
          auth: 'admin',
          body: step.window_days !== undefined ? { window_days: step.window_days } : {},
        });
        break;
      case 'retire':
      case 'activate':
        r = await w.send('POST', `${toolPath}/${step.admin}`, { auth: 'admin', body: {} });
        break;
      case 'quarantine':
      case 'release':
        r = await w.send('POST', `${toolPath}/${step.admin}`, {
          auth: 'admin',
          body: { reason: 'red-team case' },
        });
        break;
      case 'apply':
        r = await w.send('POST', '/v1/apply', { auth: 'admin', body: step.documents ?? [] });
        await w.approveReviews();
        break;
      case 'register': {
        const spec = SETUP_TOOLS.get(step.template ?? '');
        assert.ok(spec, `no template ${step.template}`);
        const id = step.tool ?? '';
        r = await w.send('POST', `/v1/tools${step.draft ? '?draft=true' : ''}`, {
          auth: 'admin',
          body: { ...spec, id, name: id, version },
        });
        w.toolIds.add(id);
        await w.approveReviews();
        break;
      }
      case 'revoke_key': {
        // There is no REST route for revoking a key (yet): the library call, then a fresh key.
        const agent = step.agent ?? '';
        const old = w.keys.get(agent);
        assert.ok(old && w.tg);
        await w.tg.keys.revoke(old.keyId, { id: 'redteam', via: 'library' });
        w.revokedKeys.set(agent, old.apiKey);
        await w.issueKey(agent);
        return;
      }
    }
    const expected = step.expect ?? (step.admin === 'register' ? { status: 201 } : { status: 200 });
    await this.#check(r, expected);
  }

  async #race(step: RaceStep): Promise<void> {
    const aliases = step.sessions ?? [step.step.session ?? step.step.as ?? this.defaultAlias()];
    for (const a of aliases) await this.session(a);
    const one = (i: number) => this.#call(step.step, i, aliases[i % aliases.length]);
    const results: Awaited<ReturnType<typeof one>>[] = [];
    if (step.sequential) {
      for (let i = 0; i < step.race; i++) results.push(await one(i));
    } else {
      results.push(...(await Promise.all(Array.from({ length: step.race }, (_, i) => one(i)))));
    }
    await this.#tally(results, step.expect_counts);
    const allowed = results.filter((x) => x.reply.status === 200);
    if (step.distinct_allowed_calls !== undefined) {
      const ids = new Set(allowed.map((x) => x.reply.body.call_id));
      assert.equal(ids.size, step.distinct_allowed_calls, 'distinct executions');
    }
    const pending = results.filter((x) => x.reply.status === 202);
    if (step.distinct_approvals !== undefined) {
      const ids = new Set(pending.map((x) => x.reply.body.approval_id));
      assert.equal(ids.size, step.distinct_approvals, 'distinct approval requests');
    }
    if (step.save_all)
      this.#savedAll.set(
        step.save_all,
        pending.map((x) => String(x.reply.body.approval_id)),
      );
  }

  async #parallel(step: ParallelStep): Promise<void> {
    for (const s of step.parallel) await this.session(s.session ?? s.as ?? this.defaultAlias());
    const results = await Promise.all(step.parallel.map((s) => this.#call(s)));
    await this.#tally(results, step.expect_counts);
  }

  async #tally(
    results: { reply: Reply; session: { tools: Set<string> }; requestText: string }[],
    expected: Readonly<Record<string, Count>>,
  ): Promise<void> {
    const counts: Record<string, number> = {};
    for (const { reply } of results) {
      const key =
        reply.status === 200 || reply.status === 202
          ? String(reply.status)
          : `${reply.status} ${reply.body?.code} ${reply.body?.details?.rule}`;
      counts[key] = (counts[key] ?? 0) + 1;
    }
    const what = `answers ${JSON.stringify(counts)}, expected ${JSON.stringify(expected)}`;
    for (const key of Object.keys(counts)) assert.ok(Object.hasOwn(expected, key), what);
    for (const [key, want] of Object.entries(expected)) {
      const [min, max] = typeof want === 'number' ? [want, want] : want;
      const got = counts[key] ?? 0;
      assert.ok(got >= min && got <= max, what);
    }
    for (const x of results) await this.#invariants(x.reply, x);
  }
}

function normalizeCallId(text: string): string {
  return text.replace(/"call_id":"call_[A-Za-z0-9_-]+"/g, '"call_id":"call_*"');
}

// ---------------------------------------------------------------------------------------------
// The corpora are well-formed

describe('gate red-team corpora', () => {
  for (const [name, cases] of Object.entries(corpora) as [keyof typeof corpora, Case[]][]) {
    test(`${name}: unique names, known categories, every call step expects something`, () => {
      const names = new Set<string>();
      for (const c of cases) {
        assert.ok(!names.has(c.name), `duplicate case name ${c.name}`);
        names.add(c.name);
        assert.ok(
          (CATEGORIES[name] as readonly string[]).includes(c.category),
          `${c.name}: category ${c.category}`,
        );
        assert.ok(c.steps.length > 0, c.name);
        for (const step of c.steps) {
          if (isCall(step)) assert.equal(typeof step.expect.status, 'number', c.name);
          if (name === 'benign' && isCall(step) && !c.known_bug)
            assert.ok([200, 202].includes(step.expect.status), `${c.name}: benign call denied`);
        }
      }
      assert.ok(cases.length >= (name === 'attacks' ? 200 : 100), `${cases.length} cases`);
    });
  }
  test('the setup names every tool template the cases clone', () => {
    for (const c of [...corpora.attacks, ...corpora.benign]) {
      for (const t of c.setup?.tools ?? []) assert.ok(SETUP_TOOLS.has(t.template), c.name);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Replay

for (const backend of backends()) {
  for (const corpus of ['attacks', 'benign'] as const) {
    const cases = corpora[corpus].filter(
      (c) => backend.name === 'sqlite' || corpus === 'benign' || c.pg === true,
    );
    describe(`gate ${corpus} through REST on ${backend.name}`, () => {
      const world = new World();
      before(() => world.start(backend));
      after(() => world.stop());
      cases.forEach((c, index) => {
        const bugHere =
          c.known_bug !== undefined &&
          !RUN_KNOWN_BUGS &&
          (c.known_bug_backends === undefined || c.known_bug_backends.includes(backend.name));
        test(
          `[${c.category}] ${c.name}`,
          bugHere ? { skip: `known bug: ${c.known_bug}` } : {},
          () => new CaseRun(world, c, index).run(),
        );
      });
    });
  }
}
