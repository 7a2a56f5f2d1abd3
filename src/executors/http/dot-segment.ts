/**
 * Whether a filled URL's path has a segment that the URL parser, or a server that decodes or
 * splits further, would read as `.` or `..`: the parser takes `.`, `..` and `%2e` for a dot, `\`
 * as a separator too; many servers decode `%2F` to `/` before resolving, and some take `;` to
 * start a segment's parameters (`/..;/admin`). An input value such as `..` in `/users/{id}/x`
 * (or `../admin`, filled as `..%2Fadmin`) would otherwise leave the templated path and reach
 * another path of the upstream with the descriptor's credentials. The template itself is checked
 * at publication, so any such segment here came from the input.
 */
export function hasDotSegment(filled: string): boolean {
  const afterAuthority = filled.replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/\\?#]*/, '');
  const path = afterAuthority.split(/[?#]/, 1)[0]!;
  return path.split(/[/\\]/).some((segment) => {
    const parts = [segment, ...decodedOnce(segment).split(/[/\\;]/)];
    return parts.some((part) => /^(?:\.|%2e){1,2}$/i.test(part));
  });
}

/** A segment with its %-escapes decoded once (as a server would), kept as it is where malformed. */
function decodedOnce(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
