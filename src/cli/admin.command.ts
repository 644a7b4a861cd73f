// `parley admin <resource> <action> [options]`: one admin API call each,
// printing the JSON answer (docs/design.md#tenants-tokens-and-authentication).
import { parseArgs } from 'node:util';
import type { AdminCall } from './admin-client.js';
import { UsageError } from './errors.js';

type Options = Record<string, { type: 'string' }>;

/** Parses the options of one action; every listed option is a string, `required` ones must be present. */
function options<R extends string, O extends string>(args: string[], required: readonly R[], optional: readonly O[] = []) {
  const spec: Options = {};
  for (const name of [...required, ...optional]) spec[name] = { type: 'string' };
  let parsed;
  try {
    parsed = parseArgs({ args, options: spec, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  for (const name of required) {
    if (parsed.values[name] === undefined) throw new UsageError(`--${name} is required`);
  }
  return { values: parsed.values as Record<R, string> & Partial<Record<O, string>>, positionals: parsed.positionals };
}

const segment = (value: string) => encodeURIComponent(value);

function noPositionals(positionals: string[]) {
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
}

export async function adminCommand(args: string[], call: AdminCall): Promise<unknown> {
  const [resource, action, ...rest] = args;
  const command = `${resource ?? ''} ${action ?? ''}`.trim();
  switch (command) {
    case 'tenants create': {
      const { values, positionals } = options(rest, ['name'], ['default-return-url', 'timezone']);
      noPositionals(positionals);
      return call('POST', '/admin/tenants', {
        name: values.name,
        ...(values['default-return-url'] !== undefined ? { default_return_url: values['default-return-url'] } : {}),
        ...(values.timezone !== undefined ? { timezone: values.timezone } : {}),
      });
    }
    case 'tenants list': {
      noPositionals(options(rest, []).positionals);
      return call('GET', '/admin/tenants');
    }
    case 'organizations create': {
      const { values, positionals } = options(rest, ['tenant', 'name']);
      noPositionals(positionals);
      return call('POST', `/admin/tenants/${segment(values.tenant)}/organizations`, { name: values.name });
    }
    case 'doctors create': {
      const { values, positionals } = options(rest, ['organization', 'name']);
      noPositionals(positionals);
      return call('POST', `/admin/organizations/${segment(values.organization)}/doctors`, { name: values.name });
    }
    case 'tokens create': {
      const { values, positionals } = options(rest, ['tenant'], ['organization', 'label']);
      noPositionals(positionals);
      return call('POST', `/admin/tenants/${segment(values.tenant)}/tokens`, {
        ...(values.organization !== undefined ? { organization_id: values.organization } : {}),
        ...(values.label !== undefined ? { label: values.label } : {}),
      });
    }
    case 'tokens revoke': {
      const { positionals } = options(rest, []);
      if (positionals.length !== 1) throw new UsageError('tokens revoke takes one token id');
      await call('DELETE', `/admin/tokens/${segment(positionals[0]!)}`);
      return { id: positionals[0], revoked: true };
    }
    case 'webhooks list': {
      const { values, positionals } = options(rest, ['tenant']);
      noPositionals(positionals);
      return call('GET', `/admin/tenants/${segment(values.tenant)}/webhook_endpoints`);
    }
    case 'features set': {
      const { values, positionals } = options(rest, [], ['tenant', 'organization']);
      const [feature, state] = positionals;
      if (positionals.length !== 2 || !['on', 'off', 'clear'].includes(state!)) {
        throw new UsageError('features set takes a feature and on, off or clear: features set permanent_rooms on --tenant ID');
      }
      if ((values.tenant === undefined) === (values.organization === undefined)) throw new UsageError('give exactly one of --tenant and --organization');
      if (state === 'clear' && values.tenant !== undefined) throw new UsageError('only an organization override can be cleared; use on or off for a tenant');
      const enabled = state === 'clear' ? null : state === 'on';
      const owner = values.tenant !== undefined ? `tenants/${segment(values.tenant)}` : `organizations/${segment(values.organization!)}`;
      return call('PUT', `/admin/${owner}/features/${segment(feature!)}`, { enabled });
    }
    case 'sfu list': {
      // Each Janus instance, whether it answers, and its rooms (docs/design.md, "Group calls through an SFU").
      noPositionals(options(rest, []).positionals);
      return call('GET', '/admin/sfu');
    }
    default:
      throw new UsageError(command ? `unknown admin command "${command}"` : 'admin needs a command, e.g. parley admin tenants list');
  }
}
