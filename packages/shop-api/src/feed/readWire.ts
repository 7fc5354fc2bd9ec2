// Reading a message of the feed protocol with its schema: the message as its type, or what does not fit in one
// sentence naming the field: the relay's 400 to a body it refuses (`uses[3].at must be epoch milliseconds (a whole
// number), got -5`), the engine's `bad_response` to an answer it cannot use. The value is named by its kind or its
// first 40 characters, never written back whole.
import * as z from 'zod/mini';
import { describe } from '../records/fieldReaders';
import { pathText } from '../records/pathText';

/** The first issue of a failed parse in words: the field, what it must be, what it was. */
function wireIssue(error: z.core.$ZodError, whole: string): string {
  const issue = error.issues[0];
  if (!issue) return `${whole} is not as the feed protocol says`;
  const where = issue.path.length === 0 ? whole : pathText(issue.path);
  // our own words (`must be …`) read on from the field and say what came; zod's own say it themselves
  if (!issue.message.startsWith('must')) return `${where}: ${issue.message}`;
  const input = (issue as { input?: unknown }).input;
  const got =
    issue.code === 'too_big' && Array.isArray(input)
      ? `, got ${input.length}`
      : issue.code === 'custom'
        ? ''
        : `, got ${describe(input)}`;
  return `${where} ${issue.message}${got}`;
}

/**
 * `value` read with `schema`: `{ ok: true, value }` (defaults filled in, unknown fields left out), or why not in words
 * (`whole` names the message itself, for an issue about it as a whole).
 * @example readWire(usesPostSchema, JSON.parse(text), 'the body') // { ok: false, why: 'uses[1].at must be epoch
 * milliseconds (a whole number), got -5' }
 */
export function readWire<S extends z.ZodMiniType>(
  schema: S,
  value: unknown,
  whole: string,
): { ok: true; value: z.output<S> } | { ok: false; why: string } {
  const read = z.safeParse(schema, value, { reportInput: true });
  return read.success ? { ok: true, value: read.data } : { ok: false, why: wireIssue(read.error, whole) };
}
