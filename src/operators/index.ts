/** @module Operators: accounts, roles and how they authenticate. Anything exported here is public API. */

export type { ConsoleSessionGrant, ConsoleSessionView } from './console-sessions.js';
export {
  ConsoleSessions,
  DEFAULT_CONSOLE_IDLE_MS,
  DEFAULT_CONSOLE_LIFETIME_MS,
} from './console-sessions.js';
export type { Operator, OperatorAuthentication, OperatorRole } from './operator.js';
export {
  BOOTSTRAP_ACTOR_ID,
  BOOTSTRAP_OPERATOR,
  hasRole,
  isBootstrap,
  OPERATOR_ROLES,
  operatorActor,
} from './operator.js';
export type { SecondFactorCheck } from './second-factor-port.js';
