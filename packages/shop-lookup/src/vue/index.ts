// shop-lookup/vue: the lookups as Vue 3 composables (Vue 3.3 or later; `vue` is an optional peer dependency).
export { useLookup } from './useLookup';
export type { LookupState } from './useLookup';
export { useSyncStatus } from './useSyncStatus';
