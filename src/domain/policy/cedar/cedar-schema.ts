/**
 * @module toolgate's Cedar schema (namespace `Toolgate`): what an organisation policy may name, and
 * the types the strict validator checks every policy against before it is loaded (C6).
 */

/** Entity type and action names as they appear in policies and in requests. */
export const CEDAR_TYPES = {
  agent: 'Toolgate::Agent',
  user: 'Toolgate::User',
  tool: 'Toolgate::Tool',
  arguments: 'Toolgate::Arguments',
  numericArguments: 'Toolgate::NumericArguments',
  decimalArguments: 'Toolgate::DecimalArguments',
  listArguments: 'Toolgate::ListArguments',
  action: 'Toolgate::Action',
} as const;

/** The one action: an agent invokes a tool. */
export const INVOKE_ACTION = { type: CEDAR_TYPES.action, id: 'invoke' } as const;

/**
 * Call arguments are arbitrary JSON, but Cedar's strict validator needs every record attribute
 * declared. A record with `additionalAttributes` is refused by cedar-wasm 4.13 ("experimental,
 * `partial-validate` not enabled"), and declaring a fixed set of argument names would tie the
 * schema to individual tools. Cedar 4's entity tags are its typed string-keyed map, so arguments
 * ride on two per-call entities referenced from the context:
 *
 * - `context.arguments` (`Arguments`, tags String): every top-level argument. A string is its own
 *   value; any other value is its RFC 8785 canonical JSON text (`true`, `42`, `{"a":1}`), so `like`
 *   can still match inside nested values.
 * - `context.numeric_arguments` (`NumericArguments`, tags Long): the top-level arguments whose value
 *   is an integer Cedar can hold exactly (a JS safe integer), for `<`/`>` comparisons.
 * - `context.decimal_arguments` (`DecimalArguments`, tags decimal): the top-level numbers Cedar's
 *   `decimal` holds exactly (at most 4 decimal places, within ±922337203685477.5807), for
 *   `.greaterThan(decimal("100.00"))` and its siblings; 100.5 is here, not in numeric_arguments.
 *
 * - `context.list_arguments` (`ListArguments`, tags Set<String>): the top-level arguments that are
 *   arrays, each as the set of its elements (a string element is itself, any other its canonical
 *   JSON), so a policy tests membership element by element — `.contains("x")`, `.containsAll([…])`,
 *   `.containsAny([…])`. The same array stays a canonical-JSON string in `context.arguments`, so
 *   policies written before keep working.
 *
 * A number read through either view that the view cannot hold exactly is not left out (a forbid
 * on `amount > 100` would then never see 100.5): the engine refuses the call (rule
 * `cedar.number_inexact`, see numeric-reads.ts).
 *
 * The validator refuses `getTag` unless `hasTag` guards it, so a policy can never fail at run time
 * on an absent argument:
 *
 *     forbid (principal, action, resource == Toolgate::Tool::"http.fetch")
 *     when { context.arguments.hasTag("url") && context.arguments.getTag("url") like "http://*" };
 *
 * Nested values are not addressable as their own tags (no path syntax to get wrong); match their
 * JSON text instead.
 *
 * `context.user` is present only when the call is made on behalf of a user (`context has user`);
 * `on_behalf_of` (empty when none) and `user_permissions` carry the same facts flat, for short
 * conditions.
 */
export const TOOLGATE_CEDAR_SCHEMA = `
namespace Toolgate {
  entity Agent = {
    id: String,
    owner: String,
    capabilities: Set<String>,
  };

  entity User = {
    id: String,
    permissions: Set<String>,
  };

  entity Tool = {
    id: String,
    version: String,
    action_class: String,
    data_access: String,
    egress: String,
    access_tier: String,
    owner: String,
    provenance: String,
    tags: Set<String>,
  };

  // One of each per call; see the comment in cedar-schema.ts.
  entity Arguments tags String;
  entity NumericArguments tags Long;
  entity DecimalArguments tags decimal;
  entity ListArguments tags Set<String>;

  action invoke appliesTo {
    principal: [Agent],
    resource: [Tool],
    context: {
      session_id: String,
      run_id: String,
      on_behalf_of: String,
      user?: User,
      user_permissions: Set<String>,
      private_data_read: Bool,
      untrusted_sources: Set<String>,
      injection_seen: Bool,
      untrusted_destinations: Set<String>,
      external_sends: Long,
      egress_bytes: Long,
      spend_cents: Long,
      hour_utc: Long,
      destination_host: String,
      arguments: Arguments,
      numeric_arguments: NumericArguments,
      decimal_arguments: DecimalArguments,
      list_arguments: ListArguments,
    },
  };
}
`;
