/** @module The details of the catalogue's cap refusals, LIMIT_REACHED and OVERLOADED (errors.ts). */

/** Which cap refused, its size, and when to retry (also sent as `Retry-After`). */
export interface CapDetails {
  limit:
    | 'sessions_per_agent'
    | 'sessions_per_user'
    | 'mcp_sessions'
    | 'in_flight'
    | 'in_flight_per_caller'
    | 'in_flight_per_agent'
    | 'in_flight_per_user'
    | 'streams_per_agent'
    | 'streams_per_user'
    | 'waits_per_agent'
    | 'waits_per_user'
    | 'queue'
    | 'event_loop';
  max: number;
  retryAfterSeconds: number;
}
