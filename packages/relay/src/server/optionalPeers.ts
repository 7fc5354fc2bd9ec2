// The server libraries the relay command needs (dependencies of @shop-lookup/relay), loaded when the command
// starts. When one is missing (an install that left it out), the command says exactly what to install.
import type * as PinoModule from 'pino';
import type * as PromClientModule from 'prom-client';

export type Pino = typeof PinoModule.pino;
export type PromClient = typeof PromClientModule;

/** The libraries by package name, each loaded by a literal import (so bundlers keep it external). */
const LOADERS = {
  pino: () => import('pino'),
  'prom-client': () => import('prom-client'),
  redis: () => import('redis'),
  'rate-limiter-flexible': () => import('rate-limiter-flexible'),
} satisfies Record<string, () => Promise<unknown>>;

type PeerName = keyof typeof LOADERS;

/** The major versions the command is made for (the dependencies of its package.json). */
const PEER_RANGES: Record<PeerName, string> = {
  pino: '^10',
  'prom-client': '^15',
  redis: '^6',
  'rate-limiter-flexible': '^11',
};

export interface ServerPeers {
  pino: Pino;
  prom: PromClient;
}

type Loader = (name: PeerName) => Promise<unknown>;

/** Whether `error` says that `name` itself is not installed (not one of its own files or dependencies). */
function isMissing(error: unknown, name: string): boolean {
  const e = error as { code?: unknown; message?: unknown };
  if (e?.code !== 'ERR_MODULE_NOT_FOUND' && e?.code !== 'MODULE_NOT_FOUND') return false;
  const message = String(e.message ?? '');
  return message.includes(`'${name}'`) || message.includes(`"${name}"`);
}

/**
 * Loads the peers the command needs now (pino and prom-client always, redis and rate-limiter-flexible with
 * REDIS_URL): either all of them, or one line naming what to install.
 * @example const peers = await loadServerPeers({ redis: Boolean(config.redisUrl) });
 * if (!peers.ok) fail(peers.message);
 */
export async function loadServerPeers(
  needs: { redis: boolean },
  load: Loader = (name) => LOADERS[name](),
): Promise<{ ok: true; peers: ServerPeers } | { ok: false; message: string }> {
  const names: PeerName[] = [
    'pino',
    'prom-client',
    ...(needs.redis ? (['redis', 'rate-limiter-flexible'] as const) : []),
  ];
  const loaded = new Map<PeerName, unknown>();
  const missing: PeerName[] = [];
  for (const name of names) {
    try {
      loaded.set(name, await load(name));
    } catch (error) {
      if (!isMissing(error, name)) {
        return {
          ok: false,
          message: `${name} is installed but could not be loaded: ${(error as Error)?.message ?? error}`,
        };
      }
      missing.push(name);
    }
  }
  if (missing.length > 0) {
    const why =
      needs.redis && missing.some((n) => n === 'redis' || n === 'rate-limiter-flexible') ? ' (REDIS_URL is set)' : '';
    return {
      ok: false,
      message: `missing ${missing.join(' and ')}${why}, dependencies of @shop-lookup/relay that the relay command needs: npm install ${missing.map((n) => `${n}@${PEER_RANGES[n]}`).join(' ')}`,
    };
  }
  const pinoModule = loaded.get('pino') as { pino?: Pino; default?: Pino };
  const promModule = loaded.get('prom-client') as PromClient & { default?: PromClient };
  return {
    ok: true,
    peers: {
      pino: (pinoModule.pino ?? pinoModule.default)!,
      prom: promModule.Registry ? promModule : promModule.default!,
    },
  };
}
