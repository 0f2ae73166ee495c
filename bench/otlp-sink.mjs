/**
 * A stand-in OTLP/HTTP collector for bench/gate-tracing.ts, run in its own process as a real
 * collector is (so its parsing is not counted as the gateway's time or CPU): it answers every
 * export with 200 and counts the requests, their bytes and the spans in them (protobuf: the
 * ExportTraceServiceRequest's ResourceSpans → ScopeSpans → Span, counted, never kept). Talks to
 * its parent over the IPC channel of `fork`: it sends `{ port }` once listening, answers
 * 'stats' with `{ requests, bytes, spans }`, and exits when the parent goes.
 */
import { createServer } from 'node:http';

let requests = 0;
let bytes = 0;
let spans = 0;

/** The length-delimited fields numbered `no` of one protobuf message. */
function messages(buf, no) {
  const out = [];
  let i = 0;
  const varint = () => {
    let v = 0;
    let mul = 1;
    for (;;) {
      const b = buf[i++];
      v += (b & 0x7f) * mul;
      if ((b & 0x80) === 0) return v;
      mul *= 128;
    }
  };
  while (i < buf.length) {
    const tag = varint();
    const wire = tag % 8;
    if (wire === 0) varint();
    else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else if (wire === 2) {
      const len = varint();
      if (Math.floor(tag / 8) === no) out.push(buf.subarray(i, i + len));
      i += len;
    } else throw new Error(`wire type ${wire}`);
  }
  return out;
}

function countSpans(body) {
  let n = 0;
  for (const resourceSpans of messages(body, 1)) {
    for (const scopeSpans of messages(resourceSpans, 2)) n += messages(scopeSpans, 2).length;
  }
  return n;
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    requests++;
    bytes += body.length;
    spans += countSpans(body);
    res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
  });
});
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', (m) => {
  if (m === 'stats') process.send({ requests, bytes, spans });
});
process.on('disconnect', () => process.exit(0));
