/**
 * @module The checks of a configuration file before anything is written (C18): the envelope of
 * each document, then its kind's spec by the kind's own validator, every problem listed with its
 * document and JSON pointer; and the one CONFIG_INVALID that refuses a whole file.
 */
import {
  exceedsDepth,
  MAX_DOCUMENT_DEPTH,
  type Problem,
  problem,
  ToolgateError,
} from '../../core/index.js';
import { checkToolDefinition, compileDocumentValidator } from '../../domain/catalog/index.js';
import {
  agentSpecSchema,
  agentSpecTextProblems,
  grantSpecSchema,
  userSpecSchema,
  userSpecTextProblems,
} from '../../domain/identity/index.js';
import {
  type OperatorDocument,
  operatorCredentialProblems,
  operatorDocumentProblems,
  operatorDocumentSchema,
} from '../../domain/operators/index.js';
import {
  type DestinationSetDocument,
  destinationSetDocumentSchema,
  destinationSetProblems,
  normaliseMembers,
  policySpecSchema,
} from '../../domain/policy/index.js';
import { checkProviderSpec } from '../../execution/providers/index.js';
import {
  type OwnerChannelDocument,
  ownerChannelDocumentProblems,
  ownerChannelDocumentSchema,
} from '../owners/index.js';
import type { ConfigProblem, IndexedDocument } from './apply-types.js';
import { type ConfigDocument, RESERVED_KINDS, SUPPORTED_KINDS } from './config-document.js';

/** The envelope; each kind's spec is then checked by its own validator, so every problem is listed. */
const validateEnvelope = compileDocumentValidator({
  type: 'object',
  additionalProperties: false,
  required: ['kind', 'spec'],
  properties: {
    apiVersion: { const: 'toolgate/v1' },
    kind: { enum: [...SUPPORTED_KINDS] },
    spec: { type: 'object' },
  },
});
/**
 * Checks one spec; a valid tool spec is replaced by its checked, normalized definition so the
 * registration inside the transaction does not check it a second time.
 */
type SpecCheck = (spec: unknown) => { problems: Problem[]; spec: unknown };
const validateSpec: Record<ConfigDocument['kind'], SpecCheck> = {
  Tool: (spec) => {
    const checked = checkToolDefinition(spec);
    return checked.ok
      ? { problems: [], spec: checked.definition }
      : { problems: [...checked.problems], spec };
  },
  Agent: withRules(compileDocumentValidator(agentSpecSchema), agentSpecTextProblems),
  User: withRules(compileDocumentValidator(userSpecSchema), userSpecTextProblems),
  Policy: withSpec(compileDocumentValidator(policySpecSchema)),
  Grant: withSpec(compileDocumentValidator(grantSpecSchema)),
  Provider: withSpec(checkProviderSpec),
  DestinationSet: withRules(
    compileDocumentValidator(destinationSetDocumentSchema),
    (spec: DestinationSetDocument) => [
      ...destinationSetProblems(spec),
      ...(spec.members === undefined
        ? []
        : normaliseMembers(spec.kind, spec.members, '/members').problems),
    ],
  ),
  OwnerChannel: withRules(
    compileDocumentValidator(ownerChannelDocumentSchema),
    (spec: OwnerChannelDocument) => ownerChannelDocumentProblems(spec),
  ),
  Operator: withoutCredentials(
    withRules(compileDocumentValidator(operatorDocumentSchema), (spec: OperatorDocument) =>
      operatorDocumentProblems(spec),
    ),
  ),
};

/**
 * A field that names a credential is refused by name first, with how the credential is set
 * instead, and alone: the schema's "unknown field" would say less.
 */
function withoutCredentials(check: SpecCheck): SpecCheck {
  return (spec) => {
    const problems = operatorCredentialProblems(spec);
    return problems.length > 0 ? { problems, spec } : check(spec);
  };
}

function withSpec(validate: (spec: unknown) => Problem[]): SpecCheck {
  return (spec) => ({ problems: validate(spec), spec });
}

/**
 * The schema, then (on a spec of the right shape) the domain's own rules the schema cannot say:
 * the text a person reads (a printable display name and description), a destination set's members
 * normalised for its kind, a reserved operator id, one source of a channel's URL. The same checks
 * the services make when writing, so a dry run lists those problems too.
 */
function withRules<S>(
  validate: (spec: unknown) => Problem[],
  rules: (spec: S) => Problem[],
): SpecCheck {
  return (spec) => {
    const problems = validate(spec);
    return { problems: problems.length > 0 ? problems : rules(spec as S), spec };
  };
}

/** Validates the envelope and every spec before anything is written; refuses with all problems. */
export function checkDocuments(raw: readonly unknown[]): IndexedDocument[] {
  const problems: ConfigProblem[] = [];
  const out: IndexedDocument[] = [];
  if (raw.length === 0) {
    throw configInvalid([
      { ...problem('', 'the file holds no documents', 'config.empty'), document: -1 },
    ]);
  }
  raw.forEach((doc, index) => {
    if (exceedsDepth(doc)) {
      problems.push({
        ...problem(`/${index}`, `nests deeper than ${MAX_DOCUMENT_DEPTH} levels`, 'depth'),
        document: index,
      });
      return;
    }
    const kind =
      typeof doc === 'object' && doc !== null ? (doc as { kind?: unknown }).kind : undefined;
    if (kind === 'Secret') {
      // Secret values must not live in files that are committed, diffed and reviewed.
      problems.push({
        ...problem(
          `/${index}/kind`,
          'kind Secret is reserved and cannot be applied: secrets are managed only via the CLI (`toolgate secrets set NAME --tool TOOL`, value on stdin) or the admin API (PUT /v1/secrets/{tool}/{name}), never from configuration files',
          'config.kind.secret',
        ),
        document: index,
        kind,
      });
      return;
    }
    if (typeof kind === 'string' && (RESERVED_KINDS as readonly string[]).includes(kind)) {
      problems.push({
        ...problem(
          `/${index}/kind`,
          `kind ${kind} is reserved for a later version of toolgate and not supported yet`,
          'config.kind',
        ),
        document: index,
        kind,
      });
      return;
    }
    if (typeof kind !== 'string' || !(SUPPORTED_KINDS as readonly string[]).includes(kind)) {
      problems.push({
        ...problem(`/${index}/kind`, `must be one of ${SUPPORTED_KINDS.join(', ')}`, 'config.kind'),
        document: index,
      });
      return;
    }
    const envelope = validateEnvelope(doc);
    const checked =
      envelope.length > 0
        ? null
        : validateSpec[kind as ConfigDocument['kind']]((doc as { spec: unknown }).spec);
    const found = checked
      ? checked.problems.map((p) => ({ ...p, pointer: `/spec${p.pointer}` }))
      : envelope;
    if (found.length > 0 || !checked) {
      for (const p of found)
        problems.push({ ...p, pointer: `/${index}${p.pointer}`, document: index, kind });
      return;
    }
    out.push({ index, doc: { kind: kind as ConfigDocument['kind'], spec: checked.spec } });
  });
  if (problems.length > 0) throw configInvalid(problems);
  return out;
}

/** Registration refusals become problems located in their document. */
export function refusalProblems(err: unknown, index: number, kind: string): ConfigProblem[] {
  if (!(err instanceof ToolgateError)) throw err;
  const base = `/${index}/spec`;
  switch (err.code) {
    case 'INPUT_INVALID':
    case 'DEFINITION_INVALID':
    case 'BREAKING_CHANGE': {
      const listed = (err.details as { problems?: Problem[] }).problems;
      const given = Array.isArray(listed) ? listed : [problem('', err.message, 'invalid')];
      const found = given.map((p) => ({
        ...p,
        pointer: base + p.pointer,
        document: index,
        kind,
      }));
      return err.code === 'BREAKING_CHANGE'
        ? [{ ...problem(base, err.message, 'breaking'), document: index, kind }, ...found]
        : found;
    }
    case 'VERSION_EXISTS':
      return [
        { ...problem(`${base}/version`, err.message, 'version.exists'), document: index, kind },
      ];
    case 'AGENT_NOT_FOUND':
      return [
        {
          ...problem(
            `/${index}/spec/agent`,
            `${err.message}: declare it in this file or apply it first`,
            'grant.agent',
          ),
          document: index,
          kind,
        },
      ];
    default:
      throw err;
  }
}

export function configInvalid(problems: ConfigProblem[]): ToolgateError<'CONFIG_INVALID'> {
  const docs = new Set(problems.map((p) => p.document)).size;
  const first = problems[0];
  return new ToolgateError(
    'CONFIG_INVALID',
    `configuration refused, nothing applied: ${problems.length} problem${problems.length === 1 ? '' : 's'} in ${docs} document${docs === 1 ? '' : 's'}${first ? ` (first: ${first.pointer || '(file)'} ${first.message})` : ''}`,
    { problems },
  );
}
