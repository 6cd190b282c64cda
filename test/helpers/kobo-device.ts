// A Kobo e-reader as far as the server can tell: raw HTTP requests (query strings sent byte for byte, with the raw
// `[` `]` the firmware uses) carrying the headers a device sends.
import { request } from 'node:http';

export interface DeviceResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  text(): string;
  json(): unknown;
}

export const DEVICE_HEADERS: Record<string, string> = {
  'user-agent': 'Mozilla/5.0 (Linux; U; Android 2.0; en-us;) AppleWebKit/538.1 (KHTML, like Gecko) Version/4.0 Mobile Safari/538.1 (Kobo Touch 0387/4.38.21908)',
  'accept-language': 'en-US',
  'x-kobo-appversion': '4.38.21908',
  'x-kobo-devicemodel': 'Kobo Libra 2',
  'x-kobo-deviceos': '3.0.35+',
  'x-kobo-deviceosversion': 'NA',
  'x-kobo-platformid': '00000000-0000-0000-0000-000000000388',
  'x-kobo-affiliatename': 'Kobo',
  'x-kobo-deviceid': '4b1c3e8a9f0d2b7e6c5a4f3e2d1c0b9a8f7e6d5c4b3a2918',
  'x-kobo-userkey': 'f1e2d3c4-b5a6-4789-8abc-def012345678',
};

export interface KoboDevice {
  call(method: string, path: string, options?: { body?: unknown; headers?: Record<string, string>; syncToken?: string }): Promise<DeviceResponse>;
  /** The device's access token once it authenticated. */
  bearer?: string;
}

/** A device whose api_endpoint is `<origin>/api/kobo/<token>`; `path` is what follows it. */
export function koboDevice(origin: string, token: string, basePath = ''): KoboDevice {
  const url = new URL(origin);
  const device: KoboDevice = {
    call: (method, path, options = {}) =>
      new Promise((resolve, reject) => {
        const payload = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
        const headers: Record<string, string> = { ...DEVICE_HEADERS, ...(device.bearer ? { authorization: `Bearer ${device.bearer}` } : {}), ...options.headers };
        if (options.syncToken) headers['x-kobo-synctoken'] = options.syncToken;
        if (payload) Object.assign(headers, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(payload.length) });
        const req = request({ host: url.hostname, port: url.port, method, path: `${basePath}/api/kobo/${token}${path}`, headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const body = Buffer.concat(chunks);
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text: () => body.toString('utf8'), json: () => JSON.parse(body.toString('utf8')) as unknown });
          });
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end(payload);
      }),
  };
  return device;
}

/** Every property name in a JSON value, recursively (Kobo's API spells them all in UpperCamelCase). */
export function propertyNames(value: unknown, out: Set<string> = new Set()): Set<string> {
  if (Array.isArray(value)) for (const item of value) propertyNames(item, out);
  else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      out.add(key);
      propertyNames(item, out);
    }
  }
  return out;
}
