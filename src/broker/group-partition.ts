/**
 * Which partition of `__consumer_offsets` holds a group, and so which broker coordinates it in
 * cluster mode (the partition's leader). Kafka's rule, `Utils.abs(groupId.hashCode) % partitions`
 * with Java's String.hashCode, so that Kafka tooling that computes a group's partition agrees.
 */

/** Java's String.hashCode: 31-based over the UTF-16 code units, in 32-bit two's complement. */
export function javaStringHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}

/** The offsets partition of `group` among `partitions` (Kafka's Utils.abs maps MIN_VALUE to 0). */
export function groupPartition(group: string, partitions: number): number {
  const h = javaStringHash(group);
  return (h === -0x80000000 ? 0 : Math.abs(h)) % partitions;
}
