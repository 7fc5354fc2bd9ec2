// Why the relay command could not start, in one line naming what to change (the command exits 2 for `config`, else 1).

/** Why the server could not start, in one line naming what to change. */
export class RelayStartError extends Error {
  constructor(
    readonly code: 'config' | 'port_in_use' | 'listen_failed' | 'store_unreachable' | 'start_failed',
    message: string,
  ) {
    super(message);
    this.name = 'RelayStartError';
  }
}
