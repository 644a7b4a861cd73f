// Property tests replay from a seed: a failure's summary line (scripts/test.mjs)
// names the seed fast-check drew, and FC_SEED=<seed> runs every property from
// it again, so the counterexample comes back from the log alone.
import fc from 'fast-check';

const seed = process.env.FC_SEED;
if (seed !== undefined && seed !== '') {
  if (!/^-?\d+$/.test(seed)) throw new Error(`FC_SEED must be an integer, not ${JSON.stringify(seed)}`);
  fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: Number(seed) });
}
