// The reload of a relay process (SIGHUP, and SHOPS_FILE changed): TILL_TOKENS_FILE or SHOPS_FILE read again, every
// secret given as `<NAME>_FILE` applied (a new key, secret or REDIS_URL by a new relay or hub, the old one closed),
// then the feed requests of revoked tokens ended with 401. One reload at a time; a file that does not read, or a
// store that does not open, keeps what was there.
import type { RelayLogger } from './relayLogger';
import { changedSecrets, type RelayServerConfig } from './relayServerConfig';
import type { RelayVariableName } from './relayVariables';
import type { ServerAccess } from './serverAccess';
import { readShops, readTillTokens, type ServerState } from './serverState';
import type { ServerUpstream } from './serverUpstream';
import type { ShopsFileEntry } from './shopsFile';

export interface ReloadDeps {
  /** The configuration the process started with: the files it names are the ones read again. */
  start: RelayServerConfig;
  readFile: (path: string) => string;
  access: ServerAccess;
  upstream: ServerUpstream;
  log: RelayLogger;
}

/** The secrets a new relay (or hub) is made for when a reload changed them: the others apply to the next request. */
const UPSTREAM_SECRETS: readonly RelayVariableName[] = ['SHOP_API_KEY', 'SHOP_API_SECRET', 'REDIS_URL'];

/**
 * @example const reload = reloadServer(state, deps); process.on('SIGHUP', () => void reload(readConfigAgain()));
 */
export function reloadServer(
  state: ServerState,
  deps: ReloadDeps,
): (fresh: RelayServerConfig | undefined) => Promise<void> {
  const { start, readFile, access, upstream, log } = deps;

  /** TILL_TOKENS_FILE read again: the new list applies to the next request; a bad file keeps the old one. */
  function reloadTills(): void {
    try {
      state.tills = readTillTokens(start, readFile);
      state.secrets.keep(...state.tills.map((e) => e.token));
      access.remake();
      log.info({ tills: state.tills.length }, 'till tokens reloaded');
    } catch (error) {
      log.error({ error: (error as Error).message }, 'till tokens not reloaded: the old list stays');
    }
  }

  /** SHOPS_FILE read again: a shop removed or rotated is closed now, the next request makes it as the file says. */
  function reloadShops(): void {
    let fresh: Map<string, ShopsFileEntry>;
    try {
      fresh = readShops(start.shopsFile!, readFile);
    } catch (error) {
      log.error({ error: (error as Error).message }, 'shops not reloaded: the old list stays');
      return;
    }
    const before = state.shops;
    state.shops = fresh;
    access.hub!.replaceShops(fresh);
    state.secrets.keepShops(fresh);
    const changed = [...before].filter(([id, old]) => {
      const now = fresh.get(id);
      return !now || now.key !== old.key || now.secret !== old.secret || now.target !== old.target;
    });
    for (const [id] of changed) void state.hub!.forget(id);
    const added = [...fresh.keys()].filter((id) => !before.has(id));
    for (const id of added) void state.hub!.forget(id); // an unknown shop's cached "no such shop" is dropped
    log.info({ shops: fresh.size, changed: changed.map(([id]) => id), added }, 'shops reloaded');
  }

  /**
   * A new relay (or hub) on the new key, secret or Redis URL, serving from the moment its store is open; then the old
   * one is closed (its parked long-polls answered: their tills ask again, of the new one). False: it did not open.
   */
  async function replaceUpstream(c: RelayServerConfig): Promise<boolean> {
    if (state.hub) {
      const old = state.hub;
      state.hub = upstream.makeHub(c);
      state.storeError = null; // the new hub tells its own store's health
      await old.close();
      return true;
    }
    const next = upstream.makeRelay(c);
    try {
      await next.ready;
    } catch (error) {
      await next.close();
      log.error(
        { error: (error as Error)?.message ?? String(error) },
        'the relay could not open its store with the new REDIS_URL: the old relay stays',
      );
      return false;
    }
    const old = state.relay!;
    state.relay = next;
    state.storeError = null; // its store just opened
    await old.close();
    return true;
  }

  async function reloadSecrets(fresh: RelayServerConfig): Promise<void> {
    state.secrets.keepConfigured(fresh);
    const current = state.config;
    const changed = changedSecrets(current, fresh);
    if (changed.length === 0) return;
    let next = fresh;
    let applied = changed;
    if (changed.some((name) => UPSTREAM_SECRETS.includes(name)) && !(await replaceUpstream(fresh))) {
      next = { ...fresh, key: current.key, secret: current.secret, redisUrl: current.redisUrl };
      applied = changed.filter((name) => !UPSTREAM_SECRETS.includes(name));
    }
    state.config = next;
    if (applied.includes('TILL_TOKEN_SECRET') || applied.includes('OPS_TOKEN')) access.remake();
    if (applied.length > 0) log.info({ changed: applied }, 'secrets reloaded');
  }

  /** Ends the parked long-polls (and other feed requests) of tokens the reload revoked: 401 now, not data later. */
  async function endRevoked(): Promise<void> {
    // a new access: nothing the last one worked out for a request under way is kept (a token removed, signed with a
    // rotated secret, or expired meanwhile is checked again)
    access.remake();
    const ended = await (state.hub ?? state.relay)?.reauthorize().catch(() => 0);
    if (ended) log.info({ ended }, 'long-polls of revoked tokens ended');
  }

  async function reloadNow(fresh: RelayServerConfig | undefined): Promise<void> {
    if (state.hubMode) reloadShops();
    else if (start.tillTokensFile) reloadTills();
    if (fresh) await reloadSecrets(fresh);
    await endRevoked();
  }

  return (fresh) => {
    // one reload at a time: a second SIGHUP waits for the first
    state.reloading = state.reloading
      .then(() => reloadNow(fresh))
      .catch((error: unknown) => log.error({ err: error }, 'reload failed'));
    return state.reloading;
  };
}
