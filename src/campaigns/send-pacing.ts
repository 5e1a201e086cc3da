// The pace of an account's parts (its SMS parts per second, from the limits room): a paced send's messages are
// queued one after the other, each due when the parts before it have had their slots, so the account's parts
// leave at most that fast. Nothing is refused for it: a large campaign just takes longer to leave.

/**
 * The due time of each message of a paced send, as milliseconds after its first part's slot (message `i` waits
 * for the parts of messages 0 to i-1, at `partsPerSecond`), and the send's parts in all.
 */
export function pacedOffsets(
  parts: ArrayLike<number>,
  partsPerSecond: number,
): { offsets: Float64Array; parts: number } {
  const offsets = new Float64Array(parts.length);
  let before = 0;
  for (let i = 0; i < parts.length; i++) {
    offsets[i] = Math.floor((before * 1000) / partsPerSecond);
    before += parts[i];
  }
  return { offsets, parts: before };
}
