/** @module The console's pages and form actions beside the inbox, in navigation order. */
import type { ConsoleAction, ConsoleDownload, ConsolePage } from '../console-page.js';
import { alertsPage, reportDownload, reportsPage } from './alert-report-pages.js';
import { auditPage, auditRecordPage } from './audit-pages.js';
import { catalogPage, lifecycleAction, toolPage } from './catalog-pages.js';
import { accessMatrixPage, agentsPage, usersPage } from './identity-pages.js';
import { passkeyEnrolAction, passkeyRemoveAction, passkeysPage } from './passkey-pages.js';
import { providerPage, providersPage } from './provider-pages.js';
import { quarantinePage, releaseAction } from './quarantine-pages.js';
import { reviewApproveAction, reviewPage, reviewRejectAction } from './review-pages.js';
import {
  closeSessionAction,
  sessionPage,
  sessionsPage,
  suspendSessionAction,
} from './session-pages.js';

export const CONSOLE_PAGES: readonly ConsolePage[] = [
  catalogPage,
  toolPage,
  quarantinePage,
  reviewPage,
  providersPage,
  providerPage,
  agentsPage,
  usersPage,
  accessMatrixPage,
  sessionsPage,
  sessionPage,
  auditPage,
  auditRecordPage,
  alertsPage,
  reportsPage,
  passkeysPage,
];
export const CONSOLE_ACTIONS: readonly ConsoleAction[] = [
  lifecycleAction,
  releaseAction,
  reviewApproveAction,
  reviewRejectAction,
  suspendSessionAction,
  closeSessionAction,
  passkeyEnrolAction,
  passkeyRemoveAction,
];
/** Files the console hands out (GET, no state change): the governance reports. */
export const CONSOLE_DOWNLOADS: readonly ConsoleDownload[] = [reportDownload];
