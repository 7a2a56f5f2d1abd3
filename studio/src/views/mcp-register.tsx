import { useLocation } from 'preact-iso';
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorNote } from '../components/bits.js';
import type { McpServer, McpTransport } from '../mcp-types.js';
import { refusal } from './refusal.js';

/** The admin's form that registers an upstream MCP server (stdio command or HTTP URL). */
export function RegisterServer({ onRegistered }: { onRegistered: () => void }) {
  const { route } = useLocation();
  const [name, setName] = useState('');
  const [type, setType] = useState<'stdio' | 'http'>('stdio');
  const [command, setCommand] = useState('');
  const [args, setArgs] = useState('');
  const [url, setUrl] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    const transport: McpTransport =
      type === 'stdio'
        ? {
            type,
            command: command.trim(),
            args: args
              .split('\n')
              .map((a) => a.trim())
              .filter((a) => a !== ''),
          }
        : { type, url: url.trim() };
    setBusy(true);
    setError(null);
    try {
      const server = await api<McpServer>('POST', '/v1/mcp-servers', {
        name: name.trim(),
        transport,
      });
      onRegistered();
      route(`/studio/mcp/${encodeURIComponent(server.id)}`);
    } catch (err) {
      setError(refusal(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="card" aria-labelledby="register-title" onSubmit={(e) => void submit(e)}>
      <h2 id="register-title">Register a server</h2>
      <label for="mcp-name">Name</label>
      <input id="mcp-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
      <fieldset>
        <legend>Transport</legend>
        <label>
          <input
            type="radio"
            name="mcp-transport"
            checked={type === 'stdio'}
            onChange={() => setType('stdio')}
          />{' '}
          stdio (a command the gateway runs)
        </label>
        <label>
          <input
            type="radio"
            name="mcp-transport"
            checked={type === 'http'}
            onChange={() => setType('http')}
          />{' '}
          Streamable HTTP
        </label>
      </fieldset>
      {type === 'stdio' ? (
        <>
          <label for="mcp-command">Command (absolute path, or a program on the PATH)</label>
          <input
            id="mcp-command"
            required
            value={command}
            onInput={(e) => setCommand(e.currentTarget.value)}
          />
          <label for="mcp-args">Arguments, one per line</label>
          <textarea
            id="mcp-args"
            rows={3}
            value={args}
            onInput={(e) => setArgs(e.currentTarget.value)}
          />
        </>
      ) : (
        <>
          <label for="mcp-url">URL</label>
          <input
            id="mcp-url"
            type="url"
            required
            value={url}
            onInput={(e) => setUrl(e.currentTarget.value)}
          />
        </>
      )}
      <div class="actions">
        <button type="submit" disabled={busy} aria-busy={busy}>
          {busy ? 'Registering…' : 'Register'}
        </button>
      </div>
      <ErrorNote message={error} />
    </form>
  );
}
