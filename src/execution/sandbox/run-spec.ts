/** @module What one sandboxed run is given: argv, stdin, an explicit environment and its limits. */
import type { SandboxLimits } from '../../domain/catalog/index.js';

export const DRIVER_NAMES = ['process', 'namespace', 'gvisor'] as const;
export type DriverName = (typeof DRIVER_NAMES)[number];

/** A host file or directory made visible read-only inside the sandbox. */
export interface ReadOnlyBind {
  /** Absolute host path. */
  readonly source: string;
  /** Absolute path inside the sandbox. */
  readonly target: string;
}

export interface RunSpec {
  /** The program and its arguments, passed as-is; never a shell string built from arguments. */
  readonly argv: readonly string[];
  /** Bytes written to the program's stdin (a tool's arguments as JSON), then closed. */
  readonly stdin?: string | Uint8Array;
  /**
   * The whole environment of the program. Nothing of toolgate's own environment is added, except
   * PATH/HOME/TMPDIR defaults and, with `egressSocket`, the proxy variables.
   */
  readonly env?: Readonly<Record<string, string>>;
  readonly limits: SandboxLimits;
  readonly binds?: readonly ReadOnlyBind[];
  /**
   * Host directories made visible read-write (an MCP provider's workspace, named by its
   * configuration only). Namespace and gvisor drivers honour them; the process driver refuses.
   */
  readonly writableBinds?: readonly ReadOnlyBind[];
  /**
   * Host path of a Unix socket (the egress proxy). It is bound at /run/toolgate/egress.sock and
   * bridged to 127.0.0.1:3128 inside the sandbox; the network namespace stays loopback-only.
   */
  readonly egressSocket?: string;
}

/** A process kept alive (an MCP stdio server): no wall-clock limit unless one is given. */
export interface LongLivedSpec extends Omit<RunSpec, 'stdin'> {
  readonly wallTimeMs?: number;
}

/** Where the proxy bridge listens and where the socket appears inside a sandbox. */
export const EGRESS_SOCKET_PATH = '/run/toolgate/egress.sock';
export const EGRESS_PROXY_URL = 'http://127.0.0.1:3128';

/** The environment a program gets: defaults, the spec's own variables, the proxy variables. */
export function sandboxEnv(spec: Pick<RunSpec, 'env' | 'egressSocket'>): Record<string, string> {
  const env: Record<string, string> = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: '/tmp',
    TMPDIR: '/tmp',
    LANG: 'C.UTF-8',
    ...(spec.env ?? {}),
  };
  if (spec.egressSocket !== undefined) {
    for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy']) {
      env[name] = EGRESS_PROXY_URL;
    }
  }
  return env;
}
