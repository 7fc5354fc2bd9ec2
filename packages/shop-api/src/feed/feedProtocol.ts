// The feed protocol's messages, types only: what the relay (packages/relay) answers and what the engine
// (packages/shop-lookup/worker/sync/relay) sends and reads. Each is inferred from its zod schema, beside it in this
// folder (one file per family), so a change to the wire fails to compile on both sides; docs/feed-protocol.md says
// how they behave.
export type { DiscoveryAnswer } from './discoveryAnswer';
export type {
  FeedAnswer,
  FeedDelete,
  FeedEnvelope,
  FeedRecord,
  RecordedUse,
  RelayState,
  UsesRecord,
} from './feedAnswer';
export type { ErrorAnswer, RefusalMark, RelayErrorCode } from './errorAnswer';
export type { OpsDrop, OpsDropAnswer, OpsUsesAnswer } from './opsUses';
export type { ProductsAnswer, ProductsPost } from './trackedProducts';
export type {
  ReleaseResult,
  ReleaseSent,
  UseConflict,
  UseResult,
  UsesAnswer,
  UseSent,
  UsesPost,
  UsesPostRead,
} from './usesPost';
