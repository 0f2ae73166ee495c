/**
 * @module A real OTLP/HTTP traces receiver for the tracing tests: it accepts `POST /v1/traces` in
 * JSON or protobuf, keeps every raw body (a test can search them for what must never be
 * exported) and the spans decoded from them. Protobuf is decoded from the wire format here: the
 * installed exporters ship an encoder, not a decoder of requests (the OTLP protos'
 * ExportTraceServiceRequest → ResourceSpans → ScopeSpans → Span, and their KeyValue attributes).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  readonly kind: number;
  /** Start and end, nanoseconds since the epoch. */
  readonly startNs: bigint;
  readonly endNs: bigint;
  /** OTLP StatusCode: 0 unset, 1 ok, 2 error. */
  readonly status: number;
  readonly attributes: Readonly<Record<string, string | number | boolean>>;
  readonly resource: Readonly<Record<string, string | number | boolean>>;
}

export interface OtlpReceiver {
  /** The base URL (OTEL_EXPORTER_OTLP_ENDPOINT). */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  readonly bodies: Buffer[];
  readonly contentTypes: string[];
  /** Resolves once `predicate` holds of the spans received (polls; fails after `ms`). */
  waitFor(predicate: (spans: readonly ReceivedSpan[]) => boolean, ms?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: Buffer[] = [];
  const contentTypes: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const type = req.headers['content-type'] ?? '';
      bodies.push(body);
      contentTypes.push(type);
      if (req.url === '/v1/traces') {
        spans.push(...(type.includes('json') ? fromJson(body) : fromProtobuf(body)));
      }
      res.writeHead(200, { 'content-type': type.includes('json') ? 'application/json' : type });
      res.end(type.includes('json') ? '{}' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    bodies,
    contentTypes,
    async waitFor(predicate, ms = 10_000) {
      const until = Date.now() + ms;
      while (!predicate(spans)) {
        if (Date.now() > until)
          throw new Error(`spans not received: ${JSON.stringify(spans.map((s) => s.name))}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type JsonValue = {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
};
type JsonKv = { key: string; value: JsonValue };

function jsonAttributes(
  list: readonly JsonKv[] | undefined,
): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) {
    out[key] = value.stringValue ?? value.boolValue ?? value.doubleValue ?? Number(value.intValue);
  }
  return out;
}

function fromJson(body: Buffer): ReceivedSpan[] {
  const doc = JSON.parse(body.toString('utf8')) as {
    resourceSpans: {
      resource?: { attributes?: JsonKv[] };
      scopeSpans: {
        spans: {
          traceId: string;
          spanId: string;
          parentSpanId?: string;
          name: string;
          kind: number;
          startTimeUnixNano: string | number;
          endTimeUnixNano: string | number;
          status?: { code?: number };
          attributes?: JsonKv[];
        }[];
      }[];
    }[];
  };
  const out: ReceivedSpan[] = [];
  for (const rs of doc.resourceSpans) {
    const resource = jsonAttributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans) {
      for (const s of ss.spans) {
        out.push({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId ?? '',
          name: s.name,
          kind: s.kind,
          startNs: BigInt(s.startTimeUnixNano),
          endNs: BigInt(s.endTimeUnixNano),
          status: s.status?.code ?? 0,
          attributes: jsonAttributes(s.attributes),
          resource,
        });
      }
    }
  }
  return out;
}

/** One protobuf field: its number, and its value (a varint or the bytes of a length-delimited one). */
type Field = { no: number; varint?: bigint; bytes?: Buffer; fixed?: Buffer };

function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let i = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const b = buf[i++] as number;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const tag = Number(varint());
    const no = tag >> 3;
    const wire = tag & 7;
    if (wire === 0) out.push({ no, varint: varint() });
    else if (wire === 2) {
      const len = Number(varint());
      out.push({ no, bytes: buf.subarray(i, i + len) });
      i += len;
    } else if (wire === 1) {
      out.push({ no, fixed: buf.subarray(i, i + 8) });
      i += 8;
    } else if (wire === 5) {
      out.push({ no, fixed: buf.subarray(i, i + 4) });
      i += 4;
    } else throw new Error(`wire type ${wire}`);
  }
  return out;
}

const sub = (f: readonly Field[], no: number) =>
  f.filter((x) => x.no === no && x.bytes).map((x) => x.bytes as Buffer);

function pbAttributes(kvs: readonly Buffer[]): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const kv of kvs) {
    const f = fields(kv);
    const key = sub(f, 1)[0]?.toString('utf8') ?? '';
    const any = fields(sub(f, 2)[0] ?? Buffer.alloc(0))[0];
    if (!any) continue;
    if (any.no === 1) out[key] = any.bytes?.toString('utf8') ?? '';
    else if (any.no === 2) out[key] = any.varint === 1n;
    else if (any.no === 3) out[key] = Number(any.varint);
    else if (any.no === 4) out[key] = any.fixed?.readDoubleLE(0) ?? 0;
  }
  return out;
}

function fromProtobuf(body: Buffer): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of sub(fields(body), 1)) {
    const rsf = fields(rs);
    const resource = pbAttributes(sub(fields(sub(rsf, 1)[0] ?? Buffer.alloc(0)), 1));
    for (const ss of sub(rsf, 2)) {
      for (const span of sub(fields(ss), 2)) {
        const f = fields(span);
        out.push({
          traceId: sub(f, 1)[0]?.toString('hex') ?? '',
          spanId: sub(f, 2)[0]?.toString('hex') ?? '',
          parentSpanId: sub(f, 4)[0]?.toString('hex') ?? '',
          name: sub(f, 5)[0]?.toString('utf8') ?? '',
          kind: Number(f.find((x) => x.no === 6)?.varint ?? 0n),
          startNs: f.find((x) => x.no === 7)?.fixed?.readBigUInt64LE(0) ?? 0n,
          endNs: f.find((x) => x.no === 8)?.fixed?.readBigUInt64LE(0) ?? 0n,
          status: Number(
            fields(sub(f, 15)[0] ?? Buffer.alloc(0)).find((x) => x.no === 3)?.varint ?? 0n,
          ),
          attributes: pbAttributes(sub(f, 9)),
          resource,
        });
      }
    }
  }
  return out;
}
