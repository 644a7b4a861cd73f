// Room feedback (docs/api.md), for Instance tokens only (403 otherwise).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { FEEDBACK_FORBIDDEN } from '../../domain/feedback/feedback.service.js';
import type { Services } from '../../services.js';
import { instanceTokensOnly } from '../hooks/instance-only.js';
import { pageRequest, setPageHeaders } from '../pagination.js';
import { ErrorSchema, FeedbackSummarySchema, PageQuerySchema, ValidationErrorsSchema, commonErrors } from '../schemas.js';

// Format is checked by the service (a real calendar date), so the error names the attribute.
const day = (description: string) => Type.Optional(Type.String({ maxLength: 10, description }));
const rating = Type.Optional(Type.Union([Type.Literal('good'), Type.Literal('neutral'), Type.Literal('bad')]));
const errors = { 400: ValidationErrorsSchema, 403: ErrorSchema, ...commonErrors };

export const feedbackRoutes =
  (services: Services): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { publicUrl } = services.config;
    const tags = ['room feedbacks'];
    const security = [{ bearer: [] }];

    app.addHook('preValidation', instanceTokensOnly(FEEDBACK_FORBIDDEN));

    app.get(
      '/api/room_feedbacks',
      {
        schema: {
          tags,
          security,
          operationId: 'listRoomFeedbacks',
          summary: 'List room feedbacks (Instance token only)',
          querystring: Type.Object({
            ...PageQuerySchema,
            rating,
            from: day('YYYY-MM-DD in the tenant timezone: created on or after this day.'),
            to: day('YYYY-MM-DD in the tenant timezone: created on or before the end of this day.'),
          }),
          response: { 200: Type.Object({ room_feedbacks: Type.Array(Type.Ref('RoomFeedback')) }), ...errors },
        },
      },
      async (request, reply) => {
        const { rating, from, to } = request.query;
        const result = await services.feedback.list(request.principal, { rating, from, to }, pageRequest(request.query));
        setPageHeaders(request, reply, publicUrl, result);
        return {
          room_feedbacks: result.feedbacks.map((row) => ({
            room_token: row.room_token,
            rating: row.rating,
            feedback: row.feedback ?? undefined,
            created_at: row.created_at.toISOString(),
          })),
        };
      },
    );

    app.get(
      '/api/room_feedbacks/summary',
      {
        schema: {
          tags,
          security,
          operationId: 'summarizeRoomFeedbacks',
          summary: 'Count feedbacks by rating (Instance token only)',
          querystring: Type.Object({ from: day('YYYY-MM-DD, inclusive.'), to: day('YYYY-MM-DD, inclusive to the end of the day.') }),
          response: { 200: FeedbackSummarySchema, ...errors },
        },
      },
      async (request) => services.feedback.summary(request.principal, request.query),
    );
  };
