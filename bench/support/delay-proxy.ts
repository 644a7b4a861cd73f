// A TCP proxy on 127.0.0.1 that holds every chunk `delayMs` before passing it
// on, in both directions and in order: the pages' distance from the server
// (their HTTP and WebSocket), where the kernel offers no delay qdisc
// (test/README.md, "Real networks": no netem). Used by bench:browser --signaling-delay.
import net from 'node:net';

export interface DelayProxy {
  /** http://127.0.0.1:PORT, the origin the pages use. */
  url: string;
  /** Where connections go from now on (the server is started after the proxy, with the proxy's URL as its public one). */
  setTarget(port: number): void;
  close(): Promise<void>;
}

/** Writes what `from` sends to `to`, each chunk `delayMs` later (timers of one duration fire in the order they were set). */
function delayedPipe(from: net.Socket, to: net.Socket, delayMs: number): void {
  from.on('data', (chunk) => setTimeout(() => to.writable && to.write(chunk), delayMs));
  from.on('end', () => setTimeout(() => to.end(), delayMs));
}

export async function startDelayProxy(delayMs: number): Promise<DelayProxy> {
  let target = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.setNoDelay(true);
      socket.on('error', () => {});
      socket.on('close', () => {
        sockets.delete(socket);
        setTimeout(() => (socket === client ? upstream : client).destroy(), delayMs);
      });
    }
    delayedPipe(client, upstream, delayMs);
    delayedPipe(upstream, client, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    setTarget: (port) => (target = port),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
