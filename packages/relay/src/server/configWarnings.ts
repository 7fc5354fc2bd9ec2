// What the command's configuration allows but an operator most likely did not mean, said once at start (a warning
// line each, the relay still starts): CORS_ORIGINS naming a page served over cleartext http:// (its token crosses the
// network readable; loopback pages are exempt: a developer's), and TRUST_PROXY_HOPS trusted on an instance listening
// on an address clients may reach directly (any of them then picks its own address by writing X-Forwarded-For).
import { BlockList, isIP } from 'node:net';

/** What warnings read of the configuration. */
export interface WarnedConfig {
  host: string;
  trustProxyHops: number;
  corsOrigins: string[];
}

/** One warning: its line and the fields that go with it. */
export interface ConfigWarning {
  message: string;
  fields: Record<string, unknown>;
}

/** Loopback and private addresses (RFC 1918, RFC 4193 unique local, link-local): reachable from inside only. */
const inside = new BlockList();
inside.addSubnet('127.0.0.0', 8, 'ipv4');
inside.addSubnet('10.0.0.0', 8, 'ipv4');
inside.addSubnet('172.16.0.0', 12, 'ipv4');
inside.addSubnet('192.168.0.0', 16, 'ipv4');
inside.addSubnet('169.254.0.0', 16, 'ipv4');
inside.addAddress('::1', 'ipv6');
inside.addSubnet('fc00::', 7, 'ipv6');
inside.addSubnet('fe80::', 10, 'ipv6');

/** Whether `host` (an address or a name) can only be reached from this machine or a private network. */
function insideOnly(host: string): boolean {
  const address = host.replace(/^\[|\]$/g, '');
  if (address === 'localhost') return true;
  const kind = isIP(address);
  if (kind === 0) return false; // a name: where it points is not known here
  return inside.check(address, kind === 4 ? 'ipv4' : 'ipv6');
}

/** Whether an origin's page is on this machine (http:// is fine there: nothing crosses a network). */
function loopbackOrigin(origin: string): boolean {
  const { hostname } = new URL(origin);
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * The warnings of a configuration, in the order they are logged.
 * @example for (const w of configWarnings(config)) log.warn(w.fields, w.message);
 */
export function configWarnings(config: WarnedConfig): ConfigWarning[] {
  const warnings: ConfigWarning[] = [];
  const cleartext = config.corsOrigins.filter((o) => o.startsWith('http://') && !loopbackOrigin(o));
  if (cleartext.length > 0) {
    warnings.push({
      message:
        'CORS_ORIGINS names pages served over http://: their till tokens cross the network in clear text; serve them over https:// (loopback pages are fine)',
      fields: { origins: cleartext },
    });
  }
  if (config.trustProxyHops > 0 && !insideOnly(config.host)) {
    warnings.push({
      message:
        'TRUST_PROXY_HOPS is set and HOST is not a loopback or private address: a client reaching this instance directly picks its own address (X-Forwarded-For) and so its refusal bound; make it reachable only through the balancer',
      fields: { host: config.host, trustProxyHops: config.trustProxyHops },
    });
  }
  return warnings;
}
