/**
 * @module The argument keys the audit log keeps readable for a tool: those a version of it
 * declares in its input schema (records/audit/audit-pseudonyms.ts); every other key is masked.
 */
import { declaredPropertyNames } from '../../records/audit/index.js';
import type { CatalogService } from './catalog-service.js';

/** The classified store's `declaredKeys` port, read from the catalog's versions of the tool. */
export function declaredArgumentKeys(
  catalog: Pick<CatalogService, 'versions'>,
): (toolId: string) => Promise<ReadonlySet<string>> {
  return async (toolId) => {
    const names = new Set<string>();
    for (const v of await catalog.versions(toolId)) {
      for (const n of declaredPropertyNames(v.definition.input_schema)) names.add(n);
    }
    return names;
  };
}
