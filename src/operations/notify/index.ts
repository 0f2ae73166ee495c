/**
 * @module Notifications to reviewers (webhooks with a Slack-compatible payload and a link to the
 * console). Anything exported here is public API.
 */
export type {
  AlertFacts,
  NotificationKind,
  NotificationPayload,
  PendingApprovalFacts,
  QuarantineFacts,
} from './notification.js';
export { alertMessage, pendingApprovalMessage, quarantineMessage } from './notification.js';
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
