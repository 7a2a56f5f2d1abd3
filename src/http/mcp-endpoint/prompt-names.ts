/** An upstream server as prompt names see it: its id and the label its prompt names begin with. */
export interface PromptServer {
  id: string;
  /** `[A-Za-z0-9-]` only, so `<label>__<prompt>` splits at the first `__`. */
  label: string;
}

/** A prompt as an agent names it, resolved: the server that lists it and its own name there. */
export interface PromptTarget<S extends PromptServer> {
  server: S;
  prompt: string;
}

/**
 * The names an agent's session gives the prompts of the upstream servers it reaches. By default
 * a prompt is `<label>__<prompt>`. A release that keeps upstream names (`mcp.toolNames:
 * "upstream"`) keeps a prompt's own name when no other reached server lists a prompt of that name
 * and the name holds no `__` (so it cannot be read as a labelled one); the others keep the labelled
 * form, which is accepted for every prompt either way.
 */
export class PromptNames {
  /** Kept names, as last listed: the id of the server that lists each. */
  private readonly kept = new Map<string, string>();

  constructor(private readonly keep: boolean) {}

  /**
   * The prompts of each server under the names the agent sees, in list order; remembers which
   * server each kept name belongs to (forgetting those of the previous listing).
   */
  name<S extends PromptServer, P extends { name: string }>(
    lists: readonly { r: S; items: readonly P[] }[],
  ): { r: S; item: P; name: string }[] {
    const count = new Map<string, number>();
    for (const { items } of lists)
      for (const x of items) count.set(x.name, (count.get(x.name) ?? 0) + 1);
    this.kept.clear();
    return lists.flatMap(({ r, items }) =>
      items.map((item) => {
        const keep = this.keep && count.get(item.name) === 1 && !item.name.includes('__');
        if (keep) this.kept.set(item.name, r.id);
        return { r, item, name: keep ? item.name : `${r.label}__${item.name}` };
      }),
    );
  }

  /** Whether `name` can only be a kept name (so resolving it needs a listing). */
  isKept(name: string): boolean {
    return this.keep && !name.includes('__');
  }

  /** Whether the last listing kept `name`. */
  knows(name: string): boolean {
    return this.kept.has(name);
  }

  /** The reached server and upstream prompt an agent's prompt name stands for, if any. */
  resolve<S extends PromptServer>(
    name: string,
    servers: readonly S[],
  ): PromptTarget<S> | undefined {
    if (this.isKept(name)) {
      const owner = this.kept.get(name);
      const server = servers.find((x) => x.id === owner);
      return server ? { server, prompt: name } : undefined;
    }
    const cut = name.indexOf('__');
    if (cut <= 0) return undefined;
    const server = servers.find((x) => x.label === name.slice(0, cut));
    return server ? { server, prompt: name.slice(cut + 2) } : undefined;
  }

  /** The label part of a labelled name ('' for a kept or unlabelled one), for refusal records. */
  labelOf(name: string): string {
    const cut = name.indexOf('__');
    return cut > 0 ? name.slice(0, cut) : '';
  }
}
