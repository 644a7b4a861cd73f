// A real webhook receiver for the tests: an HTTP server on 127.0.0.1 that
// keeps every request it gets and answers as the test says (a status, after a
// delay, or never).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
  /** The status it was answered with; undefined while (or when it was never) answered. */
  status?: number;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** How the next requests are answered: a status, or 'hang' (never answered until close). */
  answer: number | 'hang';
  /** The received bodies' `type`s, in order. */
  types(): string[];
  close(): Promise<void>;
}

export async function startWebhookReceiver(path = '/hooks'): Promise<WebhookReceiver> {
  const hanging = new Set<http.ServerResponse>();
  const receiver: WebhookReceiver = {
    url: '',
    received: [],
    answer: 204,
    types: () => receiver.received.map((r) => (JSON.parse(r.body) as { type: string }).type),
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const received: ReceivedWebhook = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      receiver.received.push(received);
      if (receiver.answer === 'hang') {
        hanging.add(res);
        return;
      }
      received.status = receiver.answer;
      res.statusCode = receiver.answer;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return receiver;
}
