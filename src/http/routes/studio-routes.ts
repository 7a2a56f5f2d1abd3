import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Route, RouteAnswer } from '../route.js';
import type { StudioFile, StudioFiles } from '../studio-files.js';

/**
 * The Studio's Content-Security-Policy: its own scripts, styles and API only — no inline script or
 * style, no other origin, never framed.
 */
export const STUDIO_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The page for a browser with a session (the build's shell that asks who it is). */
const SIGNED_IN_PAGE = 'signed-in.html';

function serve(reply: FastifyReply, file: StudioFile, status = 200): RouteAnswer {
  void reply.headers({
    'content-security-policy': STUDIO_CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
    'cache-control': file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
  });
  return { status, body: file.body, contentType: file.contentType };
}

const notBuilt: RouteAnswer = {
  status: 503,
  contentType: 'text/plain; charset=utf-8',
  body: 'The Studio is not built: run `npm run build` (npm run setup does it), then restart the gateway.\n',
};

/**
 * `GET /studio` and everything under it: the built files, with long-cache hashed assets; any other
 * path under /studio/ is one of the application's own pages. A page is `index.html` (the sign-in
 * page prerendered) when `signedIn(req)` is false, else `signed-in.html` (the shell, which asks for
 * the session) when the build has it.
 */
export function studioRoutes(
  files: StudioFiles | null,
  signedIn: (req: FastifyRequest) => boolean,
): Route[] {
  const page = (path: string, req: FastifyRequest, reply: FastifyReply): RouteAnswer => {
    if (!files) return notBuilt;
    const file = path === 'index.html' || path === SIGNED_IN_PAGE ? undefined : files.get(path);
    if (file) return serve(reply, file);
    if (path.startsWith('assets/')) {
      return {
        status: 404,
        contentType: 'text/plain; charset=utf-8',
        body: `No Studio asset ${path}: the page that asked for it is older than this build; reload it.\n`,
      };
    }
    const index =
      (signedIn(req) ? files.get(SIGNED_IN_PAGE) : undefined) ?? files.get('index.html');
    if (!index) return notBuilt;
    void reply.header('vary', 'cookie');
    return serve(reply, index);
  };
  const common = {
    method: 'GET' as const,
    tag: 'studio',
    responseType: 'text/html',
    responses: { '200': 'the Studio', '503': 'the Studio is not built (run npm run build)' },
  };
  return [
    {
      ...common,
      url: '/studio',
      summary: 'The Studio, the web UI for reviewers, operators, maintainers and admins',
      handler: (_p, req, reply) => page('index.html', req, reply),
    },
    {
      ...common,
      url: '/studio/*',
      summary: "The Studio's pages and its hashed, long-cached assets",
      handler: (_p, req, reply) => page((req.params as { '*': string })['*'], req, reply),
    },
  ];
}
