/**
 * A stdio MCP server with one tool, `flood`, that answers a text of `bytes` bytes: the large MCP
 * output of the memory bench, from a process of its own so its memory is not the gateway's.
 * Usage: node flood-upstream.js
 */
import { Server } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';

const server = new Server({ name: 'flood', version: '1.0.0' }, { capabilities: { tools: {} } });

server.setRequestHandler('tools/list', () => ({
  tools: [
    {
      name: 'flood',
      description: 'Answers a text of `bytes` bytes.',
      inputSchema: {
        type: 'object',
        required: ['bytes'],
        properties: { bytes: { type: 'integer', minimum: 1, maximum: 8_000_000 } },
      },
    },
  ],
}));

server.setRequestHandler('tools/call', (request) => {
  const bytes = Number((request.params.arguments as { bytes?: unknown } | undefined)?.bytes ?? 0);
  return { content: [{ type: 'text', text: 'x'.repeat(bytes) }] };
});

process.stdin.on('end', () => process.exit(0));
await server.connect(new StdioServerTransport());
