// Every language's catalogue, for the server: it sends a page only the one it speaks.
import { en, type Catalogue } from '../en.js';
import type { Language } from '../languages.js';
import { ar } from './ar.js';
import { de } from './de.js';
import { es } from './es.js';
import { fr } from './fr.js';
import { it } from './it.js';
import { nl } from './nl.js';
import { pl } from './pl.js';
import { pt } from './pt.js';
import { tr } from './tr.js';

export const CATALOGUES: Record<Language, Catalogue> = { en, de, fr, es, it, nl, pt, pl, tr, ar };
