// The options of createShopApiProxy, checked with zod when the proxy is created (see door/serverOptions.ts): they
// are the door's own, every one with its entry (the compiler checks).
import * as z from 'zod';
import { checkOptions, serverOptionShape } from './door/serverOptions';
import type { ShopApiProxyOptions } from './proxyTypes';

const proxySchema = z.strictObject(serverOptionShape satisfies Record<keyof ShopApiProxyOptions, z.ZodType>);

/** @example const checked = checkProxyOptions(options); */
export function checkProxyOptions(options: ShopApiProxyOptions): ShopApiProxyOptions {
  return checkOptions(proxySchema, options, 'createShopApiProxy');
}
