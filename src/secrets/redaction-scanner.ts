import { IllegalStateError } from '../core/index.js';
import {
  BASE64_PAD,
  BASE64_UNIT,
  BASE64_UNIT_MAX,
  ENCODED_LINE_BREAK,
  RemovalEncoding,
  redactionMarker,
} from './redaction.js';
import type { RedactionRule, RemovalTally } from './redaction.js';

/** One secret found in a text, by position. */
interface Hit {
  start: number;
  end: number;
  rule: RedactionRule;
  /** The rule's kind, or the brokered kind when a pattern's match holds a brokered value. */
  kind: string;
  encoding: RemovalEncoding | undefined;
}

/** What one pass over a text found. */
interface Scan {
  /** Non-overlapping hits, leftmost first, as one pass over the whole text would find them. */
  hits: Hit[];
  /**
   * Streaming only: where a match begins that more text could still change (it runs into the end
   * of the text); nothing from here on is decided. `text.length` when there is none.
   */
  openAt: number;
}

/** A base64 character (any alphabet, as written) and the line break after it, ending a text. */
const UNIT_BEFORE = new RegExp(`${BASE64_UNIT}${ENCODED_LINE_BREAK}?$`);
/** A line break and a base64 character (group 1) or padding, from `lastIndex` on. */
const UNIT_AFTER = new RegExp(`${ENCODED_LINE_BREAK}?(?:(${BASE64_UNIT})|${BASE64_PAD})`, 'y');

/**
 * Finds every rule's matches in one pass: the rules' sources joined into one RegExp, so a text is
 * read once whatever the number of values and patterns. At one position the first rule in the list
 * wins, so brokered forms come first, longest first.
 */
export class RedactionScanner {
  readonly #rules: readonly RedactionRule[];
  readonly #combined: RegExp | undefined;
  readonly #sticky: readonly RegExp[];
  /** The brokered rules alone, to name the value inside a pattern's match. */
  readonly #brokered: RegExp | undefined;
  readonly #brokeredRules: readonly RedactionRule[];
  /**
   * How many characters at the end of an unfinished stream may still be the start of a match
   * that is not complete: the longest short rule (or long rule's prefix), plus what decides its end.
   */
  readonly holdBack: number;
  /**
   * How many characters before a match a hit may take in (a base64 fragment's quanta, each
   * character as written, with a line break).
   */
  readonly reachBack: number;

  /**
   * With `foldCase`, every rule matches in any letter case: for channels that fold case (host
   * names are lower-cased by the egress proxy), where a value's case-changed form must still go.
   * @throws IllegalStateError when a rule's source has a capturing group or matches nothing.
   */
  constructor(rules: readonly RedactionRule[], foldCase = false) {
    const flags = foldCase ? 'i' : '';
    for (const rule of rules) checkRule(rule);
    this.#rules = rules;
    this.#combined = join(rules, `g${flags}`);
    this.#sticky = rules.map((r) => stickyOf(r, flags));
    this.#brokeredRules = rules.filter((r) => r.encoding !== undefined);
    this.#brokered = join(this.#brokeredRules, flags);
    this.holdBack = Math.max(0, ...rules.map((r) => (r.window ?? r.maxLength) + r.lookahead));
    this.reachBack = Math.max(0, ...rules.map((r) => (r.edges?.before ?? 0) * BASE64_UNIT_MAX));
  }

  /**
   * Finds the hits in `text` from `from` on (characters before `from` are context for
   * look-behinds only). With `streaming`, stops at the first match that runs into the end of the
   * text and reports its start as `openAt`.
   */
  scan(text: string, from: number, streaming: boolean): Scan {
    const hits: Hit[] = [];
    const re = this.#combined;
    if (!re) return { hits, openAt: text.length };
    re.lastIndex = from;
    let floor = from;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      const found = this.#settle(text, m, streaming);
      if (found === 'open') return { hits, openAt: m.index };
      if (found === undefined) {
        re.lastIndex = m.index + 1;
        continue;
      }
      const { rule } = found;
      const { start, end } = quanta(text, m.index, m.index + found.length, floor, rule.edges);
      if (streaming && isOpen(rule, start, end, text.length)) return { hits, openAt: start };
      hits.push({ start, end, rule, ...this.#name(rule, text.slice(start, end)) });
      floor = end;
      re.lastIndex = end;
    }
    return { hits, openAt: text.length };
  }

  /**
   * Rewrites `text` from `from` up to `to` with the given hits (all inside that range) replaced by
   * markers, noting each in `tally`.
   */
  rewrite(
    text: string,
    from: number,
    to: number,
    hits: readonly Hit[],
    tally: RemovalTally,
  ): string {
    let out = '';
    let pos = from;
    for (const hit of hits) {
      const matched = text.slice(hit.start, hit.end);
      const kept = hit.rule.keep?.(matched) ?? { prefix: '', suffix: '' };
      out += text.slice(pos, hit.start) + kept.prefix + redactionMarker(hit.kind) + kept.suffix;
      tally.add(hit.kind, hit.encoding);
      pos = hit.end;
    }
    return out + text.slice(pos, to);
  }

  /**
   * Decides the combined RegExp's match: the rule that made it and its length, or the next rule
   * that matches at the same position when `accept` turns it down; undefined when none does;
   * 'open' when a streamed candidate reaches the end of the text and could still change.
   */
  #settle(
    text: string,
    m: RegExpExecArray,
    streaming: boolean,
  ): { rule: RedactionRule; length: number } | 'open' | undefined {
    let index = m.findIndex((g, i) => i > 0 && g !== undefined) - 1;
    let matched = m[0];
    for (;;) {
      const rule = this.#rules[index];
      if (!rule) return undefined;
      if (streaming && isOpen(rule, m.index, m.index + matched.length, text.length)) return 'open';
      if (!rule.accept || rule.accept(matched)) return { rule, length: matched.length };
      matched = '';
      for (index += 1; index < this.#rules.length; index += 1) {
        const sticky = this.#sticky[index]!;
        sticky.lastIndex = m.index;
        const next = sticky.exec(text);
        if (next) {
          matched = next[0];
          break;
        }
      }
    }
  }

  /** The kind and encoding to record: a pattern's match that holds a brokered value is named by it. */
  #name(rule: RedactionRule, matched: string): Pick<Hit, 'kind' | 'encoding'> {
    if (rule.encoding !== undefined) {
      return {
        kind: rule.kind,
        encoding: rule.plain === matched ? RemovalEncoding.plain : rule.encoding,
      };
    }
    const inner = this.#brokered?.exec(matched);
    if (!inner) return { kind: rule.kind, encoding: undefined };
    const brokered = this.#brokeredRules[inner.findIndex((g, i) => i > 0 && g !== undefined) - 1]!;
    return this.#name(brokered, inner[0]);
  }
}

/**
 * A base64 fragment's match widened to the whole quanta that hold the value: up to `edges.before`
 * base64 characters before it (never before `floor`, the end of the previous hit) and up to
 * `edges.after` after it, padding included, each as written (escaped or percent-encoded) and
 * across the line breaks of wrapped base64. A match without edges is kept as it is.
 */
function quanta(
  text: string,
  matchStart: number,
  matchEnd: number,
  floor: number,
  edges: RedactionRule['edges'],
): { start: number; end: number } {
  let start = matchStart;
  let end = matchEnd;
  if (!edges) return { start, end };
  for (let n = 0; n < edges.before && start > floor; n += 1) {
    const unit = UNIT_BEFORE.exec(text.slice(Math.max(floor, start - BASE64_UNIT_MAX), start));
    if (!unit) break;
    start -= unit[0].length;
  }
  // Padding ends a base64 text: after the first `=`, only `=` may follow.
  let padded = false;
  for (let n = 0; n < edges.after && end < text.length; n += 1) {
    UNIT_AFTER.lastIndex = end;
    const unit = UNIT_AFTER.exec(text);
    if (!unit || (padded && unit[1] !== undefined)) break;
    padded = unit[1] === undefined;
    end = UNIT_AFTER.lastIndex;
  }
  return { start, end };
}

/** Whether a match may still grow or vanish when more text arrives. */
function isOpen(rule: RedactionRule, start: number, end: number, length: number): boolean {
  return end + rule.lookahead > length && end - start < rule.maxLength;
}

/**
 * Rules checked already. The known patterns are the same objects in every call's scanner, so each
 * is checked (two RegExp compilations) once per process, not once per call; a call's brokered
 * rules are its own objects, checked with it and forgotten with it.
 */
const checked = new WeakSet<RedactionRule>();

/** @throws IllegalStateError when the rule's source has a capturing group or matches ''. */
function checkRule(rule: RedactionRule): void {
  if (checked.has(rule)) return;
  const groups = new RegExp(`${rule.source}|`).exec('')?.length ?? 0;
  if (groups !== 1 || new RegExp(`^(?:${rule.source})$`).test('')) {
    throw new IllegalStateError(`redaction rule ${rule.kind} has a capturing group or matches ''`);
  }
  checked.add(rule);
}

/** Each rule's sticky RegExp by flags, kept as long as the rule (shared: every use sets lastIndex). */
const stickies = new WeakMap<RedactionRule, Map<string, RegExp>>();

function stickyOf(rule: RedactionRule, flags: string): RegExp {
  let byFlags = stickies.get(rule);
  if (byFlags === undefined) stickies.set(rule, (byFlags = new Map<string, RegExp>()));
  let re = byFlags.get(flags);
  if (re === undefined) byFlags.set(flags, (re = new RegExp(rule.source, `y${flags}`)));
  return re;
}

function join(rules: readonly RedactionRule[], flags: string): RegExp | undefined {
  return rules.length === 0
    ? undefined
    : new RegExp(rules.map((r) => `(${r.source})`).join('|'), flags);
}
