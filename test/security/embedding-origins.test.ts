// Who may embed a room's join page, and whom the page talks to (docs/design.md,
// "Embedding"; docs/embedding.md, "Security"): the tenant's frame-ancestors,
// narrowed per organization through the admin API. The pages' CSP and the
// origins in the page's data (the only ones its postMessage bridge uses) are
// one list, and an organization can never widen its tenant's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebBuild } from '../../src/http/routes/web-assets.js';
import { ADMIN_TOKEN, roomBody } from '../helpers/app.js';
import { startRealtimeServer, type RealtimeServer } from '../helpers/realtime-server.js';

const build: WebBuild = {
  script: '/assets/call-abc.js',
  styles: [],
  files: new Map([['call-abc.js', { body: Buffer.from('console.log(1)'), gzip: null, type: 'text/javascript; charset=utf-8' }]]),
};

const APP = 'https://app.example.com';
const PORTAL = 'https://portal.example:8443';
const DEV = 'http://localhost:5173';

let server: RealtimeServer;
let tenantId: string;

beforeAll(async () => {
  server = await startRealtimeServer({ PARLEY_ADMIN_TOKEN: ADMIN_TOKEN }, build);
  tenantId = (await server.services.tenants.listTenants()).find((t) => t.name === 'Realtime')!.id;
});
afterAll(() => server?.close());

type Method = 'GET' | 'PUT';
const admin = (method: Method, url: string, payload?: unknown, token = ADMIN_TOKEN) =>
  server.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload !== undefined ? { payload: payload as object } : {}) });
const setTenant = (list: string[]) => admin('PUT', `/admin/tenants/${tenantId}/frame-ancestors`, { frame_ancestors: list });
const orgSetting = (id: string) => `/admin/organizations/${id}/frame-ancestors`;
const dataOf = (html: string) => JSON.parse(/<script type="application\/json" id="parley-data">(.*?)<\/script>/s.exec(html)![1]!);

/** An organization of the tenant and a room of it (made with its own Organization token). */
async function organizationRoom(name: string) {
  const org = await server.services.tenants.createOrganization(tenantId, { name });
  const { token } = await server.services.tenants.issueToken(tenantId, { organization_id: org.id });
  const res = await server.app.inject({ method: 'POST', url: '/api/rooms', headers: { authorization: `Bearer ${token}` }, payload: roomBody() });
  expect(res.statusCode).toBe(201);
  return { org, room: res.json() as Record<string, string> };
}

/** What the room's join page allows: its CSP's frame-ancestors, and the origins its script talks to. */
async function pageOrigins(room: Record<string, string>, query = '') {
  const res = await server.app.inject({ method: 'GET', url: `/join/${room.guest_token}${query}` });
  expect(res.statusCode).toBe(200);
  const csp = String(res.headers['content-security-policy']);
  const frameAncestors = /frame-ancestors ([^;]*)/.exec(csp)![1]!;
  const data = dataOf(res.body);
  return { frameAncestors, talksTo: data.embed.origins as string[], minimal: data.embed.minimal as boolean };
}

describe('an organization narrows its tenant\u2019s frame-ancestors', () => {
  it('to origins of the tenant\u2019s list only; the CSP and the page data follow, other rooms keep the tenant\u2019s list', async () => {
    expect((await setTenant([APP, PORTAL, DEV])).statusCode).toBe(200);
    const north = await organizationRoom('North');
    const south = await organizationRoom('South');
    const tenantRoom = await server.createRoom();

    // No narrowing yet: the tenant's list everywhere.
    expect((await admin('GET', orgSetting(north.org.id))).json()).toEqual({ frame_ancestors: null, effective_frame_ancestors: [APP, PORTAL, DEV] });
    expect(await pageOrigins(north.room)).toEqual({ frameAncestors: `${APP} ${PORTAL} ${DEV}`, talksTo: [APP, PORTAL, DEV], minimal: false });

    const put = await admin('PUT', orgSetting(north.org.id), { frame_ancestors: ['HTTPS://Portal.Example:8443/', DEV] });
    expect(put.statusCode).toBe(200);
    expect(put.json()).toEqual({ frame_ancestors: [PORTAL, DEV], effective_frame_ancestors: [PORTAL, DEV] });
    expect((await admin('GET', orgSetting(north.org.id))).json()).toEqual(put.json());
    expect(await pageOrigins(north.room)).toMatchObject({ frameAncestors: `${PORTAL} ${DEV}`, talksTo: [PORTAL, DEV] });
    // Another organization, and a room of no organization: untouched.
    expect(await pageOrigins(south.room)).toMatchObject({ frameAncestors: `${APP} ${PORTAL} ${DEV}`, talksTo: [APP, PORTAL, DEV] });
    expect(await pageOrigins(tenantRoom)).toMatchObject({ frameAncestors: `${APP} ${PORTAL} ${DEV}`, talksTo: [APP, PORTAL, DEV] });

    // The tenant drops an origin: gone for the organization too, though its own list still names it.
    expect((await setTenant([APP, DEV])).statusCode).toBe(200);
    expect((await admin('GET', orgSetting(north.org.id))).json()).toEqual({ frame_ancestors: [PORTAL, DEV], effective_frame_ancestors: [DEV] });
    expect(await pageOrigins(north.room)).toMatchObject({ frameAncestors: DEV, talksTo: [DEV] });

    // An empty list: nobody embeds the organization's rooms, and their pages talk to nobody.
    expect((await admin('PUT', orgSetting(north.org.id), { frame_ancestors: [] })).json()).toEqual({ frame_ancestors: [], effective_frame_ancestors: [] });
    expect(await pageOrigins(north.room)).toMatchObject({ frameAncestors: "'none'", talksTo: [] });

    // null: the tenant's list again.
    expect((await admin('PUT', orgSetting(north.org.id), { frame_ancestors: null })).json()).toEqual({ frame_ancestors: null, effective_frame_ancestors: [APP, DEV] });
    expect(await pageOrigins(north.room)).toMatchObject({ frameAncestors: `${APP} ${DEV}`, talksTo: [APP, DEV] });
  });

  it('never widens it: an origin the tenant does not list is 400 on frame_ancestors, and nothing is stored', async () => {
    expect((await setTenant([APP])).statusCode).toBe(200);
    const { org, room } = await organizationRoom('West');
    expect((await admin('PUT', orgSetting(org.id), { frame_ancestors: [APP] })).statusCode).toBe(200);
    const res = await admin('PUT', orgSetting(org.id), { frame_ancestors: [APP, 'https://evil.example'] });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual([expect.objectContaining({ attribute: 'frame_ancestors', type: 'inclusion', message: expect.stringContaining('https://evil.example') })]);
    expect((await admin('GET', orgSetting(org.id))).json()).toEqual({ frame_ancestors: [APP], effective_frame_ancestors: [APP] });
    expect(await pageOrigins(room)).toMatchObject({ frameAncestors: APP, talksTo: [APP] });
  });

  it('validates as the tenant\u2019s list does, answers 404 for an unknown organization and 401 without the admin token', async () => {
    const { org } = await organizationRoom('East');
    for (const bad of [['*'], ['https://a.example;script-src *'], 'https://a.example', [1], Array.from({ length: 11 }, (_, i) => `https://a${i}.example`)]) {
      const res = await admin('PUT', orgSetting(org.id), { frame_ancestors: bad });
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
    }
    expect((await admin('PUT', orgSetting(org.id), {})).statusCode).toBe(400);
    expect((await admin('GET', orgSetting(org.id))).json().frame_ancestors).toBeNull();
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', tenantId]) {
      expect((await admin('GET', orgSetting(id))).statusCode).toBe(404);
      expect((await admin('PUT', orgSetting(id), { frame_ancestors: [] })).statusCode).toBe(404);
    }
    expect((await admin('GET', orgSetting(org.id), undefined, server.token)).statusCode).toBe(401);
    expect((await admin('PUT', orgSetting(org.id), { frame_ancestors: [] }, 'x'.repeat(40))).statusCode).toBe(401);
  });

  it('passes ?minimal=1 to the page (no header, for small boxes)', async () => {
    const room = await server.createRoom();
    expect((await pageOrigins(room, '?minimal=1')).minimal).toBe(true);
    expect((await pageOrigins(room, '?minimal')).minimal).toBe(true);
    expect((await pageOrigins(room, '?minimal=0')).minimal).toBe(false);
  });
});
