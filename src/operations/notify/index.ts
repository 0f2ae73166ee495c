/**
 * @module Notifications to reviewers (webhooks with a Slack-compatible payload and a link to the
 * console). Anything exported here is public API.
 */
export type { DecisionNoticesDeps } from './decision-notices.js';
export { DecisionNotices } from './decision-notices.js';
export type {
  AlertFacts,
  ChangeFacts,
  NotificationKind,
  NotificationPayload,
  PendingApprovalFacts,
  QuarantineFacts,
  ReviewFacts,
} from './notification.js';
export {
  alertMessage,
  changeMessage,
  NOTIFICATION_KINDS,
  pendingApprovalMessage,
  quarantineMessage,
  reviewMessage,
} from './notification.js';
export type { NotifySink } from './notifier.js';
export { Notifier } from './notifier.js';
export type { NotifyConfig, NotifyConfigInput } from './notify-config.js';
export {
  DEFAULT_NOTIFY_CONFIG,
  notifyConfigFromEnv,
  resolveNotifyConfig,
} from './notify-config.js';
export type { DeliveryOutcome, WebhookDeliveryOptions } from './webhook-delivery.js';
export { WebhookDelivery } from './webhook-delivery.js';
