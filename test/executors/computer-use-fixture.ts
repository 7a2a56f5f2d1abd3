import { missingCommand } from '../helpers/prerequisites.js';

/** Null when Xvfb, xdotool, ImageMagick's import and xterm are installed here; else what is not. */
export function missingDesktop(): string | null {
  for (const command of ['Xvfb', 'xdotool', 'import', 'xterm']) {
    const problem = missingCommand(command);
    if (problem !== null) return problem;
  }
  return null;
}

/** A `computer-use` descriptor on an xterm, with `extra` laid over it. */
export function desktopTool(
  id: string,
  execution: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    id,
    version: '1.0.0',
    kind: 'computer-use',
    title: id,
    description: `${id}: computer use on a desktop (a test tool).`,
    inputSchema: {
      type: 'object',
      required: ['actions'],
      properties: { actions: { type: 'array' } },
    },
    sideEffect: { class: 'workspace-write' },
    execution,
    sandbox: { memoryMb: 512, pids: 256 },
    timeoutMs: 30_000,
    ...extra,
  };
}
