/**
 * @module The version a classification registers an imported entry or tool under: one major above
 * any version of that catalog id, so a re-classification is a new version, never an edit.
 */
import semver from 'semver';
import type { CatalogWrite } from '../../domain/catalog/index.js';

export async function nextMajorVersion(trx: CatalogWrite['trx'], toolId: string): Promise<string> {
  const versions = await trx
    .selectFrom('tool_versions')
    .select('version')
    .where('tool_id', '=', toolId)
    .execute();
  const top = versions.map((v) => semver.major(v.version)).reduce((a, b) => Math.max(a, b), 0);
  return `${top + 1}.0.0`;
}
