// "The network goes", the same on every engine: the browsers reach the demo server only through this TCP proxy on
// 127.0.0.1, which can drop every open connection and refuse new ones until restored. No engine is told (no
// offline event: navigator.onLine stays true); pages and engines find out as a till does when its network dies:
// their requests fail. Chromium could emulate offline itself, WebKit's WebDriver cannot: one way for all.
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

export interface NetworkCut {
  /** The proxy's port: open the demo at http://127.0.0.1:<port>. */
  port: number;
  readonly isCut: boolean;
  /** Drops every open connection (answers never come) and refuses new ones. */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

/** @example const net = await startNetworkCut(5173); page.goto(`http://127.0.0.1:${net.port}`); net.cut(); */
export async function startNetworkCut(targetPort: number): Promise<NetworkCut> {
  const open = new Set<Socket>();
  let isCut = false;
  const track = (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = createServer((client) => {
    if (isCut) {
      client.resetAndDestroy();
      return;
    }
    const upstream = connect(targetPort, '127.0.0.1');
    track(client);
    track(upstream);
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    get isCut() {
      return isCut;
    },
    cut() {
      isCut = true;
      for (const socket of open) socket.resetAndDestroy();
    },
    restore() {
      isCut = false;
    },
    close() {
      for (const socket of open) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
