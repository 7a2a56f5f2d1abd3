/** The events Gatehouse emits (DESIGN §7), written to the outbox with the change that causes them. */
export const EventType = {
  ToolInvocationRequested: 'ToolInvocationRequested',
  ToolInvocationDenied: 'ToolInvocationDenied',
  ApprovalRequested: 'ApprovalRequested',
  ApprovalDecided: 'ApprovalDecided',
  ToolInvocationCompleted: 'ToolInvocationCompleted',
  ToolEffectUncertain: 'ToolEffectUncertain',
  ToolEffectResolved: 'ToolEffectResolved',
  DescriptorActivated: 'DescriptorActivated',
  DescriptorRetired: 'DescriptorRetired',
  McpServerStateChanged: 'McpServerStateChanged',
  McpToolUnbound: 'McpToolUnbound',
} as const;
export type EventType = (typeof EventType)[keyof typeof EventType];

/** One event bound for the outbox. */
export interface OutboxEvent {
  type: EventType;
  tenant: string;
  /** What the event is about, e.g. `invocation/<id>` or `tool/<id>@<version>`. */
  subject: string;
  /** ISO 8601 time of the change. */
  at: string;
  data: Record<string, unknown>;
  /**
   * The principal whose call the event is about (an invocation's, an approval's requester);
   * absent for the tenant's own events (descriptors, MCP servers). An agent's stream carries only
   * the events it owns.
   */
  owner?: string;
}

/**
 * An audit record before it has its place in the tenant's log. The log adds `index` and `tenant`
 * and stores the JCS bytes of the whole as a Merkle leaf.
 */
export interface AuditRecordDraft {
  tenant: string;
  /** What happened, dotted: `invocation.completed`, `descriptor.activated`, `policy.replaced`. */
  type: string;
  subject: string;
  /** ISO 8601 time. */
  at: string;
  /** Who caused it: a principal id, or `system`. */
  actor: string;
  data: Record<string, unknown>;
}

/** An audit record as stored: the draft plus its position in the tenant's log. */
export interface AuditRecord extends AuditRecordDraft {
  index: number;
}

/** Where an audit record landed: its index and the size of the tree that first held it. */
export interface AuditPosition {
  index: number;
  treeSize: number;
}

/** What any state change writes in the same transaction: its audit records and its events. */
export interface LedgerEntries {
  audit: AuditRecordDraft[];
  events: OutboxEvent[];
}

/** An event as stored in the outbox, with its position: the id of the event stream. */
export interface StoredEvent extends OutboxEvent {
  seq: number;
}

/** Reads the outbox in order, and says when new events may have been committed. */
export interface OutboxFeed {
  /** Up to `limit` events of a tenant after position `seq`, in order. */
  after(tenant: string, seq: number, limit: number): Promise<StoredEvent[]>;
  /** The position of the tenant's latest event, or 0. */
  latest(tenant: string): Promise<number>;
  /**
   * Up to `limit` events of every tenant after position `seq`, in order: one read serves all the
   * event-stream clients of a node, whatever their tenant.
   */
  since(seq: number, limit: number): Promise<StoredEvent[]>;
  /** The position of the latest event of any tenant, or 0. */
  head(): Promise<number>;
  /** Calls `listener` after each commit that may have added events; returns the unsubscribe. */
  subscribe(listener: () => void): () => void;
}
