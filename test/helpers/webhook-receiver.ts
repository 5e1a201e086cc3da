// A loopback HTTP receiver for webhook deliveries, on node:http at 127.0.0.1 and an ephemeral port. Each
// request is recorded; `answer` decides the reply (status, headers, body), or to hang without answering.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Answer {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  /** Never answer (until the receiver closes). */
  hang?: boolean;
}

export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = [];
  /** TCP connections accepted, whether or not a request followed. */
  connections = 0;
  inFlight = 0;
  maxInFlight = 0;
  answer: (request: ReceivedRequest, index: number) => Answer = () => ({ status: 200 });
  private readonly hanging = new Set<ServerResponse>();
  private readonly server: Server;
  port = 0;

  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      this.inFlight++;
      this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
      res.on('close', () => this.inFlight--);
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const request: ReceivedRequest = {
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        };
        const index = this.requests.length;
        this.requests.push(request);
        const answer = this.answer(request, index);
        if (answer.hang) {
          this.hanging.add(res);
          return;
        }
        res.writeHead(answer.status ?? 200, answer.headers);
        res.end(answer.body ?? '');
      });
    });
    this.server.on('connection', () => this.connections++);
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Answers every hanging request with `status`. */
  releaseHanging(status = 200): void {
    for (const res of this.hanging) res.writeHead(status).end();
    this.hanging.clear();
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
