// Redocly's recommended rules over an OpenAPI document, through the
// programmatic API of @redocly/openapi-core (what `redocly lint` runs).
import { createConfig, lintFromString } from '@redocly/openapi-core';

export interface LintProblem {
  rule: string;
  severity: string;
  message: string;
  where: string;
}

export async function lintOpenapi(document: unknown): Promise<LintProblem[]> {
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: 'openapi.json', config });
  return problems.map((p) => ({
    rule: p.ruleId,
    severity: p.severity,
    message: p.message,
    where: p.location.map((l) => l.pointer).join(' '),
  }));
}
