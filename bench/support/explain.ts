// EXPLAIN (ANALYZE) of the statements behind a request: which index the plan
// uses and how long it runs, to confirm a figure is the plan we meant.
import type pg from 'pg';
import { median } from './stats.js';

export interface Explained {
  label: string;
  /** "Index Scan using rooms_tenant_list_idx", ... (the plan's scan nodes). */
  scans: string[];
  /** Median execution time over a few runs, in ms. */
  ms: number;
}

export async function explain(client: pg.Client, label: string, text: string, values: unknown[], runs = 5): Promise<Explained> {
  const times: number[] = [];
  let scans: string[] = [];
  for (let i = 0; i < runs; i++) {
    const { rows } = await client.query(`explain (analyze, format json) ${text}`, values);
    const plan = (rows[0] as { 'QUERY PLAN': [{ Plan: PlanNode; 'Execution Time': number }] })['QUERY PLAN'][0];
    times.push(plan['Execution Time']);
    scans = scanNodes(plan.Plan);
  }
  return { label, scans, ms: median(times) };
}

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

function scanNodes(node: PlanNode): string[] {
  const own = /Scan/.test(node['Node Type'])
    ? [`${node['Node Type']}${node['Index Name'] ? ` using ${node['Index Name']}` : node['Relation Name'] ? ` on ${node['Relation Name']}` : ''}`]
    : [];
  return [...own, ...(node.Plans ?? []).flatMap(scanNodes)];
}
