/** One partition's replica assignment as the controller last wrote it (etcd partitions/<topic>/<p>). */
export interface PartitionRole {
  readonly topic: string;
  readonly partition: number;
  readonly leaderId: number; // -1: offline (no live in-sync replica)
  readonly leaderEpoch: number;
  readonly replicas: readonly number[];
  readonly isr: readonly number[];
}

export interface BrokerEndpoint {
  readonly id: number;
  readonly host: string;
  readonly port: number; // the native listener
}

/** What the replica side offers the metadata side (ReplicaManager implements it). */
export interface ReplicaControl {
  /** Become leader (role.leaderId === self) or follower of the partition, for role.leaderEpoch. Idempotent for the same epoch. */
  applyRole(role: PartitionRole): Promise<void>;
  /** The partition is no longer hosted here (deleted or reassigned away). */
  dropPartition(topic: string, partition: number): Promise<void>;
  /**
   * Partitions with data in this broker's local logs (internal topics aside), so that at start a
   * replica moved off it while it was down can be found and dropped.
   */
  localPartitions?(): Array<{ topic: string; partition: number }>;
  /** The broker's lease deadline passed: stop acknowledging anything as leader at once, everywhere. */
  fence(): void;
  /**
   * The lease is renewed after a fence: leading is allowed again. The metadata side then applies
   * every role again, the same epochs included (a leader stopped by the fence leads them again).
   */
  unfence?(): void;
  close(): Promise<void>;
}

/** What the metadata side offers the replica side (ClusterNode implements it). */
export interface ClusterView {
  readonly brokerId: number;
  endpoint(brokerId: number): BrokerEndpoint | undefined;
  /**
   * Whether the broker's lease deadline is still ahead; once it has passed, the broker fences
   * itself (ReplicaControl.fence) before this returns false. Asked on every produce and replica
   * fetch, so that nothing is acknowledged past the deadline before its timer fires.
   */
  leaseHeld(): boolean;
  /** CAS the ISR of (topic, partition) in etcd, guarded by leaderEpoch; false when the epoch moved (then step down). */
  proposeIsr(topic: string, partition: number, leaderEpoch: number, isr: readonly number[]): Promise<boolean>;
  /** Whether the broker is in a controlled shutdown (it is not to join an ISR again). */
  leaving?(brokerId: number): boolean;
}
