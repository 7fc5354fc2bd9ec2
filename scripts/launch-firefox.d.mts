import type { Browser } from 'puppeteer-core';

export declare const FIREFOX_PATH: string;
export declare function launchFirefox(options?: { storageLimitBytes?: number }): Promise<Browser>;
