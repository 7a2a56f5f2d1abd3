/**
 * Whether a filled URL's path has a segment the URL parser would read as `.` or `..` (WHATWG: `.`,
 * `..`, with `%2e` for any dot, `\` a separator too). An input value such as `..` in `/users/{id}/x`
 * would otherwise be resolved away and reach another path of the upstream (`/x`) with the
 * descriptor's credentials. The template itself is checked at publication, so any such segment
 * here came from the input.
 */
export function hasDotSegment(filled: string): boolean {
  const afterAuthority = filled.replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/\\?#]*/, '');
  const path = afterAuthority.split(/[?#]/, 1)[0]!;
  return path.split(/[/\\]/).some((segment) => /^(?:\.|%2e){1,2}$/i.test(segment));
}
