/**
 * @module Migration 0042: owner channels with a name and a sealed URL (docs/operations.md, "Owner
 * notices"). A channel's URL is a credential (a Slack webhook URL is one): from now on it is
 * stored sealed with the master key (`url_sealed`), found again by a keyed hash (`url_key`, one
 * URL once per team) and shown only as its origin (`url_hint`); `url` is empty on such a row. A
 * channel an applied file declares has a `name`, unique in its team, so applying the file again
 * finds it. Rows from before keep their URL in `url` until the next channel change seals them
 * (the migration has no master key).
 */
import type { Kysely, Migration } from 'kysely';

export const ownerChannelSealing: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    for (const column of ['name', 'url_sealed', 'url_key', 'url_hint', 'updated_at']) {
      await db.schema.alterTable('owner_channels').addColumn(column, 'text').execute();
    }
    // Sealed rows all hold '' in `url`: uniqueness moves to the keyed hash.
    await db.schema.dropIndex('owner_channels_team_url').execute();
    await db.schema
      .createIndex('owner_channels_team_url_key')
      .on('owner_channels')
      .columns(['team', 'url_key'])
      .unique()
      .execute();
    await db.schema
      .createIndex('owner_channels_team_name')
      .on('owner_channels')
      .columns(['team', 'name'])
      .unique()
      .execute();
  },
};
