/**
 * @module Owner teams and what they hear about their tools (docs/architecture.md §8, C16):
 * notification channels per team, and the notices sent to them. Anything exported here is public
 * API.
 */
export type { Crossing, ErrorRateOptions } from './error-rate-window.js';
export { DEFAULT_ERROR_RATE, ErrorRateWindow } from './error-rate-window.js';
export type { OwnerChannelDocument } from './owner-channel-spec.js';
export {
  ENV_NAME_PATTERN,
  OWNER_CHANNEL_NAME_PATTERN,
  ownerChannelDocumentProblems,
  ownerChannelDocumentSchema,
} from './owner-channel-spec.js';
export type {
  DeclaredChannel,
  NewOwnerChannel,
  OwnerChannelView,
  TeamScope,
} from './owner-channels.js';
export { MAX_CHANNELS_PER_TEAM, OwnerChannels } from './owner-channels.js';
export type {
  FactValue,
  NoticeFacts,
  OwnerNoticeKind,
  OwnerNoticePayload,
  ToolEvent,
} from './owner-notice.js';
export { OWNER_NOTICE_KINDS, ownerNoticeMessage } from './owner-notice.js';
export type {
  CallOutcomeRecord,
  NoticeDelivery,
  NoticeOutcome,
  OwnerNoticeSink,
  OwnerNoticesDeps,
  OwnerNoticesOptions,
} from './owner-notices.js';
export { DEFAULT_OWNER_NOTICES, OwnerNotices } from './owner-notices.js';
export { toolOwnership, unhealthyToOwners } from './tool-ownership.js';
