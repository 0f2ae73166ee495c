/**
 * @module Many real pending approval rows, fast: one multi-row insert per 500 into the same
 * table the approval desk writes, with the shape it writes (for the inbox at scale).
 */
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/records/store/index.js';

export async function insertPendingApprovals(
  db: Kysely<Database>,
  count: number,
  now: Date = new Date(),
): Promise<string[]> {
  const ids: string[] = [];
  const rows = [];
  for (let i = 0; i < count; i++) {
    const id = `apr_bulk${String(i).padStart(6, '0')}${randomBytes(4).toString('hex')}`;
    ids.push(id);
    // One millisecond apart, oldest first; a few share a millisecond so ids break the tie.
    const at = new Date(now.getTime() - (count - i) * 1000 + (i % 7 === 0 ? 1 : 0));
    const args = { to: `customer${i}@customer.example`, subject: 'Hello', body: `Message ${i}` };
    rows.push({
      id,
      session_id: `ses_bulk${i % 97}`,
      agent_id: 'support-bot',
      user_id: i % 3 === 0 ? `user${i % 11}` : null,
      tool_id: 'send_email',
      tool_version: '1.0.0',
      action_class: 'external_send',
      args_hash: randomBytes(16).toString('hex'),
      rendered: JSON.stringify({
        tool: 'send_email',
        version: '1.0.0',
        action_class: 'external_send',
        arguments: args,
        destination_hosts: ['mail.example.com'],
        conditions: [],
        second_factor: false,
        out_of_band: false,
      }),
      status: 'pending',
      second_factor: 0,
      out_of_band: 0,
      created_at: at.toISOString(),
      expires_at: new Date(now.getTime() + 24 * 3600 * 1000).toISOString(),
      decided_at: null,
      decided_by: null,
      reason: null,
      token: null,
      token_id: null,
      consumed_at: null,
    });
  }
  for (let i = 0; i < rows.length; i += 500)
    await db
      .insertInto('approvals')
      .values(rows.slice(i, i + 500))
      .execute();
  return ids;
}
