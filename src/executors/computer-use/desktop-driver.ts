/** The X display inside the sandbox (its socket is abstract: the sandbox's network namespace only). */
export const DISPLAY_INSIDE = ':0';

/**
 * The desktop's driver, run by `/bin/sh` inside the sandbox with the screen's width and height
 * and then the application's argv: start Xvfb at that size (no TCP), wait until xdotool reaches
 * it, start the application on it and wait (up to 10 s, or its exit) until it shows a window, give
 * that window the keyboard, say `ready`, then serve commands from stdin, one at a time.
 *
 * A command is a line with its word count, then each word base64-encoded on a line of its own (so
 * no word is ever parsed by a shell). Its answer is one line: exit status, whether the application
 * still runs (1/0), its stdout and (the first 2000 bytes of) its stderr, both base64. A display
 * that does not come up answers `failed` and Xvfb's last words (base64), and exits.
 */
const DRIVER = `w=$1 h=$2
shift 2
export DISPLAY=${DISPLAY_INSIDE}
Xvfb ${DISPLAY_INSIDE} -screen 0 "\${w}x\${h}x24" -nolisten tcp -noreset </dev/null >/tmp/.xvfb.log 2>&1 &
xvfb=$!
i=0
until xdotool getdisplaygeometry >/dev/null 2>&1; do
  i=$((i + 1))
  if [ "$i" -gt 1000 ] || ! kill -0 "$xvfb" 2>/dev/null; then
    printf 'failed %s\\n' "$(tail -c 500 /tmp/.xvfb.log | base64 -w0)"
    exit 125
  fi
  sleep 0.01
done
"$@" </dev/null >/tmp/.application.log 2>&1 &
app=$!
i=0
until window=$(xdotool search --onlyvisible --name . 2>/dev/null | head -n 1) && [ -n "$window" ]; do
  i=$((i + 1))
  [ "$i" -gt 500 ] || ! kill -0 "$app" 2>/dev/null && break
  sleep 0.02
done
[ -n "$window" ] && xdotool windowfocus "$window" >/dev/null 2>&1
echo ready
while read -r n; do
  set --
  while [ "$n" -gt 0 ]; do
    read -r word || exit 0
    v=$(printf %s "$word" | base64 -d && echo .)
    set -- "$@" "\${v%.}"
    n=$((n - 1))
  done
  "$@" </dev/null >/tmp/.out 2>/tmp/.err
  rc=$?
  alive=1
  kill -0 "$app" 2>/dev/null || alive=0
  printf '%s %s %s %s\\n' "$rc" "$alive" "$(base64 -w0 </tmp/.out)" "$(head -c 2000 /tmp/.err | base64 -w0)"
done`;

/** The argv bubblewrap runs for a desktop whose screen (Xvfb) is `screen`, running `application`. */
export function desktopArgv(
  screen: { width: number; height: number },
  application: readonly string[],
): string[] {
  return [
    '/bin/sh',
    '-c',
    DRIVER,
    'gatehouse-desktop',
    String(screen.width),
    String(screen.height),
    ...application,
  ];
}

/** One command for the driver, framed as it reads it. */
export function frameCommand(argv: readonly string[]): string {
  return [
    String(argv.length),
    ...argv.map((w) => Buffer.from(w, 'utf8').toString('base64')),
    '',
  ].join('\n');
}

/** The driver's answer to one command. */
export interface DriverAnswer {
  status: number;
  /** Whether the desktop's application still ran after the command. */
  applicationRunning: boolean;
  stdout: Buffer;
  stderr: string;
}

/** Parses one answer line of the driver. @throws Error on a line that is not one. */
export function parseAnswer(line: string): DriverAnswer {
  const [status, alive, out, err] = line.split(' ');
  if (!/^\d+$/.test(status ?? '') || (alive !== '0' && alive !== '1'))
    throw new Error(`the desktop's driver answered ${JSON.stringify(line.slice(0, 200))}`);
  return {
    status: Number(status),
    applicationRunning: alive === '1',
    stdout: Buffer.from(out ?? '', 'base64'),
    stderr: Buffer.from(err ?? '', 'base64').toString('utf8'),
  };
}
