// GET /ws in the main process when the calls run in their own process: the
// upgrade is checked here (path, Origin) and its socket handed over
// (calls-process.ts); nothing of the call passes through this process after.
import type { Socket } from 'node:net';
import type { FastifyPluginAsync } from 'fastify';
import type { Config } from '../config.js';
import { refusedOrigin } from '../realtime/origin-check.js';
import { refuse, type CallsProcess } from './calls-process.js';

export function handOffPlugin(calls: CallsProcess, config: Readonly<Config>): FastifyPluginAsync {
  return async (app) => {
    app.server.on('upgrade', (request, duplex, head) => {
      const socket = duplex as Socket;
      const path = (request.url ?? '').split('?')[0];
      if (path !== '/ws') return refuse(socket, 404, 'Not found');
      const refused = refusedOrigin(config.allowedOrigins, request.headers.origin);
      if (refused) return refuse(socket, 403, refused);
      calls.handOff(request, socket, head);
    });
  };
}
