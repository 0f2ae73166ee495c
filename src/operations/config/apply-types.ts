/**
 * @module The shapes `apply -f` takes and returns (C18, docs/configuration.md), shared by the
 * service (apply.ts), the checks of a file (config-problems.ts) and each kind's applier
 * (apply-kinds/), so none of them imports another for a type.
 */
import type { Actor, Problem } from '../../core/index.js';
import type { CatalogWrite } from '../../domain/catalog/index.js';
import type { Operator } from '../../domain/operators/index.js';
import type { ConfigDocument } from './config-document.js';

/** prune: narrowed, disabled, withdrawn or deleted by --prune; drift: no longer declared, kept. */
export type ChangeAction = 'create' | 'update' | 'unchanged' | 'prune' | 'drift';

export interface ApplyOptions {
  readonly dryRun?: boolean;
  /**
   * The person applying, where one is known (REST, CLI): its tools are held to the catalog's
   * registrant rules (an owner self-registers only public, read-only tools of their teams), and
   * `Operator` documents are applied as this person, under every rule of `operators` commands.
   * Without it a file with `kind: Operator` is refused.
   */
  readonly operator?: Operator;
  /**
   * Remove or narrow what this set declared before and the documents no longer declare
   * (prune.ts); without it such objects are listed as drift and kept. Admins only.
   */
  readonly prune?: boolean;
  /**
   * The named configuration set this apply declares (default `default`); null for a one-off write
   * that belongs to no set (`grants add`, `agents create`): it is never listed as drift or pruned.
   */
  readonly set?: string | null;
  /**
   * Where `url_env` references of `OwnerChannel` documents are read: the environment of the
   * process that applies (the CLI hands its own). Absent (REST): such a reference is refused, so
   * a request never reads the server's environment.
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export interface ApplyChange {
  readonly document: number;
  readonly kind: ConfigDocument['kind'];
  readonly subject: string;
  readonly action: ChangeAction;
  readonly summary: string;
  readonly quarantined?: boolean;
  /**
   * On `drift` (no longer declared, kept): true when `--prune` would remove it, false when a rule
   * or another set keeps it whatever `--prune` says (the summary says which).
   */
  readonly prunable?: boolean;
}

export interface ApplyResult {
  readonly dryRun: boolean;
  readonly changes: readonly ApplyChange[];
}

/** A problem of a file, located in its document. */
export type ConfigProblem = Problem & { document: number; kind?: string };

/** A checked document and its position in the file. */
export interface IndexedDocument {
  readonly index: number;
  readonly doc: ConfigDocument;
}

/** What every kind's applier is handed: the apply's transaction and who applies. */
export interface KindContext {
  readonly ctx: CatalogWrite;
  readonly actor: Actor;
  readonly options: ApplyOptions;
}

/** What a kind's applier answers: its changes, or problems that refuse the whole file. */
export interface KindOutcome {
  readonly changes: ApplyChange[];
  readonly problems: ConfigProblem[];
}

/** A change's action from a service's create/update/unchanged outcome. */
export function actionOf(outcome: 'created' | 'updated' | 'unchanged'): ChangeAction {
  return outcome === 'created' ? 'create' : outcome === 'updated' ? 'update' : 'unchanged';
}
