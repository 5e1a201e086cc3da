// A loopback TCP proxy in front of a server (PostgreSQL, say) that a test can cut and restore: cut, it drops
// every connection and refuses new ones, as a database that went away; restored, it passes them on again.
import { connect, createServer, type Server, type Socket } from 'node:net';

export class TcpProxy {
  port = 0;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private cut = false;

  constructor(target: { host: string; port: number }) {
    this.server = createServer((client) => {
      if (this.cut) {
        client.destroy();
        return;
      }
      const upstream = connect(target);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    this.port = typeof address === 'object' && address ? address.port : 0;
    return this;
  }

  /** Drops every connection and refuses new ones. */
  cutAll(): void {
    this.cut = true;
    for (const socket of this.sockets) socket.destroy();
  }

  restore(): void {
    this.cut = false;
  }

  async close(): Promise<void> {
    this.cutAll();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
