// Fastify validates params, query and body with Ajv against the route schemas.
// Bodies are strict (JSON types only: "true" is not a boolean, DESIGN §5) and
// report every failing field at once; query strings are coerced from text.
// Ajv's errors are translated into the interface's validation objects (§2.4)
// with Rails' vocabulary of types.
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import type { FieldError } from '../errors.js';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (
  ajv: Ajv,
) => Ajv;

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
  return ajv;
}

const bodyAjv = makeAjv(false);
const textAjv = makeAjv(true);

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodyAjv : textAjv).compile(schema) as ReturnType<FastifySchemaCompiler<object>>;

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
    case 'pattern':
    case 'format':
      // A schema may name its own failure (e.g. a name of only spaces is blank).
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
