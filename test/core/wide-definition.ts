/**
 * @module A tool definition as wide as the one of attack round 27 F1: an input schema of `count`
 * integer properties (`f0000`…), each with a `maximum` of 100 unless `maxima` names another.
 */
export function wideDefinition(count: number, maxima: Record<string, number> = {}): unknown {
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < count; i++) {
    const name = `f${String(i).padStart(4, '0')}`;
    properties[name] = { type: 'integer', minimum: 0, maximum: maxima[name] ?? 100 };
  }
  return {
    id: 'bulk_adjust',
    version: '1.0.0',
    input_schema: { type: 'object', additionalProperties: false, properties },
  };
}
