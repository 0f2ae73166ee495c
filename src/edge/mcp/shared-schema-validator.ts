/**
 * @module One JSON Schema validator for every 2025-era MCP session (docs/architecture.md §6). The
 * v1 SDK gives each `Server` its own Ajv instance unless told otherwise: with one SDK server per
 * session that was over a third of what an open session held (~17 of ~46 kB measured at 200
 * sessions) and an Ajv set-up on every `initialize`. The gateway's servers validate elicitation
 * answers at most, against a handful of schemas, so one shared instance serves them all; its
 * compiled validators are kept by schema text in a bounded map, so a schema built per call can
 * never grow it without end.
 */

import type {
  JsonSchemaType,
  JsonSchemaValidator,
  jsonSchemaValidator,
} from '@modelcontextprotocol/sdk/validation';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';

/** Compiled validators kept at most; the oldest is dropped first. */
const MAX_SCHEMAS = 64;

class SharedSchemaValidator implements jsonSchemaValidator {
  readonly #ajv = new AjvJsonSchemaValidator();
  readonly #compiled = new Map<string, JsonSchemaValidator<unknown>>();

  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    const key = JSON.stringify(schema);
    let validator = this.#compiled.get(key);
    if (!validator) {
      // Compiled from a copy: Ajv also caches by schema object, and the copy is ours alone.
      validator = this.#ajv.getValidator<unknown>(JSON.parse(key) as JsonSchemaType);
      if (this.#compiled.size >= MAX_SCHEMAS) {
        const oldest = this.#compiled.keys().next();
        if (!oldest.done) this.#compiled.delete(oldest.value);
      }
      this.#compiled.set(key, validator);
    }
    return validator as JsonSchemaValidator<T>;
  }
}

export const SESSION_SCHEMA_VALIDATOR: jsonSchemaValidator = new SharedSchemaValidator();
