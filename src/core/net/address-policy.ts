// Which network addresses outgoing requests may reach: the public internet only, unless a host is allowed by name.
import ipaddr from 'ipaddr.js';

/** True for a public unicast address; false for private, loopback, link-local, multicast, reserved and the like. */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed.range() === 'unicast';
}

/** `[::1]` → `::1`: URL hostnames keep the brackets of IPv6 literals. */
export function bareHost(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

/** Whether `hostname` is on the allow list (exact, case-insensitive; IPv6 literals with or without brackets). */
export function isAllowedHost(hostname: string, allowPrivateHosts: readonly string[]): boolean {
  const host = bareHost(hostname).toLowerCase();
  return allowPrivateHosts.some((allowed) => bareHost(allowed.trim()).toLowerCase() === host);
}
