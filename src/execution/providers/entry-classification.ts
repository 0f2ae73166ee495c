/**
 * @module What an admin decides for one imported resource, resource template or prompt before it
 * can be offered: the tools' vocabulary (data_access, access_tier, required_capabilities, tags,
 * wall time), less what an entry cannot be: a read or a prompt fetch is always `action_class:
 * read`, and toolgate gives it no egress of its own.
 */

import { CAPABILITY_PATTERN, ToolgateError } from '../../core/index.js';
import {
  ACCESS_TIERS,
  compileDocumentValidator,
  DATA_ACCESS,
  type JsonSchemaObject,
} from '../../domain/catalog/index.js';

export interface EntryClassification {
  readonly data_access: (typeof DATA_ACCESS)[number];
  readonly access_tier: (typeof ACCESS_TIERS)[number];
  readonly required_capabilities: readonly string[];
  /** How long one read may take before it is abandoned (default 10 000 ms). */
  readonly wall_time_ms?: number;
  readonly tags?: readonly string[];
}

export const entryClassificationSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['data_access', 'access_tier', 'required_capabilities'],
  properties: {
    data_access: { enum: [...DATA_ACCESS] },
    access_tier: { enum: [...ACCESS_TIERS] },
    required_capabilities: {
      type: 'array',
      maxItems: 32,
      items: { type: 'string', pattern: CAPABILITY_PATTERN },
    },
    wall_time_ms: { type: 'integer', minimum: 100, maximum: 3_600_000 },
    tags: { type: 'array', maxItems: 32, items: { type: 'string', maxLength: 64 } },
  },
} as const satisfies JsonSchemaObject;

const validate = compileDocumentValidator(entryClassificationSchema);

export function checkEntryClassification(input: unknown): EntryClassification {
  const problems = validate(input);
  if (problems.length > 0) {
    throw new ToolgateError(
      'INPUT_INVALID',
      `classification refused: ${problems[0]?.pointer} ${problems[0]?.message}`,
      { problems },
    );
  }
  return input as EntryClassification;
}
