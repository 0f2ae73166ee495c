/**
 * @module The REST front's schema compilers, each route's validators and response serializers
 * compiled on the route's first request instead of when the server starts. Compiling all of them
 * (Ajv for the requests, fast-json-stringify for the responses, some 120 operations) cost about
 * half a second of CPU at every start, most of it for routes a given process never serves. What
 * runs is the same compiled code, with the same options, as eager compilation gives; `compileAll`
 * compiles every pending one at once (the route tests call it, so a schema that cannot compile
 * fails a test instead of a first request).
 */
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsImport from 'ajv-formats';

// ajv-formats is CJS with `export default`; NodeNext sees the module object.
const addFormats = addFormatsImport as unknown as (ajv: Ajv) => Ajv;

/** A validator Fastify calls like Ajv's: a boolean, with the errors on `.errors`. */
interface LazyValidator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

type SerializerCompiler = ReturnType<ReturnType<typeof SerializerSelector>>;
type RouteDefinition = Parameters<SerializerCompiler>[0];

export interface LazySchemas {
  /** For `app.setValidatorCompiler`. */
  readonly validatorCompiler: (route: { schema: unknown; httpPart?: string }) => LazyValidator;
  /** For the server option `schemaController.compilersFactory.buildSerializer`. */
  readonly buildSerializer: (
    externalSchemas?: unknown,
    options?: Parameters<ReturnType<typeof SerializerSelector>>[1],
  ) => (route: RouteDefinition) => (doc: unknown) => string;
  /** Compiles every schema not compiled yet; resolves to how many it compiled. */
  compileAll(): number;
}

export function lazySchemas(): LazySchemas {
  const pending = new Set<() => void>();
  // Query strings and path parameters are text and are coerced to the declared types; bodies are
  // JSON and are taken as sent: `"tool": ["get_order"]` is an error, not a string.
  // The standard formats (ajv-formats) are checked: without them Ajv ignores a `format` the route
  // schemas use (`date-time`) and warns about it on stderr.
  let ajvs: { coercing: Ajv; exact: Ajv } | null = null;
  const ajv = (httpPart: string | undefined): Ajv => {
    ajvs ??= {
      coercing: addFormats(
        new Ajv({
          coerceTypes: 'array',
          useDefaults: true,
          removeAdditional: false,
          allErrors: true,
          strict: false,
        }),
      ),
      exact: addFormats(
        new Ajv({
          coerceTypes: false,
          useDefaults: true,
          removeAdditional: false,
          allErrors: true,
          strict: false,
        }),
      ),
    };
    return httpPart === 'body' ? ajvs.exact : ajvs.coercing;
  };
  const defaults = SerializerSelector();

  return {
    validatorCompiler: ({ schema, httpPart }) => {
      let compiled: ValidateFunction | undefined;
      const compile = (): ValidateFunction => {
        pending.delete(compile);
        compiled ??= ajv(httpPart).compile(schema as object);
        return compiled;
      };
      pending.add(compile);
      const validate: LazyValidator = (data) => {
        const fn = compiled ?? compile();
        const ok = fn(data) as boolean;
        validate.errors = fn.errors ?? null;
        return ok;
      };
      return validate;
    },
    buildSerializer: (externalSchemas, options) => {
      const compileRoute = defaults(externalSchemas, options);
      return (route) => {
        let compiled: ((doc: unknown) => string) | undefined;
        const compile = () => {
          pending.delete(compile);
          compiled ??= compileRoute(route);
          return compiled;
        };
        pending.add(compile);
        return (doc) => (compiled ?? compile())(doc);
      };
    },
    compileAll: () => {
      const all = [...pending];
      for (const compile of all) compile();
      return all.length;
    },
  };
}
