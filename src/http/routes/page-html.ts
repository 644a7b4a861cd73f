// The HTML of the participant pages: a small server-rendered shell, every
// value HTML-escaped, data for the script in a JSON block (never inline code),
// and headers that forbid everything the pages do not need.
import type { FastifyReply } from 'fastify';
import { directionOf, type Language } from '../../shared/i18n/languages.js';
import { translate } from '../../shared/i18n/translate.js';
import type { WebBuild } from './web-assets.js';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** JSON that is safe inside <script type="application/json">: nothing in it can end the element. */
export function jsonForHtml(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Every other answer of the participant side (feedback JSON, files, errors):
 * nothing in it runs, nothing embeds it, and join URLs never leak as a referrer.
 */
export const NON_PAGE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

/**
 * The call needs camera, microphone and screen capture from its own origin
 * (inside an integrator's iframe too: the iframe's `allow` attribute delegates
 * them, and this keeps them to our document); everything else a page could
 * ask for is switched off.
 */
const PERMISSIONS_POLICY = [
  'camera=(self)',
  'microphone=(self)',
  'display-capture=(self)',
  'fullscreen=(self)',
  'autoplay=(self)',
  'geolocation=()',
  'payment=()',
  'usb=()',
  'serial=()',
  'hid=()',
  'midi=()',
].join(', ');

/**
 * Headers of an HTML page. `frameAncestors`: the origins that may embed it
 * (the room tenant's setting, already canonical and header-safe); none by default.
 */
export function pageHeaders(reply: FastifyReply, publicUrl: string, frameAncestors: readonly string[] = []): FastifyReply {
  const ws = new URL(publicUrl);
  ws.protocol = ws.protocol === 'https:' ? 'wss:' : 'ws:';
  return reply
    .header(
      'Content-Security-Policy',
      [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "media-src 'self' blob: mediastream:",
        `connect-src 'self' ${ws.origin}`,
        "base-uri 'none'",
        "form-action 'self'",
        `frame-ancestors ${frameAncestors.length ? frameAncestors.join(' ') : "'none'"}`,
      ].join('; '),
    )
    .header('X-Content-Type-Options', 'nosniff')
    // Join URLs hold tokens: no page may pass them on as a referrer.
    .header('Referrer-Policy', 'no-referrer')
    .header('Permissions-Policy', PERMISSIONS_POLICY)
    .header('Cache-Control', 'no-store')
    .type('text/html; charset=utf-8');
}

export function renderPage(options: { lang: Language; title: string; body: string; build: WebBuild | null; data?: unknown }): string {
  const { lang, title, body, build, data } = options;
  const styles = (build?.styles ?? []).map((href) => `<link rel="stylesheet" href="${escapeHtml(href)}">`).join('');
  const script = data !== undefined && build ? `<script type="module" src="${escapeHtml(build.script)}"></script>` : '';
  const dataBlock = data !== undefined ? `<script type="application/json" id="parley-data">${jsonForHtml(data)}</script>` : '';
  return (
    `<!doctype html><html lang="${lang}" dir="${directionOf(lang)}"><head><meta charset="utf-8">` +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    '<meta name="robots" content="noindex">' +
    `<title>${escapeHtml(title)} · Parley</title>${styles}${script}</head>` +
    `<body><main id="app" class="page">${body}</main>${dataBlock}</body></html>`
  );
}

/** A page with one message and no form: unknown link, closed room, after the call. */
export function messagePage(build: WebBuild | null, lang: Language, page: 'notFound' | 'closed' | 'left' | 'unavailable' | 'restarting', testId?: string): string {
  const title = translate(lang, `page.${page}.title`);
  const text = translate(lang, `page.${page}.text`);
  const attr = testId ? ` data-testid="${escapeHtml(testId)}"` : '';
  return renderPage({ lang, title, build, body: `<section class="card message"${attr}><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></section>` });
}
