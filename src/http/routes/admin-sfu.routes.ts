// What an operator sees of the SFU (docs/design.md, "Group calls through an
// SFU"): each Janus instance this node uses, whether it answers, and the rooms
// pinned to it (its load; a room goes to the least loaded). Instances that no
// longer appear in the configuration but still hold rooms are listed too.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { janusAnswers } from '../../sfu/janus-client.js';
import type { Services } from '../../services.js';
import { ErrorSchema } from '../schemas.js';

type App = Parameters<FastifyPluginAsyncTypebox>[0];

const InstanceSchema = Type.Object({
  url: Type.String(),
  configured: Type.Boolean(),
  answers: Type.Boolean(),
  rooms: Type.Integer(),
});

export function sfuAdminRoutes(app: App, services: Services, tags: string[], security: Record<string, string[]>[]): void {
  app.get(
    '/admin/sfu',
    {
      schema: {
        tags,
        security,
        operationId: 'adminSfu',
        summary: 'The SFU: each Janus instance, whether it answers, and the rooms pinned to it',
        response: { 200: Type.Object({ sfu: Type.Union([Type.Literal('off'), Type.Literal('janus')]), instances: Type.Array(InstanceSchema) }), 401: ErrorSchema },
      },
    },
    async () => {
      const { config, repos } = services;
      const pinned = await repos.sfuRooms.all();
      const urls = [...new Set([...config.janusUrls, ...pinned.map((entry) => entry.instance)])];
      const answers = await Promise.all(urls.map((url) => janusAnswers(url)));
      return {
        sfu: config.sfu,
        instances: urls.map((url, index) => ({
          url,
          configured: config.janusUrls.includes(url),
          answers: answers[index]!,
          rooms: pinned.find((entry) => entry.instance === url)?.rooms ?? 0,
        })),
      };
    },
  );
}
