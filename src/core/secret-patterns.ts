/**
 * @module Shapes of secrets, kept as data: what must not leave through egress (C10) and what a
 * tool's result is scanned for before a model reads it (step `result`, docs/architecture.md §3). Add a
 * row to catch a new kind. Each pattern is anchored on a vendor prefix or armour line so that
 * ordinary text does not trip it; the egress scan cannot see inside TLS (CONNECT tunnels).
 */

export interface SecretPattern {
  /** Stable id, reported as `egress.secret.<id>`. */
  readonly id: string;
  readonly description: string;
  /** A JavaScript regular expression source, compiled with the `g` flag only. */
  readonly source: string;
}

export const SECRET_PATTERNS: readonly SecretPattern[] = [
  {
    id: 'private_key',
    description: 'PEM or OpenSSH private key armour',
    source: '-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----',
  },
  {
    id: 'aws_access_key',
    description: 'AWS access key id',
    source: '\\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|APKA)[0-9A-Z]{16}\\b',
  },
  {
    id: 'github_token',
    description: 'GitHub token (classic, OAuth, app, refresh)',
    source: '\\bgh[pousr]_[A-Za-z0-9]{36,255}\\b',
  },
  {
    id: 'github_pat',
    description: 'GitHub fine-grained personal access token',
    source: '\\bgithub_pat_[A-Za-z0-9_]{22,255}\\b',
  },
  {
    id: 'slack_token',
    description: 'Slack bot, user, app or refresh token',
    source: '\\bxox[abposre]-[A-Za-z0-9-]{10,}',
  },
  {
    id: 'slack_webhook',
    description: 'Slack incoming webhook URL',
    source: 'hooks\\.slack\\.com/services/T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/[A-Za-z0-9_]+',
  },
  {
    id: 'anthropic_key',
    description: 'Anthropic API key',
    source: '\\bsk-ant-[A-Za-z0-9_-]{20,}',
  },
  {
    id: 'openai_key',
    description: 'OpenAI API key',
    source: '\\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}',
  },
  {
    id: 'stripe_key',
    description: 'Stripe live secret or restricted key',
    source: '\\b(?:sk|rk)_live_[A-Za-z0-9]{16,}',
  },
  {
    id: 'google_api_key',
    description: 'Google API key',
    source: '\\bAIza[0-9A-Za-z_-]{35}',
  },
  {
    id: 'jwt',
    description: 'JSON Web Token (signed)',
    source: '\\beyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{16,}',
  },
];
