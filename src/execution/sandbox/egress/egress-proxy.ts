/**
 * @module The egress proxy (C10): the only route out of a sandbox. One process-wide
 * proxy hands out leases, one Unix socket per sandbox run, in a directory only its owner can
 * enter; the sandbox side binds that socket in and bridges it to 127.0.0.1:3128 inside.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CheckedDialer, type DialerOptions } from './checked-dialer.js';
import { type EgressLease, Lease, type LeaseOptions } from './egress-lease.js';

export interface EgressProxyOptions extends DialerOptions {
  /** Where lease sockets are made; default a fresh 0700 directory under the OS temp dir. */
  readonly socketDir?: string;
  /** File mode of each lease socket; default 0600 (the sandbox maps its user to the owner). */
  readonly socketMode?: number;
  /**
   * The user lease sockets are handed to. Default: when toolgate runs as root, the host's
   * nobody (65534), which the namespace sandbox runs as; otherwise the sockets stay toolgate's.
   */
  readonly socketOwner?: number;
  readonly clock?: () => Date;
}

const LEASE_ID = /^[A-Za-z0-9_-]{1,64}$/;
/** The host user the namespace sandbox runs as when toolgate runs as root. */
const SANDBOX_UID = 65_534;

export class EgressProxy {
  readonly #dir: string;
  readonly #ownsDir: boolean;
  readonly #mode: number;
  readonly #owner: number | undefined;
  readonly #dialer: CheckedDialer;
  readonly #clock: () => Date;
  readonly #leases = new Map<string, Lease>();
  #closed = false;

  constructor(options: EgressProxyOptions = {}) {
    this.#ownsDir = options.socketDir === undefined;
    this.#dir = options.socketDir ?? mkdtempSync(path.join(tmpdir(), 'toolgate-egress-'));
    // The sandbox user must pass through the folder to reach its socket, but not list it: a
    // socket's random name is the only way to it, and only its owner (and root) may connect.
    if (this.#ownsDir) chmodSync(this.#dir, 0o711);
    this.#owner = options.socketOwner ?? (process.getuid?.() === 0 ? SANDBOX_UID : undefined);
    this.#mode = options.socketMode ?? 0o600;
    this.#dialer = new CheckedDialer(options);
    this.#clock = options.clock ?? (() => new Date());
  }

  /** Opens a lease listening on its own socket; refuses a malformed or duplicate lease id. */
  async openLease(options: LeaseOptions): Promise<EgressLease> {
    if (this.#closed) throw new Error('the egress proxy is closed');
    if (!LEASE_ID.test(options.leaseId)) {
      throw new TypeError('a lease id is 1-64 characters of A-Z, a-z, 0-9, "_" and "-"');
    }
    if (this.#leases.has(options.leaseId)) {
      throw new Error(`lease ${options.leaseId} is already open`);
    }
    const socketPath = path.join(this.#dir, `${options.leaseId}.sock`);
    const lease = new Lease(socketPath, options, this.#dialer, this.#clock);
    this.#leases.set(options.leaseId, lease);
    try {
      await lease.listen(this.#mode, this.#owner);
    } catch (err) {
      this.#leases.delete(options.leaseId);
      await lease.close();
      throw err;
    }
    const close = lease.close.bind(lease);
    return {
      leaseId: lease.leaseId,
      socketPath,
      stats: () => lease.stats(),
      close: async () => {
        this.#leases.delete(options.leaseId);
        await close();
      },
    };
  }

  /** Closes every open lease and removes the socket directory if the proxy made it. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#leases.values()].map((l) => l.close()));
    this.#leases.clear();
    if (this.#ownsDir) rmSync(this.#dir, { recursive: true, force: true });
  }
}
