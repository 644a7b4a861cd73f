// The participant pages (docs/design.md#join-pages-and-the-call): the join page of every join link,
// the page after the call (/left, the default return URL), the feedback a
// participant gives after the call, and the front end's files.
import { randomBytes } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { cleanDisplayName, settingsOf } from '../../domain/participation/participation.service.js';
import { acceptsParticipants } from '../../domain/rooms/room-lifecycle.js';
import { MAX_FEEDBACK_LENGTH } from '../../domain/feedback/feedback.service.js';
import { chooseLanguage, directionOf } from '../../shared/i18n/languages.js';
import { catalogueFor, translate } from '../../shared/i18n/translate.js';
import type { JoinPageData } from '../../shared/join-page-data.js';
import { iceServersFor } from '../../domain/participation/turn-credentials.js';
import type { Services } from '../../services.js';
import { isDatabaseUnavailable } from '../error-handler.js';
import { ErrorSchema, ValidationErrorsSchema } from '../schemas.js';
import { escapeHtml, messagePage, NON_PAGE_HEADERS, pageHeaders, renderPage } from './page-html.js';
import { loadWebBuild, type WebBuild } from './web-assets.js';

/** How often a join page answered while the database is away loads again. */
const RETRY_PAGE_SECONDS = 3;

/**
 * The join page's network data. Its TURN user is the page's own, never
 * shared: the call's first connection may keep its relay for the whole call,
 * and a TURN server's per-user quota (coturn `user-quota`) must not count
 * every page's under one name.
 */
function pageNetwork(services: Services): JoinPageData['network'] {
  const { config } = services;
  const user = `page-${randomBytes(8).toString('hex')}`;
  const withTurn = config.turnSecret !== null && config.turnUrls.length > 0;
  return {
    iceServers: iceServersFor(config, user, services.clock.now()),
    iceTransportPolicy: config.iceTransportPolicy,
    ttlSeconds: withTurn ? config.turnTtlSeconds : null,
  };
}

/** The first value of a query parameter (a repeated one takes the first). */
function queryValue(query: unknown, name: string): string | undefined {
  const value = (query as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(value) ? value[0] : value;
}

export const joinRoutes =
  (services: Services, build: WebBuild | null = loadWebBuild()): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { publicUrl } = services.config;
    // Every answer of these routes, errors included; the pages then set their own policy.
    app.addHook('onRequest', async (_request, reply) => {
      reply.headers(NON_PAGE_HEADERS);
    });

    /** The language of a page: ?lang=, else the room's locale, else the browser's, else English. */
    const languageOf = (request: FastifyRequest, roomLocale: string | null = null) =>
      chooseLanguage({ query: queryValue(request.query, 'lang'), roomLocale, acceptLanguage: request.headers['accept-language'] });
    const invalidLink = (request: FastifyRequest) => messagePage(build, languageOf(request), 'notFound', 'not-found');

    // The database restarting: a person who opens their link meanwhile gets a page, not an error, and it
    // loads again by itself (the Refresh header needs no script) until the join screen comes (docs/deploy.md).
    const unavailable = (request: FastifyRequest) => messagePage(build, languageOf(request), 'restarting', 'unavailable');

    app.get('/join/:token', { schema: { hide: true, params: Type.Object({ token: Type.String({ maxLength: 200 }) }) } }, async (request, reply) => {
      pageHeaders(reply, publicUrl);
      let found;
      try {
        const access = await services.participation.resolve(request.params.token);
        found = access && { ...access, frameAncestors: await services.tenants.embeddingOrigins(access.room.tenant_id, access.room.organization_id) };
      } catch (error) {
        if (!isDatabaseUnavailable(error)) throw error;
        return reply.status(503).header('retry-after', String(RETRY_PAGE_SECONDS)).header('refresh', String(RETRY_PAGE_SECONDS)).send(unavailable(request));
      }
      if (!found) return reply.status(404).send(invalidLink(request));
      const { room, role } = found;
      const lang = languageOf(request, room.locale);
      // The room's pages (join and closed) may be embedded where its tenant (narrowed by its organization) allows; an unknown link nowhere.
      pageHeaders(reply, publicUrl, found.frameAncestors);
      if (!acceptsParticipants(room.status)) return reply.status(410).send(messagePage(build, lang, 'closed', 'room-closed'));
      if (!build) return reply.status(503).send(messagePage(null, lang, 'unavailable'));
      // ?name= pre-fills the name over the room's display name.
      const given = queryValue(request.query, 'name');
      const preset = role === 'host' ? room.host_display_name : room.guest_display_name;
      const data: JoinPageData = {
        page: 'join',
        joinToken: request.params.token,
        roomName: room.name,
        role,
        displayName: cleanDisplayName(given ?? '', preset ?? ''),
        settings: settingsOf(room),
        lang,
        dir: directionOf(lang),
        catalogue: catalogueFor(lang),
        network: pageNetwork(services),
        embed: { origins: found.frameAncestors, minimal: ['', '1', 'true'].includes(queryValue(request.query, 'minimal') ?? 'no') },
      };
      return reply.send(
        renderPage({
          lang,
          title: room.name,
          build,
          data,
          body: `<h1 class="room-name">${escapeHtml(room.name)}</h1><noscript><p>${escapeHtml(translate(lang, 'page.noScript'))}</p></noscript>`,
        }),
      );
    });

    // A join link mangled on its way (cut, extra path, longer than any token): the same page as an unknown one.
    app.get('/join/*', { schema: { hide: true } }, async (request, reply) => pageHeaders(reply, publicUrl).status(404).send(invalidLink(request)));

    app.get('/left', { schema: { hide: true } }, async (request, reply) =>
      pageHeaders(reply, publicUrl).send(messagePage(build, languageOf(request), 'left', 'left')),
    );

    app.post(
      '/feedback',
      {
        schema: {
          hide: true,
          body: Type.Object({
            participant_token: Type.String({ minLength: 1, maxLength: 100 }),
            rating: Type.Union([Type.Literal('good'), Type.Literal('neutral'), Type.Literal('bad')], {
              'x-error-type': 'inclusion',
              'x-error-message': 'must be good, neutral or bad',
            }),
            feedback: Type.Optional(Type.Union([Type.String({ maxLength: MAX_FEEDBACK_LENGTH * 2 }), Type.Null()])),
          }),
          response: { 201: Type.Object({ status: Type.Literal('recorded') }), 400: ValidationErrorsSchema, 404: ErrorSchema, 409: ErrorSchema },
        },
      },
      async (request, reply) => {
        const { participant_token, rating, feedback } = request.body;
        const recorded = await services.participation.submitFeedback(participant_token, rating, feedback ?? null);
        if (!recorded) return reply.status(409).send({ error: 'Feedback for this call was given already' });
        return reply.status(201).header('Cache-Control', 'no-store').send({ status: 'recorded' as const });
      },
    );

    app.get('/assets/:file', { schema: { hide: true, params: Type.Object({ file: Type.String({ maxLength: 200 }) }) } }, async (request, reply) => {
      const asset = build?.files.get(request.params.file);
      if (!asset) return reply.status(404).type('text/plain; charset=utf-8').send('Not found');
      reply
        .header('Cache-Control', 'public, max-age=31536000, immutable')
        .header('Vary', 'Accept-Encoding')
        .type(asset.type);
      if (asset.gzip && /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) {
        return reply.header('Content-Encoding', 'gzip').send(asset.gzip);
      }
      return reply.send(asset.body);
    });
  };
