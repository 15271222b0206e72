import { useEffect, useState } from 'preact/hooks';
import { unwrap } from '../../client/index.ts';
import { apiFor, hasScope, type Schemas } from '../api.ts';
import { ErrorBox } from '../error-box.tsx';
import type { Session } from '../session-type.ts';

/** Webhooks: the list, creation (the secret shown once), a test, the delivery log, re-enable and rotation. */

type Webhook = Schemas['Webhook'];
const EVENTS = ['signal.created', 'token.score.updated', 'cohort.convergence'] as const;

function Deliveries({ session, id, version }: { session: Session; id: string; version: number }) {
  const [rows, setRows] = useState<Schemas['WebhookDelivery'][] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    apiFor(session.key)
      .GET('/v1/webhooks/{id}/deliveries', { params: { path: { id } } })
      .then((r) => setRows(unwrap(r).data), setError);
  }, [session.key, id, version]);
  if (error !== null) return <ErrorBox error={error} />;
  if (rows === null || rows.length === 0) return <p>No deliveries yet.</p>;
  return (
    <table class="deliveries">
      <tbody>
        {rows.map((d) => (
          <tr data-event-type={d.event_type}>
            <td>{d.at}</td>
            <td>{d.event_type}</td>
            <td>{d.outcome}</td>
            <td>{d.http_status ?? ''}</td>
            <td>{d.error ?? ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function WebhooksPage({ session }: { session: Session }) {
  const [hooks, setHooks] = useState<Webhook[] | null>(null);
  const [secret, setSecret] = useState<{ id: string; secret: string } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [version, setVersion] = useState(0);
  const [note, setNote] = useState<string | null>(null);
  const canRead = hasScope(session.info, 'webhooks:read');
  const canWrite = hasScope(session.info, 'webhooks:write');
  const api = apiFor(session.key);
  const refresh = () => setVersion((v) => v + 1);

  useEffect(() => {
    if (canRead) api.GET('/v1/webhooks').then((r) => setHooks(unwrap(r).data), setError);
  }, [session.key, version]);

  /** Runs a write and shows its error, if any; the list is read again after it. */
  const act = async (write: () => Promise<void>) => {
    setError(null);
    try {
      await write();
    } catch (err) {
      setError(err);
    }
    refresh();
  };

  const create = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.target as HTMLFormElement);
    const events = EVENTS.filter((e) => form.get(e) !== null);
    void act(async () => {
      const created = unwrap(await api.POST('/v1/webhooks', { body: { url: String(form.get('url')), events } }));
      setSecret({ id: created.id, secret: created.secret });
    });
  };

  if (!canRead) return <p class="refused">This key lacks the scope webhooks:read: it cannot see webhooks.</p>;
  return (
    <section>
      <h1>Webhooks</h1>
      <form class="create-webhook" onSubmit={create}>
        <fieldset disabled={!canWrite}>
          <legend>New webhook</legend>
          <input name="url" type="url" placeholder="https://example.com/hook" aria-label="url" required />
          {EVENTS.map((e) => (
            <label>
              <input type="checkbox" name={e} defaultChecked /> {e}
            </label>
          ))}
          <button type="submit">Create</button>
        </fieldset>
        {!canWrite && <p class="refused">This key lacks the scope webhooks:write: it cannot create, test or change webhooks.</p>}
      </form>
      {secret !== null && (
        <p class="secret">
          Signing secret of {secret.id}, shown once: store it now: <code>{secret.secret}</code>
        </p>
      )}
      {note !== null && <p class="notice">{note}</p>}
      {error !== null && <ErrorBox error={error} />}
      {hooks?.map((hook) => (
        <article class="webhook" data-webhook={hook.id}>
          <h2>
            {hook.url} <small>{hook.status}</small>
          </h2>
          <p>
            {hook.events.join(', ')}
            {hook.disabled_reason !== null && ` (disabled: ${hook.disabled_reason})`}
          </p>
          <div class="actions">
            <button
              disabled={!canWrite}
              onClick={() =>
                act(async () => {
                  const r = unwrap(await api.POST('/v1/webhooks/{id}/test', { params: { path: { id: hook.id } } }));
                  setNote(r.delivered ? `webhook.test delivered: HTTP ${r.http_status}` : `webhook.test not delivered: ${r.error ?? r.http_status}`);
                })
              }
            >
              Send test
            </button>
            {hook.status === 'disabled' && (
              <button disabled={!canWrite} onClick={() => act(async () => void unwrap(await api.POST('/v1/webhooks/{id}/enable', { params: { path: { id: hook.id } } })))}>
                Re-enable
              </button>
            )}
            <button
              disabled={!canWrite}
              onClick={() =>
                act(async () => {
                  const rotated = unwrap(await api.POST('/v1/webhooks/{id}/rotate-secret', { params: { path: { id: hook.id } } }));
                  setSecret({ id: rotated.id, secret: rotated.secret });
                })
              }
            >
              Rotate secret
            </button>
            <button disabled={!canWrite} onClick={() => act(async () => void unwrap(await api.DELETE('/v1/webhooks/{id}', { params: { path: { id: hook.id } } })))}>
              Delete
            </button>
          </div>
          <Deliveries session={session} id={hook.id} version={version} />
        </article>
      ))}
    </section>
  );
}
