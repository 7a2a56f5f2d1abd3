import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One OTLP/HTTP export request as the receiver got it. */
export interface OtlpExport {
  path: string;
  contentType: string;
  body: Buffer;
}

/** A span of an OTLP/JSON export (ids as hex, attributes flattened to their values). */
export interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  status: { code?: number; message?: string };
  /** The resource's attributes (service.name…). */
  resource: Record<string, unknown>;
}

interface JsonAttribute {
  key: string;
  value: Record<string, unknown>;
}

/**
 * An OTLP/HTTP receiver on a loopback port: it answers every export 200 and keeps what it got,
 * so a test can read the spans a gateway exported.
 */
export class OtlpReceiver {
  private constructor(
    /** The export requests received, in order. */
    readonly exports: OtlpExport[],
    private readonly server: Server,
    /** The base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT` takes it. */
    readonly url: string,
  ) {}

  /** Listens on 127.0.0.1 on a free port. */
  static async start(): Promise<OtlpReceiver> {
    const exports: OtlpExport[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        exports.push({
          path: req.url ?? '',
          contentType: req.headers['content-type'] ?? '',
          body: Buffer.concat(chunks),
        });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return new OtlpReceiver(exports, server, `http://127.0.0.1:${port}`);
  }

  /** Every span of the JSON exports received so far. */
  spans(): ExportedSpan[] {
    return this.exports.flatMap((e) => {
      const doc = JSON.parse(e.body.toString('utf8')) as {
        resourceSpans: {
          resource: { attributes: JsonAttribute[] };
          scopeSpans: {
            spans: (Omit<ExportedSpan, 'attributes' | 'resource'> & {
              attributes: JsonAttribute[];
            })[];
          }[];
        }[];
      };
      return doc.resourceSpans.flatMap((rs) =>
        rs.scopeSpans.flatMap((ss) =>
          ss.spans.map((s) => ({
            ...s,
            attributes: flatten(s.attributes),
            resource: flatten(rs.resource.attributes),
          })),
        ),
      );
    });
  }

  /** Stops listening. Safe to call twice. */
  close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    return closed;
  }
}

function flatten(attributes: JsonAttribute[]): Record<string, unknown> {
  return Object.fromEntries(
    attributes.map((a) => {
      const v = a.value;
      const value = v.stringValue ?? v.intValue ?? v.boolValue ?? v.doubleValue;
      return [a.key, typeof value === 'string' && 'intValue' in v ? Number(value) : value];
    }),
  );
}
