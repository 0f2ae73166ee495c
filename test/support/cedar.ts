/**
 * @module Cedar requests to start from in the policy engine's tests: a tool and a context that
 * say nothing in particular, each test changing only the facts it is about.
 */
import type { CedarRequest, CedarTool } from '../../src/domain/policy/cedar/index.js';

/** A public `read` tool of no egress, `standard` tier, owned by `platform`, first-party. */
export function cedarTool(id: string, over: Partial<CedarTool> = {}): CedarTool {
  return {
    id,
    version: '1.0.0',
    action_class: 'read',
    data_access: 'public',
    egress: 'none',
    access_tier: 'standard',
    owner: 'platform',
    provenance: 'first-party',
    tags: [],
    ...over,
  };
}

/** A call's context at noon UTC: nothing read, sent or spent yet, no arguments, no user. */
export function cedarContext(over: Partial<CedarRequest['context']> = {}): CedarRequest['context'] {
  return {
    session_id: 's',
    run_id: 'r',
    on_behalf_of: '',
    user_permissions: [],
    private_data_read: false,
    external_sends: 0,
    egress_bytes: 0,
    spend_cents: 0,
    hour_utc: 12,
    destination_host: '',
    arguments: {},
    ...over,
  };
}
