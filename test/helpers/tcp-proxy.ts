// A loopback TCP proxy in front of a server (PostgreSQL, say) that a test can cut and restore: cut, it drops
// every connection and refuses new ones, as a database that went away; stalled, it keeps every connection open
// and passes nothing on, as a host gone without closing anything (a network cut); restored, it passes them on
// again.
import { connect, createServer, type Server, type Socket } from 'node:net';

export class TcpProxy {
  port = 0;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private cut = false;
  private stalled = false;
  /** Connections taken while stalled, never passed on. */
  private readonly held = new Set<Socket>();

  constructor(target: { host: string; port: number }) {
    this.server = createServer((client) => {
      if (this.cut) {
        client.destroy();
        return;
      }
      if (this.stalled) {
        this.held.add(client);
        client.on('error', () => {});
        client.on('close', () => this.held.delete(client));
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

  /** Passes nothing on either way, and answers no new connection, while every connection stays open. */
  stall(): void {
    this.stalled = true;
    for (const socket of this.sockets) socket.pause();
  }

  restore(): void {
    this.cut = false;
    if (this.stalled) {
      this.stalled = false;
      for (const socket of this.sockets) socket.resume();
      for (const socket of this.held) socket.destroy();
    }
  }

  async close(): Promise<void> {
    this.cutAll();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
