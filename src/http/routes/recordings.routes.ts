// The recording endpoints (docs/api.md, "Recordings"), under the room's scope
// rules. The file is streamed from disk (fs.createReadStream), one Range at
// most, never read whole into memory.
import fs from 'node:fs';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { NotFoundError } from '../../errors.js';
import { TOKEN_PATTERN, UUID_PATTERN } from '../../domain/support/ids.js';
import type { Services } from '../../services.js';
import { byteRange } from '../byte-range.js';
import { leaveConcurrencyGate } from '../hooks/concurrency-gate.js';
import { ErrorSchema, RecordingParamsSchema, TokenParamsSchema, commonErrors } from '../schemas.js';

function recordingId(id: string): string {
  if (!UUID_PATTERN.test(id)) throw new NotFoundError('Recording not found');
  return id.toLowerCase();
}

const binary = (description: string) => ({ description, content: { 'video/webm': { schema: { type: 'string', format: 'binary' } } } });

export const recordingsRoutes =
  (services: Services): FastifyPluginAsyncTypebox =>
  async (app) => {
    const tags = ['recordings'];
    const security = [{ bearer: [] }];

    app.get(
      '/api/rooms/:token/recordings',
      {
        schema: {
          tags,
          security,
          operationId: 'listRoomRecordings',
          summary: "The room's recordings, oldest first, each with the consents it was made under",
          params: TokenParamsSchema,
          response: { 200: Type.Object({ recordings: Type.Array(Type.Ref('Recording')) }), ...commonErrors },
        },
      },
      async (request) => {
        if (!TOKEN_PATTERN.test(request.params.token)) throw new NotFoundError('Room not found');
        return { recordings: await services.recordings.list(request.principal, request.params.token) };
      },
    );

    app.get(
      '/api/recordings/:id/file',
      {
        schema: {
          tags,
          security,
          operationId: 'downloadRecording',
          summary: 'The recording file (WebM); a single byte Range is served as 206',
          params: RecordingParamsSchema,
          headers: Type.Object({ range: Type.Optional(Type.String({ maxLength: 200, description: 'One range of bytes, e.g. bytes=0-1048575.' })) }),
          response: {
            200: binary('The whole file'),
            206: binary('The range asked for (Content-Range)'),
            409: ErrorSchema,
            416: ErrorSchema,
            ...commonErrors,
          },
        },
      },
      async (request, reply) => {
        const file = await services.recordings.download(request.principal, recordingId(request.params.id));
        const range = byteRange(request.headers.range, file.size);
        reply.header('Accept-Ranges', 'bytes');
        if (range === 'unsatisfiable') {
          return reply.status(416).header('Content-Range', `bytes */${file.size}`).send({ error: `The range is outside the file (${file.size} bytes)` });
        }
        const { start, end } = range ?? { start: 0, end: file.size - 1 };
        // Opened before the answer starts: a file deleted in between is a 404, not a broken 200.
        const stream = fs.createReadStream(file.path, { start, end: Math.max(start, end) });
        await new Promise<void>((resolve, reject) => {
          stream.once('open', () => resolve());
          stream.once('error', reject);
        }).catch(() => {
          throw new NotFoundError('Recording not found');
        });
        // Bytes will be sent: in the audit list. Then the database work is done: a long download holds no slot of API_CONCURRENCY.
        await file.audit().catch((error: unknown) => {
          stream.destroy();
          throw error;
        });
        leaveConcurrencyGate(reply);
        reply
          .type(file.contentType)
          .header('Content-Length', String(file.size === 0 ? 0 : end - start + 1))
          .header('Content-Disposition', `attachment; filename="recording-${file.id}.webm"`);
        if (range) reply.status(206).header('Content-Range', `bytes ${start}-${end}/${file.size}`);
        if (file.size === 0) {
          stream.destroy();
          return reply.send('');
        }
        return reply.send(stream);
      },
    );

    app.delete(
      '/api/recordings/:id',
      {
        schema: {
          tags,
          security,
          operationId: 'deleteRecording',
          summary: 'Delete a recording and its file (a recording still in progress is stopped in the call first: 409)',
          params: RecordingParamsSchema,
          response: { 204: Type.Null(), 409: ErrorSchema, ...commonErrors },
        },
      },
      async (request, reply) => {
        await services.recordings.remove(request.principal, recordingId(request.params.id));
        return reply.status(204).send(null);
      },
    );

    app.get(
      '/api/recordings/:id/audit',
      {
        schema: {
          tags,
          security,
          operationId: 'listRecordingAudit',
          summary: 'Who downloaded and deleted the recording, and when (oldest first; kept after the recording is deleted)',
          params: RecordingParamsSchema,
          response: { 200: Type.Object({ audit: Type.Array(Type.Ref('RecordingAuditEntry')) }), ...commonErrors },
        },
      },
      async (request) => ({ audit: await services.recordings.audit(request.principal, recordingId(request.params.id)) }),
    );
  };
