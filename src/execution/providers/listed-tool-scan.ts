/**
 * @module What the import of an upstream's listing scans in each listed tool (C3, C20): every
 * string and key its schemas send to a model, for poisoning, within the caps a definition must
 * meet; and the patterns the gate could not match in linear time.
 */
import {
  MAX_SCHEMA_TEXT_CHARS,
  MAX_SCHEMA_TEXT_TOTAL_CHARS,
  type ScanFinding,
  scanToolText,
  schemaModelTexts,
  unsupportedPatternProblems,
} from '../../domain/catalog/index.js';
import type { PinnedTool } from './imported-definition.js';
import type { ProviderSpec } from './provider-spec.js';

/** What the scan reads of a listed tool (its pin is not scanned). */
type ScannedTool = Omit<PinnedTool, 'pin'>;

/** The host an http provider's tools reach anyway (a link to it sends the model nowhere new). */
export function providerHosts(spec: ProviderSpec): string[] {
  if (spec.transport !== 'http' || spec.url === undefined) return [];
  try {
    return [new URL(spec.url).hostname];
  } catch {
    return [];
  }
}

/**
 * The poisoning scan of one listed tool, over every string and key its schemas send to a model.
 * An upstream's listing has no size limit of its own: schema texts over the caps a definition
 * must meet are not scanned (a bounded cost) but reported, and classifying the tool is refused.
 */
export function scanListedTool(
  tool: ScannedTool,
  ownHosts: readonly string[],
  docHosts: readonly string[],
): ScanFinding[] {
  const texts = [
    ...schemaModelTexts(tool.inputSchema, '/inputSchema'),
    ...schemaModelTexts(tool.outputSchema ?? {}, '/outputSchema'),
  ];
  const description = tool.description ?? '';
  const total = texts.reduce((n, t) => n + t.text.length, description.length);
  const longest = texts.find((t) => t.text.length > MAX_SCHEMA_TEXT_CHARS);
  if (longest || total > MAX_SCHEMA_TEXT_TOTAL_CHARS) {
    return [
      {
        rule: 'size.text',
        category: 'schema',
        field: longest?.field ?? '',
        message: `Schema strings too long to scan (over ${MAX_SCHEMA_TEXT_CHARS} characters each or ${MAX_SCHEMA_TEXT_TOTAL_CHARS} in all)`,
        excerpt: (longest?.field ?? '').slice(0, 80),
      },
    ];
  }
  return scanToolText({ name: tool.name, description, extraTexts: texts, ownHosts, docHosts });
}

/**
 * Patterns the gate could not match in linear time, shown with the scan's findings so an admin
 * sees at import why classifying the tool will be refused (DEFINITION_INVALID at that pointer).
 */
export function patternFindings(tool: ScannedTool): ScanFinding[] {
  const problems = [
    ...unsupportedPatternProblems(tool.inputSchema, '/inputSchema'),
    ...unsupportedPatternProblems(tool.outputSchema ?? {}, '/outputSchema'),
  ];
  return problems.map((p) => ({
    rule: p.rule,
    category: 'schema',
    field: p.pointer,
    message: `The pattern ${p.message}`,
    excerpt: p.pointer.slice(0, 80),
  }));
}
