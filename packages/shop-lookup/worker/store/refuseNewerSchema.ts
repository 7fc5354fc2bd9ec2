// An older release never opens a database a newer release wrote. Dexie, asked for version N of a database that is
// at a later version, opens it at that later version instead (and may even add back what the newer schema dropped):
// the older code would then write rows the newer one cannot find. Dexie asks for the database without a version
// only then, so that request is refused here, with both versions in words.
import { ShopLookupError } from '../../src/protocol';

/** The refusal, naming the versions (Dexie's version numbers; IndexedDB's are ten times them). */
function newerSchemaError(installed: number | null, supported: number): ShopLookupError {
  const which = installed === null ? 'a newer version' : `schema version ${installed}`;
  return new ShopLookupError(
    'storage_upgraded',
    `The local database was written by a newer shop-lookup (${which}); this page runs an older one (schema version ${supported}), which must not write to it. ` +
      'Reload the page to run the newer shop-lookup; until then this page keeps its data in memory only.',
  );
}

/** A request that fails as IndexedDB's do: its error set, then `onerror` called with an event. */
function failedRequest(): { request: IDBOpenDBRequest; fail(error: unknown): void } {
  const request = {
    result: undefined,
    error: null,
    readyState: 'pending',
    transaction: null,
    source: null,
  } as unknown as IDBOpenDBRequest & { error: unknown };
  const fail = (error: unknown) => {
    Object.assign(request, { error, readyState: 'done' });
    const event = { type: 'error', target: request, preventDefault() {}, stopPropagation() {} } as unknown as Event;
    request.onerror?.call(request, event);
  };
  return { request, fail };
}

/**
 * `factory`, except that opening a database without a version (what Dexie does after VersionError: the database is
 * newer than `supported`) fails with `storage_upgraded`.
 * @example new Dexie(name, { indexedDB: refuseNewerSchema(indexedDB, 5) })
 */
export function refuseNewerSchema(factory: IDBFactory, supported: number): IDBFactory {
  return {
    open(name: string, version?: number) {
      if (version !== undefined) return factory.open(name, version);
      const { request, fail } = failedRequest();
      // the installed version, for the message: an open without a version changes nothing
      const peek = factory.open(name);
      peek.onsuccess = () => {
        const installed = peek.result.version / 10;
        peek.result.close();
        fail(newerSchemaError(installed, supported));
      };
      peek.onerror = () => fail(newerSchemaError(null, supported));
      return request;
    },
    deleteDatabase: (name: string) => factory.deleteDatabase(name),
    cmp: (a: unknown, b: unknown) => factory.cmp(a, b),
    databases: () => factory.databases(),
  };
}
