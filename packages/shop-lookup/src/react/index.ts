// shop-lookup/react: the lookups as React hooks (React 18 or later; `react` is an optional peer dependency).
export { useLookup } from './useLookup';
export type { LookupState } from './useLookup';
export { useSuspenseLookup } from './useSuspenseLookup';
export { useSyncStatus } from './useSyncStatus';
