// A loopback TCP proxy in front of a server (PostgreSQL, say) that a test can cut and restore: cut, it drops
// every connection and refuses new ones, as a database that went away; stalled, it keeps every connection open
// and passes nothing on, as a host gone without closing anything (a network cut); restored, it passes them on
// again. Trapped (`cutAfterCommit`), it passes the next COMMIT on and closes that connection before its answer
// comes back: the transaction committed, the client never told.
import { connect, createServer, type Server, type Socket } from 'node:net';

export class TcpProxy {
  port = 0;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private cut = false;
  private stalled = false;
  /** Connections taken while stalled, never passed on. */
  private readonly held = new Set<Socket>();
  /** Called, and cleared, when the next COMMIT has been passed on and the server has closed its connection. */
  private commitTrap: (() => void) | undefined;

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
      upstream.pipe(client);
      client.on('data', (chunk: Buffer) => {
        const trap = this.commitTrap;
        if (trap && /\bcommit\b/i.test(chunk.toString('latin1'))) {
          this.commitTrap = undefined;
          client.destroy();
          // The server has acted on the COMMIT once it closes its end, having read the end of input after it:
          // its answer is read and dropped, so that end is seen.
          upstream.unpipe(client);
          upstream.resume();
          upstream.once('close', trap);
          upstream.end(chunk);
          return;
        }
        if (!upstream.write(chunk)) {
          client.pause();
          upstream.once('drain', () => client.resume());
        }
      });
      client.on('end', () => upstream.end());
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

  /**
   * Passes the next COMMIT (of any connection) on to the server, then closes that connection before the answer
   * comes back. Resolves once the server has closed its end too, so the COMMIT has taken effect: the client's
   * error comes at once, while a busy server may still be writing the commit, and another connection's read
   * made then would not see it yet.
   */
  cutAfterCommit(): Promise<void> {
    return new Promise((resolve) => {
      this.commitTrap = resolve;
    });
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
