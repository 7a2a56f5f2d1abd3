/** One connection attempt through a lease's egress proxy, allowed or refused. */
export interface EgressDecision {
  /** ISO 8601 time the request arrived. */
  at: string;
  /** `CONNECT` for a tunnel, else the plain-HTTP method; empty when the request could not be parsed. */
  method: string;
  /** The target host as the client named it (lower case, no trailing dot); empty when malformed. */
  host: string;
  /** The target port; 0 when malformed. */
  port: number;
  allowed: boolean;
  /** Why, written for a person: the entry that allowed it, or what to change to allow it. */
  reason: string;
  /** The IP address actually connected to, when a connection was made. */
  address?: string;
  /**
   * True for a connection a browser or desktop kept between an attempt's calls tried while no
   * call ran (refused; on the record of the attempt's next call of that tool).
   */
  betweenCalls?: boolean;
}
