// A feed answer's JSON with its records written in: each record's JSON as the store keeps it when it has it (a shop
// served from Redis: its stored text is sent as is, not parsed and serialised again, about half of the time of a
// cold shop's snapshot chunk), else serialised from the copy in memory.
import type { FeedAnswer } from '@shop-lookup/shop-api';
import type { FeedRecord } from '../store/relayStore';

/**
 * The JSON of `body` (whose `upserts` is an empty array) with `upserts` holding `records`, in order.
 * @example feedRecordsJson({ version: 3, upserts: [] }, chunk.records) //
 * '{"version":3,"upserts":[{"resource":"coupons",…}]}'
 */
export function feedRecordsJson(body: FeedAnswer, records: readonly FeedRecord[]): string {
  const text = JSON.stringify(body);
  // (a `"` inside a string value is escaped: this key with its empty array occurs once, where `upserts` is)
  const at = text.indexOf('"upserts":[]');
  if (at < 0) throw new TypeError('feedRecordsJson: the body must hold `upserts: []`');
  const items = records.map(
    (r) =>
      `{"resource":${JSON.stringify(r.resource)},"key":${JSON.stringify(r.key)},"record":${r.json ?? JSON.stringify(r.record)}}`,
  );
  return `${text.slice(0, at)}"upserts":[${items.join(',')}]${text.slice(at + '"upserts":[]'.length)}`;
}
