/**
 * Idle event-stream readers in a process of their own, so reading them does not slow the load
 * generator: `node stream-readers.js URL TOKEN N` opens N `GET /v1/events/stream` with `TOKEN`,
 * reads every event, prints `N readers open` once all answered 200, and stays until it is killed.
 */
const [url, token, count] = process.argv.slice(2);
if (!url || !token || !count) {
  process.stderr.write('usage: stream-readers.js URL TOKEN N\n');
  process.exit(2);
}
const n = Number(count);
for (let i = 0; i < n; i++) {
  const res = await fetch(`${url}/v1/events/stream`, {
    headers: { authorization: `Bearer ${token}` },
  });
  if (res.status !== 200) {
    process.stderr.write(`stream ${i}: ${res.status} ${await res.text()}\n`);
    process.exit(1);
  }
  void (async () => {
    try {
      for await (const _ of res.body!) void _;
    } catch {
      // the gateway went away
    }
  })();
}
process.stdout.write(`${n} readers open\n`);
