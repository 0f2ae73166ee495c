/**
 * @module Which resolved addresses the proxy may connect to (C10): public unicast only.
 * Loopback, private, link-local, CGNAT, unspecified, multicast, reserved, unique-local and the
 * cloud metadata addresses are refused, and so is any IPv6 form that embeds such an IPv4 address
 * (mapped, compatible, NAT64, 6to4). ipaddr.js classifies; this file only decides.
 */
import ipaddr from 'ipaddr.js';

export type AddressVerdict =
  | { readonly ok: true; readonly address: string }
  | {
      readonly ok: false;
      readonly rule: string;
      /** The address and what it is (`10.1.2.3 is a private address`). */
      readonly reason: string;
      /**
       * What it is, without the address (`a private address`): what a refusal of a resolved name
       * says to someone who may not learn what the name resolves to (attack round 22, Y16).
       */
      readonly what: string;
    };

/** Instance metadata services: refused by name as well as by range, so the rule says why. */
export const METADATA_ADDRESSES: readonly string[] = [
  '169.254.169.254',
  '169.254.170.2',
  '100.100.100.200',
  'fd00:ec2::254',
];

const metadata = new Set(METADATA_ADDRESSES.map((a) => ipaddr.parse(a).toNormalizedString()));

function forbidden(rule: string, shown: string | null, what: string): AddressVerdict {
  return { ok: false, rule, reason: shown === null ? what : `${shown} is ${what}`, what };
}

function checkV4(v4: ipaddr.IPv4, shown: string, via?: string): AddressVerdict {
  const how = via === undefined ? '' : ` (embedded in ${via})`;
  if (metadata.has(v4.toNormalizedString())) {
    return forbidden('egress.metadata_address', shown, `a cloud metadata address${how}`);
  }
  const range = v4.range();
  if (range !== 'unicast') {
    return forbidden('egress.address_forbidden', shown, `a ${range} address${how}`);
  }
  return { ok: true, address: shown };
}

/** The IPv4 address held in two 16-bit words of an IPv6 address. */
function embeddedV4(hi: number, lo: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
}

/**
 * Decides one address as returned by DNS. Anything ipaddr.js cannot parse is refused; IPv6 is
 * allowed only inside global unicast 2000::/3 and outside every special range.
 */
export function checkAddress(address: string): AddressVerdict {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return forbidden(
      'egress.address_forbidden',
      null,
      'the resolver returned something not an address',
    );
  }
  if (parsed.kind() === 'ipv4') return checkV4(parsed as ipaddr.IPv4, address);
  const v6 = parsed as ipaddr.IPv6;
  const shown = v6.toString();
  if (metadata.has(v6.toNormalizedString())) {
    return forbidden('egress.metadata_address', shown, 'a cloud metadata address');
  }
  const w = v6.parts;
  const range = v6.range();
  if (v6.isIPv4MappedAddress()) return checkV4(v6.toIPv4Address(), shown, 'an IPv4-mapped address');
  // ::a.b.c.d (deprecated IPv4-compatible) and everything else under ::/96 except ::1 and ::.
  if (w.slice(0, 6).every((x) => x === 0) && range !== 'loopback' && range !== 'unspecified') {
    return checkV4(embeddedV4(w[6] ?? 0, w[7] ?? 0), shown, 'an IPv4-compatible address');
  }
  // 64:ff9b::/96 is NAT64 of a public address; 64:ff9b:1::/48 is local-use and refused below.
  if (w[0] === 0x64 && w[1] === 0xff9b && w.slice(2, 6).every((x) => x === 0)) {
    return checkV4(embeddedV4(w[6] ?? 0, w[7] ?? 0), shown, 'a NAT64 address');
  }
  if (range === '6to4') {
    return checkV4(embeddedV4(w[1] ?? 0, w[2] ?? 0), shown, 'a 6to4 address');
  }
  const first = w[0] ?? 0;
  if (range !== 'unicast' || first < 0x2000 || first > 0x3fff) {
    return forbidden('egress.address_forbidden', shown, `a ${range} address`);
  }
  return { ok: true, address: shown };
}
