/**
 * @module Credentials in text a tool returned, by the same table of vendor-anchored shapes the
 * egress proxy refuses to let out (core's SECRET_PATTERNS): a result that carries an API key or a
 * private key would otherwise put it in front of the model, and from there into any later call.
 */

import type { Finding } from '../../core/finding.js';
import { SECRET_PATTERNS } from '../../core/index.js';

const COMPILED = SECRET_PATTERNS.map((p) => ({
  rule: `secret.${p.id}`,
  re: new RegExp(p.source, 'g'),
}));

export function findSecrets(text: string): Finding[] {
  const out: Finding[] = [];
  for (const { rule, re } of COMPILED) {
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      out.push({ kind: 'secret', rule, start: m.index, end: m.index + m[0].length });
      if (m[0].length === 0) re.lastIndex += 1;
    }
  }
  return out;
}
