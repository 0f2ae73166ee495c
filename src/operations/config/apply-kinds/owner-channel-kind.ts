/**
 * @module `apply -f` of OwnerChannel documents (C18, docs/configuration.md): an owner team's webhook
 * by name. Its URL is a credential: read from the applying process's environment (`url_env`) or
 * the document (`url`), checked under the same outbound rules as `channels add` before the
 * transaction begins, then stored sealed (OwnerChannels). No plan line, ledger row, event or
 * problem holds it: they name the channel, the environment variable, and the URL's origin at most.
 * `--prune` removes a channel no longer declared.
 */
import { problem } from '../../../core/index.js';
import type { OwnerChannelDocument, OwnerChannels, TeamScope } from '../../owners/index.js';
import {
  type ApplyChange,
  type ApplyOptions,
  actionOf,
  type ConfigProblem,
  type IndexedDocument,
  type KindContext,
  type KindOutcome,
} from '../apply-types.js';
import { refusalProblems } from '../config-problems.js';
import type { PruneOutcome } from './prune-outcome.js';

/** The URLs of the file's channels, by document index, read and checked before the transaction. */
export interface ChannelUrls {
  readonly urls: ReadonlyMap<number, string>;
  readonly problems: readonly ConfigProblem[];
}

/**
 * Reads each channel's URL (`url_env` only where the caller handed an environment: the CLI its
 * own; a REST request never reads the server's) and checks it under the outbound rules, which
 * resolve its host: done before the apply's transaction, which holds no lock across DNS.
 */
export async function readChannelUrls(
  docs: readonly IndexedDocument[],
  options: ApplyOptions,
  channels: OwnerChannels,
): Promise<ChannelUrls> {
  const urls = new Map<number, string>();
  const problems: ConfigProblem[] = [];
  const found = (index: number, p: ReturnType<typeof problem>) =>
    problems.push({
      ...p,
      pointer: `/${index}/spec${p.pointer}`,
      document: index,
      kind: 'OwnerChannel',
    });
  for (const { index, doc } of docs) {
    const spec = doc.spec as OwnerChannelDocument;
    let url = spec.url;
    if (spec.url_env !== undefined) {
      if (options.env === undefined) {
        found(
          index,
          problem(
            '/url_env',
            'url_env is read from the environment of the process that applies the file (`toolgate apply` reads its own); a request over REST never reads the server’s environment: send url instead',
            'channel.url_env',
          ),
        );
        continue;
      }
      url = options.env[spec.url_env];
      if (url === undefined || url === '') {
        found(
          index,
          problem(
            '/url_env',
            `environment variable ${spec.url_env} is not set in the process that applies the file`,
            'channel.url_env',
          ),
        );
        continue;
      }
    }
    if (url === undefined) continue;
    const p = await channels.urlProblem(url, spec.url_env !== undefined ? '/url_env' : '/url');
    if (p) found(index, p);
    else urls.set(index, url);
  }
  return { urls, problems };
}

/** Each channel whose URL was read, as the applying person (an owner: their teams only). */
export async function applyOwnerChannels(
  { ctx, actor, options }: KindContext,
  docs: readonly IndexedDocument[],
  channels: OwnerChannels,
  read: ChannelUrls,
): Promise<KindOutcome> {
  const changes: ApplyChange[] = [];
  const problems: ConfigProblem[] = [...read.problems];
  const op = options.operator;
  const scope: TeamScope = op && !op.roles.includes('admin') ? op.teams : null;
  for (const { index, doc } of docs) {
    const spec = doc.spec as OwnerChannelDocument;
    const url = read.urls.get(index);
    if (url === undefined) continue;
    try {
      const saved = await channels.saveIn(
        ctx.trx,
        { team: spec.team, name: spec.name, url },
        actor,
        scope,
      );
      const hint = saved.view.url_hint;
      changes.push({
        document: index,
        kind: 'OwnerChannel',
        subject: `owner channel ${spec.team}/${spec.name}`,
        action: actionOf(saved.outcome),
        summary:
          saved.outcome === 'unchanged'
            ? 'unchanged'
            : saved.outcome === 'created'
              ? `created (webhook to ${hint})`
              : saved.resealed
                ? `updated: URL sealed again (the stored seal did not open) (now ${hint})`
                : `updated: URL replaced (now ${hint})`,
      });
    } catch (err) {
      problems.push(...refusalProblems(err, index, 'OwnerChannel'));
    }
  }
  return { changes, problems };
}

/** `apply --prune` of a channel no longer declared (`team/name`): removed, audited. */
export async function pruneOwnerChannel(
  trx: KindContext['ctx']['trx'],
  channels: OwnerChannels,
  subject: string,
  actor: KindContext['actor'],
  reason: string,
): Promise<PruneOutcome> {
  const at = subject.indexOf('/');
  const removed = await channels.removeIn(
    trx,
    subject.slice(0, at),
    subject.slice(at + 1),
    actor,
    reason,
  );
  return { summary: removed ? 'removed' : 'gone' };
}
