import type { WebDriverSession } from './webdriver.mjs';

export declare const WEBKIT_DRIVER_PATH: string;
export declare const MINIBROWSER_PATH: string;
export declare const PROFILE_SHELL_PATH: string;
export interface WebKitDriver {
  url: string;
  newSession(options?: { storageLimitBytes?: number }): Promise<WebDriverSession>;
  stderr(): string;
  close(): Promise<void>;
}
export declare function startWebKitDriver(): Promise<WebKitDriver>;
