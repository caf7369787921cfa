/**
 * Where cluster metadata lives in etcd, under `/conch/<clusterId>/` (docs/cluster.md):
 *
 *   brokers/<id>             the broker's endpoints, under its lease
 *   controller               the controller's broker id, under its lease; create_revision = epoch
 *   topics/<name>            topic id, partitions, replication factor, configs, assignment
 *   partitions/<name>/<p>    leader, leader epoch, replicas, ISR, controller epoch
 */

export class MetadataKeys {
  readonly root: string;
  readonly brokers: string;
  readonly controller: string;
  readonly topics: string;
  readonly partitions: string;

  constructor(clusterId: string) {
    this.root = `/conch/${clusterId}/`;
    this.brokers = `${this.root}brokers/`;
    this.controller = `${this.root}controller`;
    this.topics = `${this.root}topics/`;
    this.partitions = `${this.root}partitions/`;
  }

  broker(id: number): string {
    return `${this.brokers}${id}`;
  }

  topic(name: string): string {
    return `${this.topics}${name}`;
  }

  partitionsOf(topic: string): string {
    return `${this.partitions}${topic}/`;
  }

  partition(topic: string, partition: number): string {
    return `${this.partitions}${topic}/${partition}`;
  }
}
