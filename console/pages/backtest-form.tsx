import { useState } from 'preact/hooks';
import { unwrap, type operations } from '../../client/index.ts';
import { apiFor, type Schemas } from '../api.ts';
import { ErrorBox } from '../error-box.tsx';
import { HORIZONS } from '../research-values.ts';
import type { Session } from '../session-type.ts';
import { useAnswer } from '../use-answer.ts';
import { CHAINS } from './tokens.tsx';

/**
 * The backtest form: entry rules (all must hold), horizon, cooldown, dead-token policy and
 * universe. Fields left empty are not sent, so the API's defaults apply and the run's spec
 * shows them filled in.
 */

type Body = operations['createBacktest']['requestBody']['content']['application/json'];
type Rule = Schemas['ScanRule'];
type Run = Schemas['BacktestRun'];
const MAX_RULES = 12;
const DEFAULT_RULE: Rule = { field: 'momentum', op: '>=', value: 60 };
const DEFAULT_HORIZON: Body['horizon'] = '24h';
// The first policy is the API's default, so the select starts on it.
const DEAD_TOKEN_POLICIES = {
  last_price: 'valued at their last price',
  total_loss: 'valued as a total loss (−100%)',
  exclude: 'left out (counted, with a warning)',
} satisfies Record<NonNullable<Body['dead_token_policy']>, string>;

/** The rule fields with their units, as GET /v1/models documents them. */
async function ruleFields(session: Session): Promise<{ name: string; unit: string }[]> {
  const models = unwrap(await apiFor(session.key).GET('/v1/models'));
  return [...models.scores.models.map((m) => ({ name: m.score, unit: 'score 0–100' })), ...models.features.definitions.map((f) => ({ name: f.name, unit: f.unit }))];
}

function bodyOf(form: FormData): Body {
  const text = (name: string) => String(form.get(name) ?? '').trim();
  const ops = form.getAll('op');
  const values = form.getAll('value');
  const chains = form.getAll('chain').map(String) as NonNullable<NonNullable<Body['universe']>['chains']>;
  const minLiquidity = text('min_liquidity_usd');
  const universe = {
    ...(chains.length > 0 && { chains }),
    ...(minLiquidity !== '' && { min_liquidity_usd: Number(minLiquidity) }),
  };
  return {
    rules: form.getAll('field').map((field, i) => ({ field: String(field) as Rule['field'], op: String(ops[i]) as Rule['op'], value: Number(values[i]) })),
    horizon: text('horizon') as Body['horizon'],
    ...(text('name') !== '' && { name: text('name') }),
    ...(text('cooldown') !== '' && { cooldown: text('cooldown') as Body['cooldown'] }),
    dead_token_policy: text('dead_token_policy') as Body['dead_token_policy'],
    ...(Object.keys(universe).length > 0 && { universe }),
  };
}

export function BacktestForm({ session, refused, onQueued }: { session: Session; refused: string | null; onQueued: (run: Run) => void }) {
  const models = useAnswer(() => ruleFields(session), [session.key]);
  // One key per rule row, so a removed row takes its own inputs with it.
  const [rows, setRows] = useState([0]);
  const [error, setError] = useState<unknown>(null);

  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    try {
      onQueued(unwrap(await apiFor(session.key).POST('/v1/quant/backtests', { body: bodyOf(new FormData(event.target as HTMLFormElement)) })));
    } catch (err) {
      setError(err);
    }
  };

  if (models.error !== null) return <ErrorBox error={models.error} />;
  if (models.data === null) return <p>Loading…</p>;
  const fields = models.data;
  return (
    <form class="backtest" onSubmit={submit}>
      <fieldset disabled={refused !== null}>
        <legend>Backtest</legend>
        <label>
          Name <input name="name" maxLength={80} placeholder="optional" />
        </label>
        <p>Enter when all of these hold (fractions for percentages: 0.05 is 5%):</p>
        {rows.map((row, i) => (
          <div class="rule" key={row}>
            <select name="field" aria-label="rule field">
              {fields.map((f) => (
                <option value={f.name} selected={f.name === DEFAULT_RULE.field}>
                  {f.name} ({f.unit})
                </option>
              ))}
            </select>
            <select name="op" aria-label="operator">
              {['>=', '>', '<=', '<'].map((op) => (
                <option value={op} selected={op === DEFAULT_RULE.op}>
                  {op}
                </option>
              ))}
            </select>
            <input name="value" type="number" step="any" defaultValue={String(DEFAULT_RULE.value)} required aria-label="value" />
            {rows.length > 1 && (
              <button type="button" class="remove-rule" onClick={() => setRows(rows.filter((r) => r !== row))}>
                Remove
              </button>
            )}
            {i === rows.length - 1 && rows.length < MAX_RULES && (
              <button type="button" class="add-rule" onClick={() => setRows([...rows, row + 1])}>
                And…
              </button>
            )}
          </div>
        ))}
        <div class="controls">
          <label>
            Horizon{' '}
            <select name="horizon">
              {HORIZONS.map((h) => (
                <option value={h} selected={h === DEFAULT_HORIZON}>
                  {h}
                </option>
              ))}
            </select>
          </label>
          <label>
            Cooldown{' '}
            <select name="cooldown">
              <option value="">the horizon</option>
              {HORIZONS.map((h) => (
                <option value={h}>{h}</option>
              ))}
            </select>
          </label>
          <label>
            Dead tokens{' '}
            <select name="dead_token_policy">
              {Object.entries(DEAD_TOKEN_POLICIES).map(([policy, label]) => (
                <option value={policy}>{label}</option>
              ))}
            </select>
          </label>
        </div>
        <div class="controls">
          <span>Universe: chains (none checked: all)</span>
          {CHAINS.map((c) => (
            <label>
              <input type="checkbox" name="chain" value={c} /> {c}
            </label>
          ))}
          <label>
            min liquidity (USD) <input name="min_liquidity_usd" type="number" min="0" step="any" placeholder="any" />
          </label>
        </div>
        <button type="submit">Run</button>
      </fieldset>
      {refused !== null && <p class="refused">{refused}</p>}
      {error !== null && <ErrorBox error={error} />}
    </form>
  );
}
