export interface WebDriverSession {
  id: string;
  inWindow<T>(window: string | null, fn: () => Promise<T>): Promise<T>;
  send(method: string, path: string, body?: unknown): Promise<unknown>;
  currentWindow(): Promise<string>;
  newWindow(): Promise<string>;
  setTimeouts(timeouts: { script?: number; pageLoad?: number; implicit?: number }): Promise<unknown>;
  setWindowRect(rect: { width?: number; height?: number; x?: number; y?: number }): Promise<unknown>;
  navigate(url: string): Promise<unknown>;
  refresh(): Promise<unknown>;
  execute<T = unknown>(source: string, arg?: unknown): Promise<T>;
  screenshot(): Promise<Buffer>;
  closeWindow(): Promise<unknown>;
  close(): Promise<void>;
}
export declare function newSession(serverUrl: string, capabilities: Record<string, unknown>): Promise<WebDriverSession>;
export declare function waitForDriver(serverUrl: string, timeoutMs?: number): Promise<void>;
