/**
 * @module The one list of migrations for both backends, one file per migration. Where the dialects
 * differ (an auto-increment key, trigger syntax) a migration asks its dialect's statements
 * (migration-sql.ts); the tables, columns and queries are otherwise identical.
 */
import type { MigrationProvider } from 'kysely';
import type { Dialect, MigrationSql } from '../migration-sql.js';
import { postgresMigrationSql } from '../postgres/migration-sql.js';
import { sqliteMigrationSql } from '../sqlite/migration-sql.js';
import { agentCaps } from './agent-caps.js';
import { appliedObjects } from './applied-objects.js';
import { approvalScopes } from './approval-scopes.js';
import { auditChain } from './audit-chain.js';
import { auditIndexes } from './audit-indexes.js';
import { pagesAuditSearch } from './audit-search.js';
import { auditStaging } from './audit-staging.js';
import { ceilings } from './ceilings.js';
import { changeRequests } from './change-requests.js';
import { classifiedArguments } from './classified-arguments.js';
import { consoleSessions } from './console-sessions.js';
import { counterCharge } from './counter-charge.js';
import { destinationLiterals } from './destination-literals.js';
import { destinationSets } from './destination-sets.js';
import { firstAdminSetUp } from './first-admin-set-up.js';
import { fleetState } from './fleet-state.js';
import { gate } from './gate-tables.js';
import { healthOverrides } from './health-overrides.js';
import { idempotencyOutcomes } from './idempotency-outcomes.js';
import { identityBinding } from './identity-binding.js';
import { initial } from './initial.js';
import { injectionTexts } from './injection-texts.js';
import { operatorConfirmation } from './operator-confirmation.js';
import { operatorsMigration } from './operators.js';
import { ownerChannelSealing } from './owner-channel-sealing.js';
import { ownerNotices } from './owner-notices.js';
import { passkeys } from './passkeys.js';
import { personActedLatch } from './person-acted-latch.js';
import { policies } from './policies.js';
import { providerEntries } from './provider-entries.js';
import { providers } from './providers.js';
import { rowRevision } from './row-revision.js';
import { secondFactors } from './second-factors.js';
import { secrets } from './secrets.js';
import { securityReviews } from './security-reviews.js';
import { sessionLastUsed } from './session-last-used.js';
import { sessionSuspension } from './session-suspension.js';
import { sessionUserPermissions } from './session-user-permissions.js';
import { stagingVacuum } from './staging-vacuum.js';
import { untrustedSources } from './untrusted-sources.js';

const MIGRATION_SQL: Readonly<Record<Dialect, MigrationSql>> = {
  sqlite: sqliteMigrationSql,
  postgres: postgresMigrationSql,
};

export function migrationProvider(dialect: Dialect): MigrationProvider {
  return {
    async getMigrations() {
      return {
        '0001_initial': initial(MIGRATION_SQL[dialect]),
        '0002_row_revision': rowRevision,
        '0003_gate': gate(MIGRATION_SQL[dialect]),
        '0004_policies': policies,
        '0005_session_user_permissions': sessionUserPermissions,
        '0006_change_requests': changeRequests,
        '0007_secrets': secrets,
        '0008_audit_chain': auditChain(MIGRATION_SQL[dialect]),
        '0009_session_suspension': sessionSuspension,
        '0010_providers': providers,
        '0011_audit_indexes': auditIndexes,
        '0012_identity_binding': identityBinding,
        '0013_ceilings': ceilings,
        '0014_agent_caps': agentCaps,
        '0015_operators': operatorsMigration,
        '0016_second_factors': secondFactors,
        '0017_security_reviews': securityReviews,
        '0018_console_sessions': consoleSessions,
        '0020_audit_search': pagesAuditSearch,
        '0022_provider_entries': providerEntries,
        '0025_untrusted_sources': untrustedSources,
        '0026_destination_literals': destinationLiterals,
        '0027_destination_sets': destinationSets,
        '0029_health_overrides': healthOverrides,
        '0033_owner_notices': ownerNotices,
        '0034_classified_arguments': classifiedArguments,
        '0036_idempotency_outcomes': idempotencyOutcomes,
        '0037_operator_confirmation': operatorConfirmation,
        '0038_first_admin_set_up': firstAdminSetUp,
        '0039_session_last_used': sessionLastUsed,
        '0040_person_acted_latch': personActedLatch,
        '0041_applied_objects': appliedObjects,
        '0042_owner_channel_sealing': ownerChannelSealing,
        '0043_passkeys': passkeys,
        '0044_fleet_state': fleetState,
        '0045_audit_staging': auditStaging(MIGRATION_SQL[dialect]),
        '0046_injection_texts': injectionTexts,
        '0047_approval_scopes': approvalScopes,
        '0048_counter_charge': counterCharge(MIGRATION_SQL[dialect]),
        '0049_staging_vacuum': stagingVacuum(MIGRATION_SQL[dialect]),
      };
    },
  };
}
