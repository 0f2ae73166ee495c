/**
 * @module What a reviewer sees of a call that waits for approval: the resolved call (checked URL
 * and path arguments, the hosts it may reach), never the model's account of it.
 */
export interface RenderedCall {
  readonly tool: string;
  readonly version: string;
  readonly action_class: string;
  readonly arguments: unknown;
  readonly destination_hosts: readonly string[];
  readonly conditions: readonly unknown[];
  readonly second_factor: boolean;
  readonly out_of_band: boolean;
}
