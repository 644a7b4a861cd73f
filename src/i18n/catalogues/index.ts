// Every language's catalogue, for the server: it sends a page only the one it speaks.
import { en, type Catalogue } from '../en.js';
import type { Language } from '../languages.js';

export const CATALOGUES: Record<Language, Catalogue> = { en, de: en, fr: en, es: en, it: en, nl: en, pt: en, pl: en, tr: en, ar: en };
