import type { FastifyReply } from 'fastify';
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
 * path under /studio/ is one of the application's own pages and gets index.html.
 */
export function studioRoutes(files: StudioFiles | null): Route[] {
  const page = (path: string, reply: FastifyReply): RouteAnswer => {
    if (!files) return notBuilt;
    const file = files.get(path);
    if (file) return serve(reply, file);
    if (path.startsWith('assets/')) {
      return {
        status: 404,
        contentType: 'text/plain; charset=utf-8',
        body: `No Studio asset ${path}: the page that asked for it is older than this build; reload it.\n`,
      };
    }
    const index = files.get('index.html');
    return index ? serve(reply, index) : notBuilt;
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
      handler: (_p, _req, reply) => page('index.html', reply),
    },
    {
      ...common,
      url: '/studio/*',
      summary: "The Studio's pages and its hashed, long-cached assets",
      handler: (_p, req, reply) => page((req.params as { '*': string })['*'], reply),
    },
  ];
}
