import { IllegalStateError } from './errors.js';

/** The legal moves of a lifecycle: for each state, the states it may move to. */
export type Transitions<S extends string> = Readonly<Record<S, readonly S[]>>;

/**
 * `to`, when `moves` allows moving from `from` to it: the one check every lifecycle move makes
 * (of a component's state, and of a stored record's). `T` is narrower than `S` when a record
 * starts in a state it never returns to (an invocation's `new`).
 * @throws IllegalStateError `<what> cannot move from <from> to <to>` when the table does not.
 */
export function transition<S extends string, T extends S = S>(
  what: string,
  moves: Readonly<Record<S, readonly T[]>>,
  from: S,
  to: T,
): T {
  if (!moves[from].includes(to)) {
    throw new IllegalStateError(`${what} cannot move from ${from} to ${to}`);
  }
  return to;
}

/**
 * The state of one long-lived component (a service, a server, a pool): a string union, the table
 * of its legal moves, and the one place that changes it. A move the table does not list is a bug
 * in our code, so {@link to} throws rather than returning a refusal.
 */
export class Lifecycle<S extends string> {
  private state: S;

  /**
   * @param what names the component in errors, e.g. `the gateway`.
   * @param moves the legal moves.
   * @param initial the state it starts in.
   */
  constructor(
    private readonly what: string,
    private readonly moves: Transitions<S>,
    initial: S,
  ) {
    this.state = initial;
  }

  /** The state now. */
  get current(): S {
    return this.state;
  }

  /** True when the state now is one of `states`. */
  is(...states: S[]): boolean {
    return states.includes(this.state);
  }

  /**
   * Moves to `next`.
   * @throws IllegalStateError when the table has no move from the state now to `next`.
   */
  to(next: S): void {
    this.state = transition(this.what, this.moves, this.state, next);
  }
}

/**
 * The lifecycle of a resource (a server, a service, a pool, a database): `created` (made, not
 * started yet; only for those with a separate start), `open` (serving), `closing` (from the first
 * `close()` on: refusing new work while it shuts down), `closed` (its shutdown finished, or
 * failed).
 */
export type ResourceState = 'created' | 'open' | 'closing' | 'closed';

const RESOURCE_MOVES: Transitions<ResourceState> = {
  created: ['open', 'closing'],
  open: ['closing'],
  closing: ['closed'],
  closed: [],
};

/**
 * A resource's {@link ResourceState}, and its shutdown run once, so the resource's `close()` is
 * safe to call twice.
 */
export class ResourceLifecycle extends Lifecycle<ResourceState> {
  private closed: Promise<void> | undefined;

  /**
   * @param what names the resource in errors, e.g. `the egress proxy`.
   * @param initial `open` (default) for a resource that serves once made; `created` for one that
   *   waits for its start.
   */
  constructor(what: string, initial: 'created' | 'open' = 'open') {
    super(what, RESOURCE_MOVES, initial);
  }

  /** True while it serves: started (or open from the start) and not closed. */
  get isOpen(): boolean {
    return this.is('open');
  }

  /** True from the first `close()` on. */
  get isClosing(): boolean {
    return this.is('closing', 'closed');
  }

  /**
   * Moves to `closing` at once, runs `shutdown` (at once, up to its first `await`), then moves to
   * `closed` (also when `shutdown` fails). Safe to call twice: a later call returns the first call's promise, and its `shutdown`
   * is not run.
   * @throws (rejects with) what `shutdown` throws.
   */
  close(shutdown: () => Promise<void> | void): Promise<void> {
    if (this.closed === undefined) {
      this.to('closing');
      // An async wrapper, so a shutdown that throws at once rejects like one that fails later.
      this.closed = (async () => shutdown())().finally(() => this.to('closed'));
    }
    return this.closed;
  }
}
