import { describe, expectTypeOf, it } from 'vitest';
import type { Approval as ServerApproval } from '../../src/approvals/index.js';
import type { InvocationRecord } from '../../src/invocation/index.js';
import type { McpServerView as ServerMcpView } from '../../src/mcp/index.js';
import type { McpServerView } from '../../studio/src/mcp-types.js';
import type { Approval, Invocation } from '../../studio/src/types.js';

/**
 * The Studio is a browser bundle and keeps its own copy of the API's shapes (it cannot import the
 * server's modules). These checks, run by `npm run typecheck`, fail when the server's records
 * stop fitting what the Studio reads: a renamed or retyped field breaks the build, not the page.
 */
describe('the Studio reads the shapes the API answers', () => {
  it('an approval', () => {
    expectTypeOf<ServerApproval>().toMatchTypeOf<Approval>();
  });

  it('an invocation record', () => {
    expectTypeOf<InvocationRecord>().toMatchTypeOf<Invocation>();
  });

  it('an MCP server with its discovery and bindings', () => {
    expectTypeOf<ServerMcpView>().toMatchTypeOf<McpServerView>();
  });
});
