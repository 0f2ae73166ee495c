/**
 * @module Wires the records (docs/architecture.md §5): the audit log with its keyed hashes (their
 * key derived from the master key) and the classified store of calls' raw arguments, which keeps
 * readable only the keys a version of the tool declares; and, where the store stages audit
 * records for a sequencer (PostgreSQL), the sequencer, which runs while this process leads.
 */

import type { CatalogService } from '../domain/catalog/index.js';
import { declaredArgumentKeys } from '../domain/catalog/index.js';
import { type MasterKey, pseudonymKey } from '../domain/credentials/index.js';
import type { GatewayMetrics } from '../operations/metrics/index.js';
import {
  AuditLog,
  AuditPseudonyms,
  ClassifiedArguments,
  DEFAULT_ORIGIN,
  generateNoteSigner,
} from '../records/audit/index.js';
import type { Store } from '../records/store/index.js';
import { clockOf, type ToolgateOptions } from './toolgate-options.js';

export type RecordsWing = ReturnType<typeof wireRecords>;

export function wireRecords(
  options: ToolgateOptions,
  store: Store,
  { catalog, metrics }: { readonly catalog: CatalogService; readonly metrics: GatewayMetrics },
  loadMasterKey: () => MasterKey,
) {
  const clock = clockOf(options);
  const given = options.audit ?? {};
  const origin = given.origin ?? DEFAULT_ORIGIN;
  const pseudonyms = new AuditPseudonyms(
    pseudonymKey(loadMasterKey, options.masterKey !== undefined),
  );
  const classified = new ClassifiedArguments(store, pseudonyms, {
    ...clock,
    declaredKeys: declaredArgumentKeys(catalog),
    ...(given.classifiedRetentionDays !== undefined
      ? { retentionDays: given.classifiedRetentionDays }
      : {}),
  });
  const audit = new AuditLog(store, {
    pseudonyms,
    signer: options.auditSigner ?? (() => generateNoteSigner(origin).signer),
    origin,
    ...(given.checkpoints !== undefined ? { checkpoints: given.checkpoints } : {}),
    ...(given.checkpointEvery !== undefined ? { checkpointEvery: given.checkpointEvery } : {}),
    ...(given.checkpointIntervalMs !== undefined
      ? { checkpointIntervalMs: given.checkpointIntervalMs }
      : {}),
    ...(given.onError ? { onError: given.onError } : {}),
    // A record given up is counted and reported: a lost result record is never silent.
    onFailed: (records, err) => {
      metrics.integration.failed(records.map((r) => r.kind));
      given.onError?.(
        new Error(
          `${records.length} audit record(s) could not be written (${[...new Set(records.map((r) => r.kind))].join(', ')})`,
          { cause: err },
        ),
      );
    },
    ...clock,
  });
  // Where the store stages audit records (PostgreSQL), the fleet's leader integrates them. It is
  // stopped after the log's last flush, which it integrates at once when it leads here.
  const stopSequencer = store.audit.sequence(store.fleet, {
    campaign: given.sequencer === true,
    ...(given.integrationDelayMs !== undefined ? { maxDelayMs: given.integrationDelayMs } : {}),
    // A failed integration is counted and told (serve logs it), never silent: its records, every
    // replica's, wait staged until one succeeds.
    onError: (err) => {
      metrics.integration.integrationFailed();
      const why = err instanceof Error ? err.message : String(err);
      given.onError?.(
        new Error(`integrating staged audit records failed (they wait staged): ${why}`, {
          cause: err,
        }),
      );
    },
    onIntegrated: (count, waitedMs) => metrics.integration.integrated(count, waitedMs),
    onLate: () => metrics.integration.late(),
  });
  return { pseudonyms, classified, audit, stopSequencer };
}
