// Fastify validates params, query and body with Ajv against the route schemas.
// Bodies are strict (JSON types only: "true" is not a boolean, docs/design.md#rooms) and
// report every failing field at once; query strings are coerced from text.
// Ajv's errors are translated into the interface's validation objects (docs/design.md#rooms)
// with Rails' vocabulary of types.
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { UUID_PATTERN } from '../domain/support/ids.js';
import { isHttpUrl } from '../domain/support/validate.js';
import type { FieldError } from '../errors.js';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (
  ajv: Ajv,
) => Ajv;

// Instants PostgreSQL and PGlite both store and give back unchanged: JavaScript
// dates reach year 275760, but PGlite cannot write year 0 or years past 9999.
const EARLIEST = Date.UTC(1900, 0, 1);
const LATEST = Date.UTC(9999, 0, 1);

function makeAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes,
    useDefaults: false,
    removeAdditional: false,
    verbose: true,
    strict: false,
  });
  addFormats(ajv);
  // RFC 3339 date-time that is also a real instant: ajv-formats lets 23:59:60 through, which Date cannot parse.
  const dateTime = ajv.formats['date-time'] as { validate: (text: string) => boolean };
  ajv.addFormat('date-time', {
    type: 'string',
    validate: (text: string) => {
      if (!dateTime.validate(text)) return false;
      const instant = Date.parse(text);
      return instant >= EARLIEST && instant < LATEST;
    },
  });
  ajv.addFormat('uuid', UUID_PATTERN);
  // An absolute http(s) URL with a host (format uri alone accepts "http://").
  ajv.addKeyword({ keyword: 'x-http-url', type: 'string', schemaType: 'boolean', errors: false, validate: (_: boolean, data: string) => isHttpUrl(data) });
  // Length counted after trimming (docs/design.md#rooms: name 1..255 characters after trimming).
  ajv.addKeyword({
    keyword: 'x-trimmed-length',
    type: 'string',
    schemaType: 'object',
    errors: false,
    validate: (limits: { min: number; max: number }, data: string) => {
      const length = [...data.trim()].length;
      return length >= limits.min && length <= limits.max;
    },
  });
  return ajv;
}

const bodyAjv = makeAjv(false);
const textAjv = makeAjv(true);

type Schema = { properties?: Record<string, Schema>; items?: Schema };

/**
 * PostgreSQL's text type cannot hold U+0000, so a NUL in any declared field
 * would fail in the database: report it as an invalid field instead. Unknown
 * fields are ignored (docs/design.md#rooms) and never stored, so they are not checked.
 * Runs on every request, so it walks the data without building arrays on the way.
 */
function collectNulErrors(schema: Schema, data: unknown, path: string, found: ErrorObject[]): void {
  if (typeof data === 'string') {
    if (data.includes('\u0000')) found.push({ keyword: 'x-no-nul', instancePath: path, schemaPath: '', params: {}, data, parentSchema: schema });
  } else if (Array.isArray(data)) {
    if (schema.items) for (let i = 0; i < data.length; i++) collectNulErrors(schema.items, data[i], `${path}/${i}`, found);
  } else if (data !== null && typeof data === 'object' && schema.properties) {
    for (const key in schema.properties) {
      if (Object.hasOwn(data, key)) collectNulErrors(schema.properties[key]!, (data as Record<string, unknown>)[key], `${path}/${key}`, found);
    }
  }
}

const NO_ERRORS: ErrorObject[] = [];

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  const validate = (httpPart === 'body' ? bodyAjv : textAjv).compile(schema);
  // Path parameters are matched against token and id shapes instead: a NUL there names nothing (404).
  const checkNul = httpPart !== 'params';
  const check = (data: unknown) => {
    const valid = validate(data);
    const found: ErrorObject[] = validate.errors ? [...validate.errors] : [];
    if (checkNul) collectNulErrors(schema as Schema, data, '', found);
    check.errors = found.length ? found : NO_ERRORS;
    return valid && found.length === 0;
  };
  check.errors = NO_ERRORS;
  return check as unknown as ReturnType<FastifySchemaCompiler<object>>;
};

function attributeOf(error: ErrorObject): string {
  const path = error.instancePath.split('/').filter(Boolean).join('.');
  if (error.keyword === 'required') {
    const missing = (error.params as { missingProperty: string }).missingProperty;
    return path ? `${path}.${missing}` : missing;
  }
  return path;
}

function describe(error: ErrorObject, data: unknown): Omit<FieldError, 'attribute'> {
  const params = error.params as Record<string, unknown>;
  const schema = (error.parentSchema ?? {}) as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { type: 'blank', message: "can't be blank" };
    case 'type': {
      const expected = String(params.type);
      if (data === null) return { type: 'blank', message: "can't be blank" };
      if (expected.includes('integer') && typeof data === 'number') return { type: 'not_an_integer', message: 'must be an integer' };
      if (expected.includes('integer') || expected.includes('number')) return { type: 'not_a_number', message: 'is not a number' };
      if (expected.includes('boolean')) return { type: 'inclusion', message: 'must be true or false' };
      if (expected.includes('object')) return { type: 'invalid', message: 'must be a JSON object' };
      return { type: 'invalid', message: `must be a ${expected.replace(/,null$/, '')}` };
    }
    case 'minimum':
      return { type: 'greater_than_or_equal_to', message: `must be greater than or equal to ${String(params.limit)}` };
    case 'exclusiveMinimum':
      return { type: 'greater_than', message: `must be greater than ${String(params.limit)}` };
    case 'maximum':
      return { type: 'less_than_or_equal_to', message: `must be less than or equal to ${String(params.limit)}` };
    case 'exclusiveMaximum':
      return { type: 'less_than', message: `must be less than ${String(params.limit)}` };
    case 'minLength':
      return Number(params.limit) <= 1
        ? { type: 'blank', message: "can't be blank" }
        : { type: 'too_short', message: `is too short (minimum is ${String(params.limit)} characters)` };
    case 'maxLength':
      return { type: 'too_long', message: `is too long (maximum is ${String(params.limit)} characters)` };
    case 'minItems':
      return { type: 'too_short', message: `is too short (minimum is ${String(params.limit)} items)` };
    case 'maxItems':
      return { type: 'too_long', message: `is too long (maximum is ${String(params.limit)} items)` };
    case 'x-trimmed-length': {
      const { max } = schema['x-trimmed-length'] as { max: number };
      return typeof data === 'string' && data.trim() === ''
        ? { type: 'blank', message: "can't be blank" }
        : { type: 'too_long', message: `is too long (maximum is ${max} characters)` };
    }
    case 'x-no-nul':
      return { type: 'invalid', message: 'must not contain NUL characters' };
    case 'pattern':
    case 'format':
    case 'x-http-url':
      // A schema may name its own failure (e.g. a URL that is not http(s)).
      if (typeof schema['x-error-type'] === 'string') {
        return { type: schema['x-error-type'], message: String(schema['x-error-message'] ?? 'is invalid') };
      }
      return { type: 'invalid', message: error.keyword === 'format' ? `is not a valid ${String(params.format)}` : 'is invalid' };
    case 'enum':
    case 'const':
    case 'anyOf':
      return { type: 'inclusion', message: 'is not included in the list' };
    default:
      return { type: 'invalid', message: 'is invalid' };
  }
}

/** One error per attribute, in the order Ajv found them. */
export function toFieldErrors(errors: ErrorObject[], httpPart: string): FieldError[] {
  const result: FieldError[] = [];
  for (const error of errors) {
    const attribute = attributeOf(error) || (httpPart === 'body' ? 'body' : httpPart);
    if (result.some((e) => e.attribute === attribute)) continue;
    result.push({ attribute, ...describe(error, error.data) });
  }
  return result;
}
