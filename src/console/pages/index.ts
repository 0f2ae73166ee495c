/** @module The console's pages and form actions beside the inbox, in navigation order. */
import type { ConsoleAction, ConsolePage } from '../console-page.js';

export const CONSOLE_PAGES: readonly ConsolePage[] = [];
export const CONSOLE_ACTIONS: readonly ConsoleAction[] = [];
