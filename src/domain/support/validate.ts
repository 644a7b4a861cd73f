// Small checks shared by the services; the route schemas do the structural
// validation, these the rules a schema cannot express.
import type { FieldError } from '../../errors.js';

const MAX_URL_LENGTH = 2048;

export function isHttpUrl(value: string): boolean {
  if (value.length > MAX_URL_LENGTH) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** Collects field errors so that every failing field is reported at once. */
export class FieldErrors {
  readonly list: FieldError[] = [];
  add(attribute: string, type: string, message: string): void {
    if (!this.list.some((e) => e.attribute === attribute)) this.list.push({ attribute, type, message });
  }
  has(attribute: string): boolean {
    return this.list.some((e) => e.attribute === attribute);
  }
}

export function checkName(errors: FieldErrors, attribute: string, value: string | undefined, max: number): string {
  const trimmed = (value ?? '').trim();
  if (trimmed === '') errors.add(attribute, 'blank', "can't be blank");
  else if ([...trimmed].length > max) errors.add(attribute, 'too_long', `is too long (maximum is ${max} characters)`);
  return trimmed;
}

export function checkUrl(errors: FieldErrors, attribute: string, value: string | null | undefined): void {
  if (value === null || value === undefined) return;
  if (value.length > MAX_URL_LENGTH) errors.add(attribute, 'too_long', `is too long (maximum is ${MAX_URL_LENGTH} characters)`);
  else if (!isHttpUrl(value)) errors.add(attribute, 'invalid', 'must be an absolute http or https URL');
}
